"""Game settings: validated on the host, then split into static shapes and traced values."""

from __future__ import annotations

from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np

from marl_bgs.core.arena import MAX_STEP
from marl_bgs.core.checks import check_float, check_int, shown
from marl_bgs.core.errors import ConfigError
from marl_bgs.tdm.classes import LETTERS, parse_roster
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.state import Rules

LIMITS = {
    "winning_score": (1, 1000),
    "tick_limit": (1, 10_000),
    "red_zone_depth": (0.0, 10.0),
    "wave_period": (1, 100),
    "shield_ticks": (0, 30),
    "shield_speed": (0.0, MAX_STEP),  # movement tests the obstacles within one step
}
MESSAGE_DIM_MAX = 64  # widest teammate message, floats per agent
RosterLike = str | tuple[int, ...] | list[int]
DEFAULT_ROSTERS = (LETTERS, LETTERS)  # both teams play every class once


@dataclass(frozen=True)
class RuleValues:
    """Host-side rule values (validated), turned into the traced `Rules` pytree per game."""

    winning_score: int = 20
    tick_limit: int = 300
    red_zone_depth: float = 5.0
    wave_period: int = 5
    shield_ticks: int = 3
    shield_speed: float = 2.0

    def __post_init__(self) -> None:
        for name, (lo, hi) in LIMITS.items():
            check = check_int if isinstance(lo, int) else check_float
            object.__setattr__(self, name, check(getattr(self, name), name, lo, hi))

    def to_rules(self) -> Rules:
        """The traced pytree (scalars)."""
        return Rules(
            winning_score=jnp.int32(self.winning_score),
            tick_limit=jnp.int32(self.tick_limit),
            red_zone_depth=jnp.float32(self.red_zone_depth),
            wave_period=jnp.int32(self.wave_period),
            shield_ticks=jnp.int32(self.shield_ticks),
            shield_speed=jnp.float32(self.shield_speed),
        )


def roster_slots(team_a: RosterLike, team_b: RosterLike, field: str = "rosters") -> np.ndarray:
    """Class ids of the 10 slots for two rosters (unused slots padded with 0).

    Errors name the team's roster as `{field}[0]` (team A) or `{field}[1]` (team B).
    """
    out = np.zeros(2 * TEAM_SIZE, np.int32)
    for t, roster in enumerate((team_a, team_b)):
        ids = parse_roster(roster, field=f"{field}[{t}]")
        out[t * TEAM_SIZE : t * TEAM_SIZE + len(ids)] = ids
    return out


def _is_class_id(c: object) -> bool:
    return isinstance(c, int | np.integer) and not isinstance(c, bool | np.bool_)


def _is_roster(x: object) -> bool:
    return isinstance(x, str) or (isinstance(x, tuple | list) and all(map(_is_class_id, x)))


def parse_rosters(rosters: object) -> np.ndarray:
    """One pair of rosters, or a list of pairs to draw from, -> int32 [R, 10] class ids."""
    if rosters is None:
        rosters = DEFAULT_ROSTERS
    if not isinstance(rosters, tuple | list) or not rosters:
        raise ConfigError(
            "rosters: expected a pair like ('MWHRP', 'MWHRP') or a non-empty list of pairs"
        )
    pairs = [rosters] if len(rosters) == 2 and all(map(_is_roster, rosters)) else list(rosters)
    out = []
    for k, pair in enumerate(pairs):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ConfigError(f"rosters[{k}]: expected a pair (team A roster, team B roster)")
        for t, roster in enumerate(pair):
            if not _is_roster(roster):
                raise ConfigError(
                    f"rosters[{k}][{t}]: expected class letters like 'MWHRP' or a list of class "
                    f"ids 1-5, got {shown(roster)}"
                )
            bad = [shown(c, 20) for c in roster if not isinstance(c, str) and not 1 <= c <= 5]
            if bad:  # checked here so that a huge id is shown cut, not printed whole
                raise ConfigError(
                    f"rosters[{k}][{t}]: unknown class id(s) [{', '.join(bad[:5])}]; allowed ids "
                    "are 1-5"
                )
        try:
            out.append(roster_slots(pair[0], pair[1], field=f"rosters[{k}]"))
        except ValueError as err:
            raise ConfigError(str(err)) from None
    return np.stack(out)
