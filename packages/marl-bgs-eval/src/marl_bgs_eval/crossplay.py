"""Cross-play: every ordered pairing of a set of Systems, and the matchup matrix."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.evaluate import as_system, evaluate
from marl_bgs_eval.systems import System

VALUES = ("score", "win_rate", "margin")


def cross_play(
    systems: Sequence[System | str] | Mapping[str, System],
    *,
    include_self: bool = True,
    value: str = "score",
    games_per_map: int = 40,
    **kwargs: Any,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Play every ordered pair (team A, team B) with `evaluate` and return (matrix, games).

    Each pairing gets its own block of seed numbers and game numbers, so every game of the whole
    cross-play has a unique seed number per pair. The matrix holds, for the row System playing
    team A against the column System, its `value`: "score" (wins + draws / 2 per game),
    "win_rate", or "margin" (mean points of A minus points of B).
    """
    if value not in VALUES:
        raise EvalError(f"value: expected one of {list(VALUES)}, got {value!r}")
    items = list(systems.values()) if isinstance(systems, Mapping) else list(systems)
    field = [as_system(s, f"systems[{k}]") for k, s in enumerate(items)]
    names = [s.name for s in field]
    if len(set(names)) != len(names):
        raise EvalError(f"systems: names must be unique, got {names}")
    if len(field) < 1 + (not include_self):
        raise EvalError("systems: need at least one pairing")
    frames = []
    first_seed, first_game = kwargs.pop("first_seed_number", 0), kwargs.pop("first_game", 0)
    for a in field:
        for b in field:
            if a is b and not include_self:
                continue
            games = evaluate(
                a,
                b,
                games_per_map=games_per_map,
                first_seed_number=first_seed,
                first_game=first_game,
                **kwargs,
            )
            first_seed += len(games) // 2
            first_game += len(games)
            frames.append(games)
    games = pd.concat(frames, ignore_index=True)
    return matchups(games, value), games


def matchups(games: pd.DataFrame, value: str = "score") -> pd.DataFrame:
    """Matrix of team A's `value` (rows: system_a, columns: system_b)."""
    g = games.assign(
        score=(games["result"] == "win").astype(float)
        + 0.5 * (games["result"] == "draw").astype(float),
        win_rate=(games["result"] == "win").astype(float),
        margin=(games["points_a"] - games["points_b"]).astype(float),
    )
    return g.pivot_table(index="system_a", columns="system_b", values=value, aggfunc="mean")
