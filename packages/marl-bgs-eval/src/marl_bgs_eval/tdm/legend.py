"""What the pictures of a game mean: the key (team colours, class letters, status badges, rings,
zones and marks, each with its colour) and the words for a final result.

One owner for both, in eval, because two packages draw games and neither depends on the other:
the clients' pygame pictures (viewer, BattleClient, GIF/MP4 frames) and the tournament's web
replay page. Each draws the symbols its own way; the letters, colours and meanings come from
here, and the numbers in the meanings from the engine's rule tables.

    for entry in legend.key("teams", "classes", "badges"):
        print(entry.symbol, entry.meaning)
    legend.result_text(replay.header)    # "A wins (20-14)", "draw at the tick limit (2-3)"
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from marl_bgs.tdm import classes as C
from marl_bgs.tdm.lifecycle import RED_ZONE_DEATH_POINTS
from marl_bgs_eval.picture_key import Colour, Entry

TEAM_COLOURS: tuple[Colour, Colour] = ((47, 111, 214), (214, 58, 47))  # team A blue, team B red
SHIELD: Colour = (230, 180, 30)
RED_ZONE: Colour = (243, 201, 196)
HEALTH: Colour = (60, 170, 75)
DAMAGE: Colour = (200, 30, 30)
HEAL: Colour = (30, 150, 60)
MOVE: Colour = (120, 120, 120)
DEAD: Colour = (140, 140, 140)
PAD_COLOURS: tuple[Colour, Colour] = ((140, 175, 235), (235, 150, 140))  # paler: not a unit


_MAGE, _WARRIOR = C.CLASS_NAMES[C.MAGE].capitalize(), C.CLASS_NAMES[C.WARRIOR].capitalize()
BADGES: dict[str, Entry] = {
    "stun": Entry("S", "stunned", (235, 190, 20)),
    "trap": Entry("T", "Freezing Trap: stunned", (40, 170, 210)),
    "slow_charge": Entry("c", f"Charge: speed x{C.CHARGE_SLOW_MULT:g}", (150, 110, 60)),
    "slow_hunter": Entry("h", f"Hunter's shot: speed x{C.HUNTER_SLOW_MULT:g}", (110, 140, 60)),
    "slow_poison": Entry("p", f"Poison: speed x{C.POISON_SLOW_MULT:g}", (120, 60, 150)),
    "antiheal": Entry("A", f"anti-heal: healing x{C.POISON_ANTIHEAL_MULT:g}", (90, 40, 120)),
    "freedom": Entry("F", f"Freedom: slowed to x{C.FREEDOM_FLOOR:g} at most", (240, 240, 240)),
    "burst": Entry("B", f"Burst: damage x{C.BURST_MULT:g}", (240, 110, 20)),
}  # status -> its badge under the unit, in drawing order; the spawn shield is a ring
GROUPS: dict[str, tuple[Entry, ...]] = {
    "teams": (Entry("A", "team A", TEAM_COLOURS[0]), Entry("B", "team B", TEAM_COLOURS[1])),
    "classes": tuple(
        Entry(letter, C.CLASS_NAMES[cid].capitalize()) for letter, cid in C.CLASS_LETTERS.items()
    ),
    "badges": tuple(BADGES.values()),
    "rings": (
        Entry("gold ring", "spawn shield: unseen, untargetable, cannot act", SHIELD),
        Entry(
            "dashed ring",
            f"aura (radius {C.AURA_RADIUS:g}): {_MAGE} damage "
            f"x{C.MAGE_AURA_MULT:g}, {_WARRIOR} damage taken x{C.WARRIOR_AURA_MULT:g}",
        ),
    ),
    "zones": (
        Entry(
            "Red Zone",
            f"Red Zone: dying in one's own gives {RED_ZONE_DEATH_POINTS} points",
            RED_ZONE,
        ),
    ),
    "health": (Entry("bar", "health", HEALTH),),
    "marks": (
        Entry("number", "ticks until the Ultimate", None),
        Entry("arrow", "damage (thick: Ultimate)", DAMAGE),
        Entry("arrow", "healing", HEAL),
        Entry("arrow", "move", MOVE),
        Entry("dot", "spawn pad", PAD_COLOURS[0]),
    ),
    "dead": (Entry("grey ring", "dead until its team's next wave", DEAD),),
}
PICTURE = ("teams", "classes", "badges", "rings", "zones", "health", "marks")  # the clients' key


def key(*groups: str) -> tuple[Entry, ...]:
    """The entries of `groups` (default: every group the clients' pictures draw), in order."""
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        raise ValueError(f"groups: expected some of {list(GROUPS)}, got {unknown}")
    return tuple(e for g in groups or PICTURE for e in GROUPS[g])


def result_text(game: Mapping[str, Any]) -> str:
    """A finished (or stopped) game's result for people, from a replay header or a results row
    (`result` for team A, `points_a`, `points_b`, `ticks`, `tick_limit`); the score is A-B:
    "A wins (20-14)", "B wins (9-20)", "draw at the tick limit (2-3)", "draw at the winning
    score (20-20)", "unfinished (4-1)"."""
    score = f"({game['points_a']}-{game['points_b']})"
    result = game["result"]
    if result == "draw":
        at = "the tick limit" if game["ticks"] >= game["tick_limit"] else "the winning score"
        return f"draw at {at} {score}"
    words = {"win": "A wins", "loss": "B wins", "unfinished": "unfinished"}
    if result not in words:
        raise ValueError(f"result: expected one of {[*words, 'draw']}, got {result!r}")
    return f"{words[result]} {score}"
