"""Every team-level measure of the full level: each metric family summed over one team.

A family's first axis says whose value a column is (a slot, a source>recipient pair whose
source is the agent, a team, or a pair of teammates); its other axes say what (an ability, a
status, a result). A team measure keeps the what and sums the who over the team's side:
`team.damage_done.basic` is the damage of every Basic the team's agents dealt to any enemy,
`team.status_ticks.stunned` the ticks its agents spent stunned, each per 100 ticks, pooled over
games as a ratio of sums like every measure (`marl_bgs_eval.measures`). They are the teamwork
screen's list (the paper screens 145 such team-level metrics against Elo, Table S14), computed
by `system_metrics` when asked for by name (`EvalParts.team_measures`).
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


TEAM_MEASURES: dict[str, Measure] = {
    m.name: m for f in FAMILIES if f.axes[0].name in WHOSE for m in _measures(f)
}
