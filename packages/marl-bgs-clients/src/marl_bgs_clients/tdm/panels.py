"""The Replay Viewer's analytical panels, as plain data: the game, the teams' metrics up to a tick,
who did what to whom, and what one agent saw, chose and had repaired.

Every number comes from the replay's arrays or from evaluation's metrics summed up to the tick
(`marl_bgs_eval.tdm.replays.metrics`), so the panels at the last tick show the game's results row.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from marl_bgs.core.arena import MOVE_NAMES
from marl_bgs.tdm.actions import COMBAT_NAMES
from marl_bgs.tdm.classes import CLASS_NAMES
from marl_bgs.tdm.tables import REL_TO_ABS
from marl_bgs_clients.tdm.render import slot_name
from marl_bgs_eval.array_zip import Replay
from marl_bgs_eval.tdm.legend import result_text

TEAM_MEASURES = (
    ("kills", "kills"), ("deaths", "deaths"), ("damage dealt", "damage_dealt"),
    ("healing done", "healing_done"), ("Basics", "basics_used"), ("Ultimates", "ultimates_used"),
    ("Red Zone deaths", "red_zone_deaths"), ("rejected actions", "rejected_actions"),
)  # fmt: skip


def game_lines(replay: Replay) -> list[str]:
    """Who played whom where, and how it ended."""
    h = replay.header
    return [
        f"game {h['game']}  map {h['map']} {h['map_name']}",
        f"A ({h['a_spawn']}): {h['system_a']}  {h['roster_a']}",
        f"B: {h['system_b']}  {h['roster_b']}",
        f"result: {result_text(h)} in {h['ticks']} ticks",
    ]


Row = dict[str, float]  # metric column -> value summed up to a tick


def upto(table: pd.DataFrame, tick: int) -> Row | None:
    """The metrics summed over the ticks before state `tick` (None before the first tick)."""
    return None if tick == 0 else {str(k): float(v) for k, v in table.iloc[tick - 1].items()}


def team_rows(row: Row | None) -> list[tuple[str, float, float]]:
    """(measure, team A, team B) up to the tick."""
    get = lambda side, col: 0.0 if row is None else row[f"{side}_{col}"]  # noqa: E731
    return [(label, get("a", col), get("b", col)) for label, col in TEAM_MEASURES]


def damage_matrix(row: Row | None, attacker: str) -> np.ndarray:
    """[5, 5] damage (Basic + Ultimate) dealt by `attacker`'s slots (rows, "a" or "b") to the
    other team's slots (columns) up to the tick: who did what to whom."""
    out = np.zeros((5, 5))
    if row is None:
        return out
    victim = "b" if attacker == "a" else "a"
    for i in range(5):
        for j in range(5):
            pair = f"damage_done.{attacker}{i}>{victim}{j}"
            out[i, j] = row[f"{pair}.basic"] + row[f"{pair}.ultimate"]
    return out


class Axes(NamedTuple):
    """A heat map's labels: its title, the corner's axis titles, the rows' and columns' names."""

    title: str
    corner: str
    rows: list[str]
    cols: list[str]


def damage_axes(attacker: str) -> Axes:
    """The labels of `damage_matrix(row, attacker)`: rows are the agents who dealt the damage,
    columns those who took it, by agent name."""
    victim = "b" if attacker == "a" else "a"
    rows, cols = ([slot_name(5 * "ab".index(t) + k) for k in range(5)] for t in (attacker, victim))
    return Axes(f"damage dealt, {attacker.upper()} to {victim.upper()}", "by \\ to", rows, cols)


def action_text(a: np.ndarray) -> str:
    """An own-frame (move, target, Ultimate) by name; a value no action has is shown raw (a
    System may request anything; the engine repairs it)."""
    move, target, ult = (int(v) for v in a)
    moved = MOVE_NAMES[move] if 0 <= move < len(MOVE_NAMES) else f"move {move} (no such move)"
    valid = 0 <= target < len(COMBAT_NAMES) and 0 <= ult < 2
    combat = COMBAT_NAMES[target][ult] if valid else f"({target}, {ult}) (no such combat)"
    return f"{moved} + {combat}"


def agent_lines(replay: Replay, tick: int, slot: int, seen: list[int]) -> list[str]:
    """What agent `slot` was, saw (`seen`: the slots its view held) and chose at state `tick`,
    and what the engine accepted (a repaired choice is marked)."""
    a = replay.arrays
    cls = int(a["state.units.class_id"][tick, slot])
    lines = [
        f"{slot_name(slot)}: {CLASS_NAMES[cls]}",
        f"health {float(a['state.units.health'][tick, slot]):.0f}  "
        f"Ultimate cooldown {int(a['state.units.cooldown'][tick, slot])}",
        "saw: " + (", ".join(slot_name(s) for s in seen if s != slot) or "nobody"),
    ]
    if tick >= replay.ticks:
        return [*lines, "the game is over"]
    asked, got = a["facts.requested"][tick, slot], a["facts.accepted"][tick, slot]
    moves, pairs = a["masks.move"][tick, slot], a["masks.pair"][tick, slot]
    lines += [
        f"legal: {int(moves.sum())} moves x {int(pairs.sum())} combat choices",
        f"chose: {action_text(asked)}",
    ]
    if a["facts.move_rejected"][tick, slot] or a["facts.combat_rejected"][tick, slot]:
        lines.append(f"repaired to: {action_text(got)}")
    target = int(REL_TO_ABS[slot, int(got[1])])
    if target >= 0:
        lines.append(f"target: {slot_name(target)}")
    return lines
