"""Per-game metrics accumulated in JAX from the engine's per-tick facts (no rule is recomputed).

Levels: "none" keeps what every results row needs, per team: kills, deaths and rejected actions
(6 integer columns). "priority" (the default) adds 6 values per team (12 columns): damage dealt,
useful and excess healing, Red Zone deaths, Basics and Ultimates used, for 18 in all. Counters are
summed over a game's ticks while it plays and written out when it ends; no trajectory is stored.
Column names are `<team>_<metric>` with team "a" or "b" (team A is the results' `system_a`).
"""

from __future__ import annotations

import jax.numpy as jnp

from marl_bgs import Facts, TeamDeathmatch
from marl_bgs_eval.errors import EvalError

LEVELS = ("none", "priority")
TEAMS = ("a", "b")
BASE = (
    "kills",  # enemy deaths
    "deaths",  # own deaths
    "rejected_actions",  # agent-ticks with a repaired (illegal) move or combat choice
)
PRIORITY = (
    "damage_dealt",  # HP of damage the team's Basics and Ultimates dealt
    "healing_done",  # HP the team's healing abilities restored (useful healing)
    "excess_healing",  # HP of the team's ability healing lost to full health
    "red_zone_deaths",  # own deaths in its home Red Zone (the 2-point deaths)
    "basics_used",
    "ultimates_used",
)
AMOUNTS = frozenset({"damage_dealt", "healing_done", "excess_healing"})  # HP, float columns


def _columns(names: tuple[str, ...]) -> list[str]:
    return [f"{t}_{m}" for t in TEAMS for m in names]


def base_columns() -> list[str]:
    """The 6 columns of every level: a_kills, a_deaths, a_rejected_actions, b_kills, ..."""
    return _columns(BASE)


def priority_columns() -> list[str]:
    """The 12 columns the priority level adds: a_damage_dealt, ..., b_ultimates_used."""
    return _columns(PRIORITY)


def is_amount(column: str) -> bool:
    """Whether a metric column holds HP (float) rather than a count (integer)."""
    return column[2:] in AMOUNTS


def check_level(level: str) -> str:
    if level not in LEVELS:
        raise EvalError(f"metrics: expected one of {list(LEVELS)}, got {level!r}")
    return level


def width(level: str) -> int:
    """Counters per game: 6 base values, plus 12 at the priority level."""
    return len(BASE) * 2 + (len(PRIORITY) * 2 if level == "priority" else 0)


_SPEC = TeamDeathmatch().spec  # the slots of each team


def _team_sum(x: jnp.ndarray, team: int) -> jnp.ndarray:
    return jnp.sum(_SPEC.team_slice(x, team).astype(jnp.float32), axis=1)


def tally(facts: Facts, level: str) -> jnp.ndarray:
    """One tick's contribution [n, width(level)] from batched facts [n, ...], in the order of
    `base_columns() + priority_columns()`."""
    died = facts.died
    rejected = facts.move_rejected | facts.combat_rejected
    deaths = [_team_sum(died, t) for t in (0, 1)]
    cols = []
    for t in (0, 1):
        cols += [deaths[1 - t], deaths[t], _team_sum(rejected, t)]
    if level == "priority":
        per_actor = {
            "damage_dealt": jnp.sum(facts.damage, axis=-1),
            "healing_done": jnp.sum(facts.useful_healing, axis=-1),
            "excess_healing": jnp.sum(facts.excess_healing, axis=-1),
            "red_zone_deaths": facts.red_zone_death,
            "basics_used": facts.basic_used,
            "ultimates_used": facts.ultimate_used,
        }
        for t in (0, 1):
            cols += [_team_sum(per_actor[m], t) for m in PRIORITY]
    return jnp.stack(cols, axis=-1)
