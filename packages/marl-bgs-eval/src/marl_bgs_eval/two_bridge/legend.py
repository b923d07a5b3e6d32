"""What Two-Bridge's pictures mean: the colours of the field, the Marines, the beacon and the
clock, the key (by group; each entry: how the clients draw its sample, its meaning, its colour)
and the rule that ends an episode.

One owner, in eval, because two packages draw Two-Bridge and neither depends on the other: the
clients' pictures (viewer, GIF/MP4 frames) draw every entry, and the tournament's web replay page
the groups its canvas has.

    for entry in legend.GROUPS["teams"]:
        print(entry.colour, entry.meaning)
"""

from __future__ import annotations

from marl_bgs.two_bridge import layout as lay
from marl_bgs_eval.picture_key import Colour, Entry

GROUND: Colour = (222, 214, 190)  # walkable ground and the two bridges
CLIFF: Colour = (92, 78, 64)
REGION: Colour = (170, 160, 130)  # a spawn region's outline
FRIEND: Colour = (40, 90, 220)  # the team's Marines: blue
ENEMY: Colour = (210, 40, 40)  # the built-in enemies: red
DEAD: Colour = (120, 120, 120)
HEALTH: Colour = (40, 180, 60)
BEACON: Colour = (230, 190, 20)
CLOCK: Colour = (30, 30, 30)  # the steps used, along the bottom edge
GROUPS: dict[str, tuple[Entry, ...]] = {
    "teams": (
        Entry("disc", "the team's Marines (the agents)", FRIEND),
        Entry("disc", "enemy Marines (built in)", ENEMY),
    ),
    "dead": (Entry("cross", "dead", DEAD),),
    "health": (Entry("bar", "health", HEALTH),),
    "shots": (Entry("line", "a shot (in the shooter's colour)", FRIEND),),
    "rings": (Entry("beacon", f"beacon; ring: within {lay.BEACON_RADIUS:g} wins", BEACON),),
    "ground": (Entry("box", "cliff", CLIFF), Entry("box", "ground and the two bridges", GROUND)),
    "regions": (Entry("outline", "spawn regions", REGION),),
    "clock": (Entry("box", "steps used (bottom edge)", CLOCK),),
}
KEY: tuple[Entry, ...] = tuple(e for group in GROUPS.values() for e in group)  # the clients'
RULE = "win: a Marine at the beacon, or every enemy dead; loss: every Marine dead, or the limit"
