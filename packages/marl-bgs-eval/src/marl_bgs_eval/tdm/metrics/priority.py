"""The counters of every level ("none") and of the priority level, per team.

"none" keeps what every results row needs, per team: kills, deaths and rejected actions (6
integer columns). "priority" (the default) adds 6 values per team (12 columns): damage dealt,
useful and excess healing, Red Zone deaths, Basics and Ultimates used. Column names are
`<team>_<metric>` with team "a" or "b" (team A is the results' `system_a`).
"""

from __future__ import annotations

import jax.numpy as jnp

from marl_bgs import Facts
from marl_bgs_eval.tdm.metrics.axes import per_team
from marl_bgs_eval.tdm.metrics.families import DAMAGE, KILLS, RESULTS

TEAMS = ("a", "b")
# name: (section, topic, unit, meaning)
BASE = {
    "kills": (KILLS, "Kill contributions", "count", "enemy deaths"),
    "deaths": (KILLS, "Deaths and time dead", "count", "own deaths"),
    "rejected_actions": (RESULTS, "Accepted and rejected actions", "count",
                         "agent-ticks with a repaired (illegal) move or combat choice"),
}  # fmt: skip
PRIORITY = {
    "damage_dealt": (DAMAGE, "Damage done", "HP", "damage the team's Basics and Ultimates dealt"),
    "healing_done": (DAMAGE, "Healing done", "HP",
                     "useful healing: HP the team's healing abilities restored"),
    "excess_healing": (DAMAGE, "Excess healing", "HP",
                       "HP of the team's ability healing lost to full health"),
    "red_zone_deaths": (KILLS, "Red Zone", "count",
                        "own deaths in its home Red Zone (the 2-point deaths)"),
    "basics_used": (RESULTS, "Ability activations", "count", "Basic abilities used"),
    "ultimates_used": (RESULTS, "Ability activations", "count", "Ultimates used"),
}  # fmt: skip


def team_columns(names: dict[str, tuple[str, str, str, str]]) -> list[str]:
    return [f"{t}_{m}" for t in TEAMS for m in names]


def _team_sum(x: jnp.ndarray, team: int) -> jnp.ndarray:
    return per_team(x.astype(jnp.float32))[:, team]


def tally(facts: Facts, priority: bool) -> jnp.ndarray:
    """One tick's base counters [n, 6] (and the priority ones after them, [n, 18])."""
    died = facts.died
    rejected = facts.move_rejected | facts.combat_rejected
    deaths = [_team_sum(died, t) for t in (0, 1)]
    cols = []
    for t in (0, 1):
        cols += [deaths[1 - t], deaths[t], _team_sum(rejected, t)]
    if priority:
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
