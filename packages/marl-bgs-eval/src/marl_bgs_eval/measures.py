"""Analysis measures of any mode: a `Measure` reads one side of every game ("a" or "b") as a
numerator and a denominator per game, so that pooling games is a ratio of sums:

    rate   events per 100 ticks   sum(num) / sum(ticks / 100)
    share  a percentage           100 * sum(num) / sum(den)
    mean   an average             sum(num) / sum(den)

`GENERIC` holds the measures every mode's results support (they read only the common columns);
each mode's evaluation parts add their own (`EvalParts.measures`), e.g. Team Deathmatch's
`marl_bgs_eval.tdm.metrics.analysis.MEASURES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from marl_bgs_eval.errors import EvalError

SIDES = ("a", "b")
SCALE = {"rate": 1.0, "share": 100.0, "mean": 1.0}
Parts = tuple[pd.Series, pd.Series]


@dataclass(frozen=True)
class Measure:
    """One analysis measure: kind ("rate", "share" or "mean"), unit, meaning, and `parts(games,
    side) -> (num, den)`, two per-game Series whose pooled value is SCALE[kind] * sum / sum."""

    name: str
    kind: str
    unit: str
    meaning: str
    parts: Callable[[pd.DataFrame, str], Parts]

    def __call__(self, games: pd.DataFrame, side: str) -> Parts:
        """Per-game (numerator, denominator) read from `side`, as floats."""
        check_side(side)
        check_table(games)
        num, den = self.parts(games, side)
        return num.astype(float), den.astype(float)

    def value(self, games: pd.DataFrame, side: str) -> float:
        """The measure pooled over every game (ratio of sums); NaN when the denominator is 0."""
        num, den = self(games, side)
        total = float(den.sum())
        return SCALE[self.kind] * float(num.sum()) / total if total else float("nan")


def check_side(side: object) -> str:
    if side not in SIDES:
        raise EvalError(f"side: expected one of {list(SIDES)}, got {side!r}")
    return str(side)


def check_table(games: object) -> None:
    if not isinstance(games, pd.DataFrame):
        raise EvalError(f"games: expected a pandas DataFrame, got {type(games).__name__}")


def _ones_over(values: Any, games: pd.DataFrame) -> Parts:
    """Per game: `values` as floats over a denominator of one."""
    return pd.Series(np.asarray(values, float), index=games.index), pd.Series(
        1.0, index=games.index
    )


def _won(games: pd.DataFrame, side: str) -> Parts:
    won = "win" if side == "a" else "loss"
    return _ones_over(games["result"] == won, games)


def _drew(games: pd.DataFrame, side: str) -> Parts:
    del side
    return _ones_over(games["result"] == "draw", games)


def _length(games: pd.DataFrame, side: str) -> Parts:
    del side
    return _ones_over(games["ticks"], games)


def column_mean(
    column: str, sides: tuple[str, ...] = ("a",)
) -> Callable[[pd.DataFrame, str], Parts]:
    """A mean of one results column over the games read from `sides` (others: no games)."""

    def parts(games: pd.DataFrame, side: str) -> Parts:
        ones = pd.Series(np.where(side in sides, 1.0, 0.0), index=games.index)
        return pd.Series(games[column].to_numpy(float) * ones.to_numpy(), index=games.index), ones

    return parts


GENERIC: dict[str, Measure] = {
    m.name: m
    for m in (
        Measure("win_rate", "share", "% of games", "games won", _won),
        Measure("draw_rate", "share", "% of games", "games drawn", _drew),
        Measure("game_length", "mean", "ticks", "ticks a game lasted", _length),
    )
}
