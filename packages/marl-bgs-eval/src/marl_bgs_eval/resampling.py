"""Resampling spawn-swapped pairs: the one bootstrap behind Elo intervals and metric intervals.

A unit is a pair of games (same seed, system_a, system_b and pair_id, on its map); a stratum is a
pairing on a map. Each resample draws every stratum's units again with replacement, so both
games of a pair always travel together and every pairing keeps its number of pairs per map.
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


def draw_counts(
    strata: np.ndarray, bootstrap: int, rng: np.random.Generator
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per stratum (in order): its units, and how often each is drawn in each resample [B, k]
    (k units drawn with replacement, as `bootstrap_elo` draws them)."""
    for s in np.unique(strata):
        members = np.flatnonzero(strata == s)
        k = members.size
        draw = rng.integers(0, k, size=(bootstrap, k))
        flat = (draw + k * np.arange(bootstrap)[:, None]).ravel()
        yield members, np.bincount(flat, minlength=bootstrap * k).reshape(bootstrap, k)
