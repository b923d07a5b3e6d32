"""Resampling spawn-swapped pairs: the one bootstrap behind Elo intervals and metric intervals.

A unit is a pair of games (same seed, system_a, system_b and pair_id, on its map); a stratum is a
pairing on a map. Each resample draws every stratum's units again with replacement, so both
games of a pair always travel together and every pairing keeps its weight on every map.

Why rescaled: drawing all k units of a stratum again gives a total whose variance is (k - 1) / k
of the stratified-sampling variance k s^2 (s^2, the units' sample variance): 3/4 at 4 pairs per
pairing and map, which made the 95% Elo intervals hold the truth about 91% of the time at 40
games per pairing. The Rao-Wu rescaled bootstrap draws k - 1 units instead and weighs each
k / (k - 1): every stratum keeps its total weight k, and the variance of any weighted total is
exactly k s^2 (see docs/evaluation.md, Validation). The weights are real numbers; the rating
fit and the ratio measures take them as they are.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from marl_bgs_eval.errors import EvalError

NEEDED = ("system_a", "system_b", "map", "pair_id")
MAX_BOOTSTRAP = 1_000_000  # resamples; each holds a small table


def check_bootstrap(bootstrap: object) -> int:
    """A number of resamples in [1, MAX_BOOTSTRAP], or EvalError naming `bootstrap`."""
    if (
        isinstance(bootstrap, bool)
        or not isinstance(bootstrap, int | np.integer)
        or not 1 <= bootstrap <= MAX_BOOTSTRAP
    ):
        raise EvalError(
            f"bootstrap: expected a number of resamples in [1, {MAX_BOOTSTRAP}], got {bootstrap!r}"
        )
    return int(bootstrap)


def check_seed(seed: object) -> int:
    """A resampling seed (a non-negative integer below 2**63), or EvalError naming `seed`."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**63:
        raise EvalError(f"seed: expected a non-negative integer, got {seed!r}")
    return int(seed)


def pair_units(games: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per game, its unit (a spawn-swapped pair: seed, system_a, system_b, pair_id, on its map);
    per unit, its stratum (pairing x map). Both numbered in sorted key order, so the numbering
    does not depend on the order of the rows. A custom map is told apart by its map_hash."""
    missing = [c for c in NEEDED if c not in games.columns]
    if missing:
        raise EvalError(f"games: missing column(s) {missing}")
    keys = games[list(NEEDED)].copy()
    if "map_hash" in games.columns:  # custom maps all record map -1
        keys["map"] = games["map_hash"].astype(str)
    keys["seed"] = games["seed"] if "seed" in games.columns else 0
    by = ["system_a", "system_b", "map", "seed", "pair_id"]
    unit = keys.groupby(by, sort=True, dropna=False).ngroup().to_numpy()
    first = keys.iloc[np.unique(unit, return_index=True)[1]]  # one game per unit, in unit order
    strata = first.groupby(by[:3], sort=True, dropna=False).ngroup().to_numpy()
    return unit, strata


def draw_weights(
    strata: np.ndarray, bootstrap: int, rng: np.random.Generator, rescaled: bool = True
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per stratum (in order): its units, and each unit's weight in each resample [B, k].

    Rescaled (the default): k - 1 draws with replacement, each weighing k / (k - 1); a stratum
    of one unit keeps it at weight 1. Plain (`rescaled=False`): k draws of weight 1."""
    for s in np.unique(strata):
        members = np.flatnonzero(strata == s)
        k = members.size
        m = k - 1 if rescaled and k > 1 else k
        draw = rng.integers(0, k, size=(bootstrap, m))
        flat = (draw + k * np.arange(bootstrap)[:, None]).ravel()
        counts = np.bincount(flat, minlength=bootstrap * k).reshape(bootstrap, k)
        yield members, counts * (k / m)
