"""The paper's analysis measures (Table S14, Figure 6, S7.4) over a full-level results table.

A measure reads one side of every game ("a" or "b": the team whose System it measures) and gives
two per-game Series, a numerator and a denominator, so that pooling games is a ratio of sums:

    rate   events per 100 ticks   sum(num) / sum(ticks / 100)
    share  a percentage           100 * sum(num) / sum(den)
    mean   an average             sum(num) / sum(den)        (e.g. map units per teammate-tick)

MEASURES["ultimates_per_100_ticks"].value(games, "a") pools team A's games; `system_metrics`
(in `marl_bgs_eval.compare`) pools every System's games from its own side, with resampled intervals.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np
import pandas as pd

from marl_bgs.core.checks import did_you_mean
from marl_bgs.tdm.classes import CLASS_LETTERS
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.measures import Measure, Parts, check_side, check_table
from marl_bgs_eval.tdm.metrics import axes as ax
from marl_bgs_eval.tdm.metrics import columns as columns_of
from marl_bgs_eval.tdm.metrics import families, full_columns
from marl_bgs_eval.tdm.metrics.families import FAMILIES

SIDES = ("a", "b")
CLASSES = "".join(CLASS_LETTERS)  # "MWHRP", in class-id order
EMPTY = "-"  # the class of a slot its roster leaves empty


@cache
def _full() -> frozenset[str]:
    return frozenset(full_columns())


def need(games: pd.DataFrame, columns: list[str]) -> None:
    """Raise EvalError naming the columns `games` lacks, and the metric level that records them."""
    check_table(games)
    missing = [c for c in columns if c not in games.columns]
    if not missing:
        return
    more = f" (and {len(missing) - 4} more)" if len(missing) > 4 else ""
    if any(c in _full() for c in missing):
        hint = "; record with metrics='full'"
    elif set(missing) <= set(columns_of("priority")):
        hint = "; record with metrics='priority' or 'full'"
    else:
        hint = ""
    raise EvalError(f"games: missing column(s) {missing[:4]}{more}{hint}")


def _sum(games: pd.DataFrame, columns: list[str]) -> pd.Series:
    need(games, columns)
    return pd.Series(games[columns].to_numpy(float).sum(axis=1), index=games.index)


def _per_100_ticks(games: pd.DataFrame) -> pd.Series:
    need(games, ["ticks"])
    return pd.Series(games["ticks"].to_numpy(float) / 100.0, index=games.index)


def slots(side: str) -> list[str]:
    """The side's slot names: a0-a4 or b0-b4."""
    return [f"{check_side(side)}{i}" for i in range(TEAM_SIZE)]


def _from(axis: ax.Axis, side: str) -> list[str]:
    """The labels of a pair axis whose source is one of the side's slots."""
    return [label for label in axis.labels if label.startswith(check_side(side))]


def _cols(family: str, labels: list[str], *rest: str) -> list[str]:
    return [".".join((family, label, *rest)) for label in labels]


# --- classes, from the roster ------------------------------------------------------------------


def class_of(games: pd.DataFrame, side: str, slot: int) -> pd.Series:
    """The class letter ("M", "W", "H", "R", "P"; "-" if empty) of a side's roster slot 0-4."""
    if (
        isinstance(slot, bool)
        or not isinstance(slot, int | np.integer)
        or not 0 <= slot < TEAM_SIZE
    ):
        raise EvalError(f"slot: expected a roster slot 0-{TEAM_SIZE - 1}, got {slot!r}")
    column = f"roster_{check_side(side)}"
    need(games, [column])
    roster = games[column].astype(str)
    return roster.str.slice(int(slot), int(slot) + 1).replace("", EMPTY)


def slots_of_class(games: pd.DataFrame, side: str, letter: str) -> pd.DataFrame:
    """Per game, whether each of the side's slots (columns a0-a4 or b0-b4) holds the class."""
    if not isinstance(letter, str) or letter not in CLASSES or len(letter) != 1:
        raise EvalError(f"letter: expected one of {list(CLASSES)}, got {letter!r}")
    names = slots(side)
    return pd.DataFrame({s: class_of(games, side, i) == letter for i, s in enumerate(names)})


def by_class(games: pd.DataFrame, family: str, side: str) -> pd.DataFrame:
    """A family's per-game totals for the side's agents of each class (columns M, W, H, R, P):
    a slot family by its slot, a pair family by its source (`by_class(g, "damage_done", "a")`
    is the damage team A's Mage, Warrior, ... dealt)."""
    f = next((f for f in FAMILIES if f.name == family), None)
    if f is None:
        hint = did_you_mean(family, (f.name for f in FAMILIES))
        raise EvalError(f"family: unknown metric family {family!r}{hint}; see metrics.schema()")
    if f.axes[0] not in (ax.SLOT, ax.ENEMY_PAIR, ax.ALLY_PAIR):
        raise EvalError(f"family: {family!r} is not indexed by slot or source>recipient pair")
    cols = families.columns(f)
    out = pd.DataFrame(0.0, index=games.index, columns=list(CLASSES))
    for i, s in enumerate(slots(side)):
        total = _sum(games, [c for c in cols if c.split(".")[1].startswith(s)])
        cls = class_of(games, side, i)
        for letter in CLASSES:
            out[letter] += total.where(cls == letter, 0.0)
    return out


# --- the measures ------------------------------------------------------------------------------


def _teammate_distance(g: pd.DataFrame, side: str) -> Parts:
    mates = _from(ax.MATE_PAIR, side)
    return _sum(g, _cols("teammate_distance", mates)), _sum(g, _cols("teammate_ticks", mates))


def _in_aura(kind: str) -> Callable[[pd.DataFrame, str], Parts]:
    def parts(g: pd.DataFrame, side: str) -> Parts:
        under = [f"aura_stack.{s}.{kind}.{n}" for s in slots(side) for n in ax.AURAS.labels]
        return _sum(g, under), _sum(g, _cols("alive_ticks", slots(side)))

    return parts


def _damage_taken(g: pd.DataFrame, side: str) -> pd.Series:
    return _sum(g, [f"damage_received.{s}.{a}" for s in slots(side) for a in ax.ABILITY.labels])


def _basic_healing(g: pd.DataFrame, side: str) -> Parts:
    mine = _from(ax.ALLY_PAIR, side)
    useful = _sum(g, _cols("healing_done", mine, "basic"))
    return useful, useful + _sum(g, _cols("excess_healing", mine, "basic"))


def _kills(g: pd.DataFrame, side: str) -> pd.Series:
    return _sum(g, [f"results.{side}.kills"])


def _setup(label: str) -> Callable[[pd.DataFrame, str], pd.Series]:
    return lambda g, side: _sum(g, [f"kill_setups.{side}.{label}"])


def _team(column: str) -> Callable[[pd.DataFrame, str], pd.Series]:
    """A per-team column: `{side}` in `column` is replaced by the side."""
    return lambda g, side: _sum(g, [column.format(side=side)])


def _per_slot(family: str, *rest: str) -> Callable[[pd.DataFrame, str], pd.Series]:
    return lambda g, side: _sum(g, _cols(family, slots(side), *rest))


def _rate(count: Callable[[pd.DataFrame, str], pd.Series]) -> Callable[[pd.DataFrame, str], Parts]:
    return lambda g, side: (count(g, side), _per_100_ticks(g))


def _ratio(
    num: Callable[[pd.DataFrame, str], pd.Series], den: Callable[[pd.DataFrame, str], pd.Series]
) -> Callable[[pd.DataFrame, str], Parts]:
    return lambda g, side: (num(g, side), den(g, side))


_M = Measure
MEASURES: dict[str, Measure] = {
    m.name: m
    for m in (
        _M("teammate_distance", "mean", "map units",
           "mean distance between two living teammates", _teammate_distance),
        _M("time_in_mage_aura", "share", "% of alive ticks",
           "share of the agents' alive ticks under one or more Mage auras", _in_aura("mage")),
        _M("time_in_warrior_aura", "share", "% of alive ticks",
           "share of the agents' alive ticks under one or more Warrior auras",
           _in_aura("warrior")),
        _M("mage_aura_added_per_100_ticks", "rate", "HP per 100 ticks",
           "damage the team's Mage auras added", _rate(_team("aura_totals.{side}.added"))),
        _M("warrior_aura_prevented_per_100_taken", "share", "HP per 100 HP taken",
           "damage the team's Warrior auras blocked, per 100 damage its agents took",
           _ratio(_team("aura_totals.{side}.prevented"), _damage_taken)),
        _M("useful_share_of_basic_healing", "share", "% of Basic healing",
           "useful share of the team's Basic healing (the rest was lost to full health)",
           _basic_healing),
        _M("damage_to_hunter_slowed_per_100_ticks", "rate", "HP per 100 ticks",
           "damage the team dealt to enemies slowed by a Hunter",
           _rate(lambda g, side: _sum(
               g, _cols("damage_to_affected", _from(ax.ENEMY_PAIR, side), "slowed_hunter")))),
        _M("kills_with_two_or_more_helpers", "share", "% of kills",
           "share of the team's kills with two or more helpers (hits or heals on the tick)",
           _ratio(_setup("two_or_more_helpers"), _kills)),
        _M("ticks_with_two_or_more_attackers", "rate", "ticks per 100 ticks",
           "ticks with two or more of the team's agents dealing damage",
           _rate(_team("coordination.{side}.two_or_more_attackers"))),
        _M("kills_warrior_ultimate_helped", "share", "% of kills",
           "share of the team's kills a Warrior's Charge helped (its hit, or its slow)",
           _ratio(_setup("warrior_ultimate"), _kills)),
        _M("kills_warrior_basic_helped_per_100_ticks", "rate", "kills per 100 ticks",
           "the team's kills a Warrior's Basic hit on the killing tick",
           _rate(_setup("warrior_basic"))),
        _M("ultimates_per_100_ticks", "rate", "per 100 ticks", "Ultimates the team used",
           _rate(_team("{side}_ultimates_used"))),
        _M("basics_per_100_ticks", "rate", "per 100 ticks", "Basics the team used",
           _rate(_team("{side}_basics_used"))),
        _M("kills_per_100_ticks", "rate", "per 100 ticks", "enemy deaths",
           _rate(_team("{side}_kills"))),
        _M("deaths_per_100_ticks", "rate", "per 100 ticks", "the team's deaths",
           _rate(_team("{side}_deaths"))),
        _M("home_deaths_per_100_ticks", "rate", "per 100 ticks",
           "the team's deaths in its own Red Zone (2 points each)",
           _rate(_team("{side}_red_zone_deaths"))),
        _M("ultimates_together", "share", "% of Ultimates",
           "share of the team's Ultimates used within 4 ticks of a teammate's",
           _ratio(_per_slot("ultimates_together"), _team("{side}_ultimates_used"))),
        _M("bursts_with_enemy_in_reach", "share", "% of Bursts",
           "share of the team's Mage Bursts pressed with an enemy in Basic reach",
           _ratio(_per_slot("burst", "enemy_in_reach"), _per_slot("burst", "pressed"))),
    )
}  # fmt: skip


def measure(name: object) -> Measure:
    """The registered measure `name`, or EvalError listing them."""
    if not isinstance(name, str) or name not in MEASURES:
        hint = did_you_mean(name, MEASURES)
        raise EvalError(f"measure: unknown {name!r}{hint}; expected one of {list(MEASURES)}")
    return MEASURES[name]


def measures_table() -> pd.DataFrame:
    """Every measure: name, kind, unit, meaning."""
    rows = [(m.name, m.kind, m.unit, m.meaning) for m in MEASURES.values()]
    return pd.DataFrame(rows, columns=["measure", "kind", "unit", "meaning"])
