"""The text view `bridge-text-v1`: Two-Bridge's permitted view (`BridgeView`) as a prompt.

Every Marine sees the same thing: the minimap (which cells show your Marines, enemies and the
beacon, never which Marine stands where: the view carries no coordinates) and the status vector
(every Marine's and enemy's health, the share of the step limit used). With fog of war, enemies
and the beacon out of sight are not on the minimap. Rule numbers come from the engine's table
(`marl_bgs.two_bridge.layout`), action names from its move offsets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from marl_bgs.two_bridge import layout as lay
from marl_bgs_llm.modes import TextParts

TEXT_VIEW = "bridge-text-v1"
MAX_ENEMIES = max(lay.ENEMY_COUNTS.values())


def _direction(dx: float, dy: float) -> str:
    return ("north" if dy > 0 else "south" if dy < 0 else "") + (
        "east" if dx > 0 else "west" if dx < 0 else ""
    )


# Action k of one Marine, by name: 0 stay, 1-8 the moves, 9 + j attack enemy j.
ACTION_NAMES = (
    "stay",
    *(_direction(dx, dy) for dx, dy in lay.MOVE_OFFSETS),
    *(f"attack_enemy_{j}" for j in range(MAX_ENEMIES)),
)


def _num(x: Any) -> str:
    v = float(x)
    return str(round(v)) if v == round(v) else f"{v:.3f}".rstrip("0").rstrip(".")


RULES = "\n".join(
    [
        "== Rules ==",
        f"Two-Bridge: your {lay.NUM_FRIENDS} Marines against enemy Marines that never move. "
        f"The field is {_num(lay.FIELD)} x {_num(lay.FIELD)} (x east, y north); an impassable "
        f"cliff runs north-south at x {_num(lay.CLIFF_X[0])}-{_num(lay.CLIFF_X[1])}, crossed "
        f"by two bridges at y {_num(lay.BRIDGES_Y[0][0])}-{_num(lay.BRIDGES_Y[0][1])} and "
        f"y {_num(lay.BRIDGES_Y[1][0])}-{_num(lay.BRIDGES_Y[1][1])}.",
        f"You win when a living Marine comes within {_num(lay.BEACON_RADIUS)} of the beacon or "
        "when every enemy is dead; you lose when all your Marines are dead or the step limit "
        "is reached.",
        f"Each step every Marine picks one action: stay, a move of {_num(lay.MOVE_STEP)} in one "
        f"of eight directions, or an attack on a living enemy within {_num(lay.ATTACK_RANGE)} "
        f"({_num(lay.DAMAGE)} damage per step). Every unit has health "
        f"{_num(lay.MARINE_HEALTH)}. A Marine that stays fires by itself at the nearest enemy "
        f"in range; an enemy fires at the nearest Marine within {_num(lay.ATTACK_RANGE)}.",
    ]
)


def _cells(minimap: np.ndarray, code: float) -> list[str]:
    """The centres of the minimap cells showing `code`, as (x, y) in field units."""
    rows, cols = np.nonzero(minimap[1] == code)
    return [f"({_num((c + 0.5) * lay.CELL)}, {_num((r + 0.5) * lay.CELL)})"
            for r, c in zip(rows, cols, strict=True)]  # fmt: skip


def _health(status: np.ndarray, start: int, count: int, name: str) -> list[str]:
    out = []
    for k in range(count):
        health, alive = status[start + 2 * k], status[start + 2 * k + 1]
        state = f"health {_num(health * lay.MARINE_HEALTH)}" if alive > 0 else "dead"
        out.append(f"{name}_{k} {state}")
    return out


def legal_names(masks: Any) -> list[str]:
    """One Marine's legal action names, from its exact mask (`flat` [9 + N_E])."""
    return [ACTION_NAMES[a] for a in np.flatnonzero(np.asarray(masks.flat))]


REPLY_INSTRUCTION = 'Reply with one JSON object and nothing else: {"action": "<one legal action>"}.'


def format_view(view: Any, masks: Any, slot: int, *, rules: bool = True) -> str:
    """The `bridge-text-v1` prompt of Marine `slot`: `view` is its `BridgeView` and `masks` its
    `BridgeMasks`, without leading axes. `rules=False` leaves out the public rules."""
    minimap, status = np.asarray(view.minimap), np.asarray(view.status)
    enemies = (status.size - 2 * lay.NUM_FRIENDS - 2) // 2
    lines = [f"MARL-BGs {TEXT_VIEW}"]
    if rules:
        lines.append(RULES)
    beacon = _cells(minimap, lay.NEUTRAL)
    lines += [
        f"== Minimap (cells of {_num(lay.CELL)} x {_num(lay.CELL)}, by their centres) ==",
        f"cells with your Marines: {', '.join(_cells(minimap, lay.ALLY)) or 'none'}",
        f"cells with enemies: {', '.join(_cells(minimap, lay.ENEMY)) or 'none in sight'}",
        f"beacon: {beacon[0] if beacon else 'not in sight'}",
        "== Status ==",
        f"step limit used: {_num(100 * status[-2])}%",
        f"your Marines: {', '.join(_health(status, 0, lay.NUM_FRIENDS, 'marine'))}",
        f"enemies: {', '.join(_health(status, 2 * lay.NUM_FRIENDS, enemies, 'enemy'))}",
        "== You ==",
        f"you are marine_{slot}",
        "== Your legal choices ==",
        f"actions: {', '.join(legal_names(masks))}",
        REPLY_INSTRUCTION,
    ]
    return "\n".join(lines)


def action_of(names: Sequence[str]) -> np.ndarray:
    """The action int32 [1] of a legal action name."""
    return np.asarray([ACTION_NAMES.index(names[0])], np.int32)


PARTS = TextParts(
    view=TEXT_VIEW,
    fields=("action",),
    prompt=lambda view, masks, slot, rules: format_view(view, masks, slot, rules=rules),
    legal=lambda masks: {"action": legal_names(masks)},
    action=action_of,
    idle=np.zeros(1, np.int32),  # stay (it still fires at an enemy in range)
    choices=lambda masks: np.asarray(masks.flat).sum(-1),
    rules=RULES,
)
