"""Every team-level measure of the full level: each metric family summed over one team.

A family's first axis says whose value a column is (a slot, a source>recipient pair whose
source is the agent, a team, or a pair of teammates); its other axes say what (an ability, a
status, a result). A team measure keeps the what and sums the who over the team's side:
`team.damage_done.basic` is the damage of every Basic the team's agents dealt to any enemy,
`team.status_ticks.stunned` the ticks its agents spent stunned, each per 100 ticks, pooled over
games as a ratio of sums like every measure (`marl_bgs_eval.measures`).

`FAMILY_TOTALS` holds every family's totals. Some are, by the rules or by how they are counted,
the same number as an analysis measure or as another total (a team's kills, the healing its
agents gave and received, the Priest's Basic and the Blessings of Freedom it grants): `TWINS`
names each with the measure it equals, and `TEAM_MEASURES`, the teamwork screen's list (the
paper screens 145 team-level metrics against Elo, Table S14) and the names `system_metrics`
takes (`EvalParts.team_measures`), leaves them out, so that a quantity is screened, and counted
in the screen's multiple-test corrections, once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pandas as pd

from marl_bgs_eval.measures import Measure, Parts, check_side
from marl_bgs_eval.tdm.metrics import axes as ax
from marl_bgs_eval.tdm.metrics.families import FAMILIES, Family

PREFIX = "team"
# The first axes that say whose a value is, and which of their labels belong to a side.
WHOSE: dict[str, Callable[[str, str], bool]] = {
    ax.SLOT.name: lambda label, side: label.startswith(side),
    ax.ENEMY_PAIR.name: lambda label, side: label.startswith(side),
    ax.ALLY_PAIR.name: lambda label, side: label.startswith(side),
    ax.MATE_PAIR.name: lambda label, side: label.startswith(side),
    ax.TEAM.name: lambda label, side: label == side,
}


def _parts(family: Family, what: tuple[str, ...]) -> Callable[[pd.DataFrame, str], Parts]:
    owns = WHOSE[family.axes[0].name]

    def parts(games: pd.DataFrame, side: str) -> Parts:
        from marl_bgs_eval.tdm.metrics.analysis import need

        side = check_side(side)
        cols = [".".join((family.name, who, *what))
                for who in family.axes[0].labels if owns(who, side)]  # fmt: skip
        need(games, [*cols, "ticks"])
        total = pd.Series(games[cols].to_numpy(float).sum(axis=1), index=games.index)
        return total, pd.Series(games["ticks"].to_numpy(float) / 100.0, index=games.index)

    return parts


def _measures(family: Family) -> list[Measure]:
    """One measure per combination of the family's labels after its first axis."""
    rest = family.axes[1:]
    out = []
    for what in itertools.product(*(a.labels for a in rest)):
        where = ", ".join(f"{a.name} {x}" for a, x in zip(rest, what, strict=True))
        meaning = f"{family.meaning}, the team's total" + (f" [{where}]" if where else "")
        out.append(Measure(".".join((PREFIX, family.name, *what)), "rate",
                           f"{family.unit} per 100 ticks", meaning,
                           _parts(family, what)))  # fmt: skip
    return out


FAMILY_TOTALS: dict[str, Measure] = {
    m.name: m for f in FAMILIES if f.axes[0].name in WHOSE for m in _measures(f)
}
# A family total -> the measure it always equals (an analysis measure, or a total kept).
TWINS: dict[str, str] = {
    "team.aura_totals.added": "mage_aura_added_per_100_ticks",
    "team.damage_to_affected.slowed_hunter": "damage_to_hunter_slowed_per_100_ticks",
    "team.coordination.two_or_more_attackers": "ticks_with_two_or_more_attackers",
    "team.kill_setups.warrior_basic": "kills_warrior_basic_helped_per_100_ticks",
    "team.results.kills": "kills_per_100_ticks",
    "team.results.deaths": "deaths_per_100_ticks",
    "team.deaths": "deaths_per_100_ticks",
    "team.red_zone.deaths": "home_deaths_per_100_ticks",
    # healing stays within a team: what its agents gave, its agents received
    "team.healing_received.basic": "team.healing_done.basic",
    "team.healing_received.ultimate": "team.healing_done.ultimate",
    "team.antiheal_healing": "team.healing_to_affected.antiheal",
    # the Priest's Basic is the only Basic cast on allies, and it always grants Freedom
    "team.freedom_given": "team.basics_on_allies",
    # Burst is the only Ultimate without a target, and its status lasts while it is held
    "team.ultimates_untargeted": "team.burst.pressed",
    "team.burst.held_ticks": "team.status_ticks.burst",
}
TEAM_MEASURES: dict[str, Measure] = {n: m for n, m in FAMILY_TOTALS.items() if n not in TWINS}
