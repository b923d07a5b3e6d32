"""The styles of the scripted teams: the weights and habits that make each play differently.

Every style uses the same kit logic (`combat.py`) and steering (`steering.py`); a style only sets
what the team values. Its numbers may be constants (`scripted_policy`: each style its own
program) or data (`style_numbers` for `scripted_act`: one program plays every style but rush).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


@dataclass(frozen=True)
class Style:
    """What one scripted team values (see docs/opponents.md)."""

    name: str
    # Targeting: priority = low_health * (1 - health fraction) + class bonus (M, W, H, R, P).
    low_health: float
    class_bonus: tuple[float, float, float, float, float]
    # Ultimates: hold them until this many of the team's Ultimates are ready together (1: at
    # once), unless the target can be finished.
    ults_together: int
    # Steering: stay within `anchor_radius` of the team's Warrior (0: no formation).
    anchor_weight: float
    anchor_radius: float
    # Keep ranged agents and the Priest out of reach of enemy melee (kiting).
    kite_weight: float
    # Extra priority on enemies close to the team's own Priest (peeling for the healer).
    peel: float
    # Where to go when no enemy is known or remembered: (x, y) in the own frame.
    rally: tuple[float, float]
    # The Priest keeps this far behind (west of) the agents it heals.
    priest_behind: float
    # rush: walk straight at the nearest known enemy and take any legal attack.
    rush: bool = False


ALPHA = Style(
    name="tdm-alpha",
    low_health=1.5,
    class_bonus=(0.4, 0.0, 0.25, 0.25, 0.5),
    ults_together=1,
    anchor_weight=0.6,
    anchor_radius=2.5,
    kite_weight=0.0,
    peel=0.0,
    rally=(15.0, 5.0),
    priest_behind=1.5,
)
BETA = Style(
    name="tdm-beta",
    low_health=1.0,
    class_bonus=(0.5, 0.0, 0.3, 0.4, 0.6),
    ults_together=1,
    anchor_weight=0.0,
    anchor_radius=0.0,
    kite_weight=1.2,
    peel=0.8,
    rally=(14.0, 5.0),
    priest_behind=2.5,
)
GAMMA = Style(
    name="tdm-gamma",
    low_health=1.2,
    class_bonus=(0.5, 0.1, 0.3, 0.3, 0.4),
    ults_together=2,
    anchor_weight=0.3,
    anchor_radius=3.0,
    kite_weight=0.4,
    peel=0.3,
    rally=(15.5, 7.5),
    priest_behind=2.0,
)
RUSH = Style(
    name="rush",
    low_health=0.0,
    class_bonus=(0.0, 0.0, 0.0, 0.0, 0.0),
    ults_together=1,
    anchor_weight=0.0,
    anchor_radius=0.0,
    kite_weight=0.0,
    peel=0.0,
    rally=(19.5, 5.0),
    priest_behind=0.0,
    rush=True,
)

STYLES = {s.name: s for s in (ALPHA, BETA, GAMMA, RUSH)}

# The fields that are numbers: all but `name`, and `rush`, which changes what the program does.
NUMBERS = tuple(f.name for f in fields(Style) if f.name not in ("name", "rush"))


def style_numbers(style: Style) -> dict[str, np.ndarray]:
    """The style's numbers as arrays (float32; `ults_together` int32), to be passed as data."""
    return {
        k: np.asarray(getattr(style, k), np.int32 if k == "ults_together" else np.float32)
        for k in NUMBERS
    }
