"""Leaderboard tiers (paper Table S8): labels beside an Elo that never change rank or admission.

Eight tiers step up every 200 Elo with Gold starting at the field's mean, 1,200; below Grandmaster
each tier has five divisions 40 Elo apart, 5 (lowest) to 1 (highest): 1,441 is Platinum 4.
"""

from __future__ import annotations

import math

TIERS: tuple[tuple[str, float, float], ...] = (
    ("Iron", -math.inf, 800.0),
    ("Bronze", 800.0, 1000.0),
    ("Silver", 1000.0, 1200.0),
    ("Gold", 1200.0, 1400.0),
    ("Platinum", 1400.0, 1600.0),
    ("Diamond", 1600.0, 1800.0),
    ("Master", 1800.0, 2000.0),
    ("Grandmaster", 2000.0, math.inf),
)
DIVISION_WIDTH = 40.0
MEAN_ELO = 1200.0


def division(elo: float) -> tuple[str, int | None]:
    """(tier, division): division 5 (lowest) to 1 (highest), None for Grandmaster."""
    if not math.isfinite(elo):
        raise ValueError(f"elo: expected a finite number, got {elo!r}")
    for name, lo, hi in TIERS:
        if lo <= elo < hi:
            if name == "Grandmaster":
                return name, None
            bottom = hi - 5 * DIVISION_WIDTH  # Iron's divisions count down from 800 too
            step = math.floor((elo - bottom) / DIVISION_WIDTH)
            return name, min(5, max(1, 5 - step))
    raise AssertionError("unreachable")


def tier(elo: float) -> str:
    """The label, e.g. "Platinum 4" or "Grandmaster"."""
    name, div = division(elo)
    return name if div is None else f"{name} {div}"


def win_chance(elo: float, against: float = MEAN_ELO) -> float:
    """Share of decisive (not drawn) games a System rated `elo` wins against one rated `against`."""
    return 1.0 / (1.0 + 10.0 ** (-(elo - against) / 400.0))
