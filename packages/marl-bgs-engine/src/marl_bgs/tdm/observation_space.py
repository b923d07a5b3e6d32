"""Bounds of every block of the flat observation, from the class table and the validated limits
of the settings."""

from __future__ import annotations

import numpy as np

from marl_bgs.core.arena import MAP_HEIGHT, MAP_WIDTH
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.config import LIMITS
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.lifecycle import MAX_POINTS_PER_TICK
from marl_bgs.tdm.views import view_field_names

_DIAGONAL = float(np.hypot(MAP_WIDTH, MAP_HEIGHT))
_MAX_SCORE = LIMITS["winning_score"][1] + MAX_POINTS_PER_TICK
_MAX_DURATION = float(
    max(*C.DURATION_CAPS.values(), LIMITS["shield_ticks"][1], int(C.OOC_DELAY.max()))
)
_MAX_HEALTH = float(C.MAX_HEALTH.max())
_BOUNDS: dict[str, tuple[float, float]] = {
    "units.x": (0.0, MAP_WIDTH),
    "units.y": (0.0, MAP_HEIGHT),
    "units.dx": (-MAP_WIDTH, MAP_WIDTH),
    "units.dy": (-MAP_HEIGHT, MAP_HEIGHT),
    "units.distance": (0.0, _DIAGONAL),
    "units.health": (0.0, _MAX_HEALTH),
    "units.max_health": (0.0, _MAX_HEALTH),
    "units.speed": (0.0, LIMITS["shield_speed"][1]),
    "units.sight": (0.0, float(C.SIGHT.max())),
    "units.basic_range": (0.0, float(C.BASIC_RANGE.max())),
    "units.ultimate_range": (0.0, float(C.ULT_RANGE.max())),
    "units.basic_amount": (0.0, float(max(C.BASIC_DAMAGE.max(), C.BASIC_HEAL.max()))),
    "units.ultimate_amount": (0.0, float(max(C.ULT_DAMAGE.max(), C.ULT_HEAL.max()))),
    "public.tick": (0.0, LIMITS["tick_limit"][1]),
    "public.tick_limit": (0.0, LIMITS["tick_limit"][1]),
    "public.winning_score": (0.0, LIMITS["winning_score"][1]),
    "public.red_zone_depth": (0.0, LIMITS["red_zone_depth"][1]),
    "public.score": (0.0, _MAX_SCORE),
    "public.team_size": (0.0, float(TEAM_SIZE)),
    "public.wave_countdown": (0.0, LIMITS["wave_period"][1]),
    "public.wave_period": (0.0, LIMITS["wave_period"][1]),
    "public.shield_ticks": (0.0, LIMITS["shield_ticks"][1]),
    "public.roster_class": (0.0, float(len(C.CLASS_LETTERS))),
    "public.roster_shield": (0.0, LIMITS["shield_ticks"][1]),
    "public.spawn_pads": (0.0, MAP_WIDTH),
    "public.obstacle_kind": (0.0, 2.0),
    "public.obstacle_center": (0.0, MAP_WIDTH),
    "public.obstacle_size": (0.0, MAP_WIDTH),
    "public.obstacle_theta": (-2 * np.pi, 2 * np.pi),
    "messages": (-np.inf, np.inf),
}
_DURATIONS = {
    "units.shield", "units.stun", "units.trap", "units.slow_charge", "units.slow_hunter",
    "units.slow_poison", "units.antiheal", "units.freedom", "units.burst", "units.cooldown",
    "units.recovery",
}  # fmt: skip


def observation_bounds(message_dim: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float32 vectors of the flat observation; unlisted blocks are flags in [0, 1]."""
    low, high = [], []
    for name, width in view_field_names(message_dim):
        lo, hi = _BOUNDS.get(name, (0.0, _MAX_DURATION if name in _DURATIONS else 1.0))
        low.append(np.full(width, lo, np.float32))
        high.append(np.full(width, hi, np.float32))
    return np.concatenate(low), np.concatenate(high)
