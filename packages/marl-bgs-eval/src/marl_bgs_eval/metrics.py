"""Per-game metrics accumulated in JAX from the engine's per-tick facts (no rule is recomputed).

Levels: "none" keeps only what every results row needs (kills, deaths, rejected actions per team);
"priority" (the default) adds the 16 priority values, 8 per team. Counters are summed over a
game's ticks while it plays and written out when it ends; no trajectory is stored.
"""

from __future__ import annotations

import jax.numpy as jnp

from marl_bgs import Facts, TeamDeathmatch
from marl_bgs_eval.errors import EvalError

LEVELS = ("none", "priority")
TEAMS = ("a", "b")
BASE = ("kills", "deaths", "rejected")  # columns kills_a, kills_b, ...
PRIORITY = (
    "damage_dealt",  # HP of damage the team's Basics and Ultimates dealt
    "healing_done",  # HP of healing the team's abilities gave (before the health cap)
    "kills",  # enemy deaths
    "deaths",  # own deaths
    "red_zone_deaths",  # own deaths in its home Red Zone (the 2-point deaths)
    "basics_used",
    "ultimates_used",
    "rejected_actions",  # agent-ticks with a repaired (illegal) move or combat choice
)


def priority_columns() -> list[str]:
    """The 16 priority metric column names: a_damage_dealt, ..., b_rejected_actions."""
    return [f"{t}_{m}" for t in TEAMS for m in PRIORITY]


def base_columns() -> list[str]:
    """kills_a, kills_b, deaths_a, deaths_b, rejected_a, rejected_b."""
    return [f"{m}_{t}" for m in BASE for t in TEAMS]


def check_level(level: str) -> str:
    if level not in LEVELS:
        raise EvalError(f"metrics: expected one of {list(LEVELS)}, got {level!r}")
    return level


def width(level: str) -> int:
    """Counters per game: 6 base values, plus 16 at the priority level."""
    return len(BASE) * 2 + (len(PRIORITY) * 2 if level == "priority" else 0)


_SPEC = TeamDeathmatch().spec  # the slots of each team


def _team_sum(x: jnp.ndarray, team: int) -> jnp.ndarray:
    return jnp.sum(_SPEC.team_slice(x, team).astype(jnp.float32), axis=1)


def tally(facts: Facts, level: str) -> jnp.ndarray:
    """One tick's contribution [n, width(level)] from batched facts [n, ...]."""
    died = facts.died
    rejected = facts.move_rejected | facts.combat_rejected
    deaths = [_team_sum(died, t) for t in (0, 1)]
    rej = [_team_sum(rejected, t) for t in (0, 1)]
    base = [deaths[1], deaths[0], deaths[0], deaths[1], rej[0], rej[1]]
    if level == "none":
        return jnp.stack(base, axis=-1)
    dealt = jnp.sum(facts.damage_basic + facts.damage_ultimate, axis=-1)  # per actor [n, 10]
    healed = jnp.sum(facts.heal_basic + facts.heal_ultimate, axis=-1)
    home = facts.red_zone_death
    cols = []
    for t in (0, 1):
        cols += [
            _team_sum(dealt, t),
            _team_sum(healed, t),
            deaths[1 - t],
            deaths[t],
            _team_sum(home, t),
            _team_sum(facts.basic_used, t),
            _team_sum(facts.ultimate_used, t),
            rej[t],
        ]
    return jnp.stack(base + cols, axis=-1)
