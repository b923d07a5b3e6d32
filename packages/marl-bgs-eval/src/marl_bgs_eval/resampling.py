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

Two schemes (`SCHEMES`). "pairs" (the default, the rulebook's) resamples pairs within every
pairing and map, so it measures how the games on those maps could have gone: a pairing whose
games on a map are all one game gives no spread. "maps" first draws the table's maps again (once
per resample, for every pairing alike; rescaled, M - 1 of M maps each weighing M / (M - 1)), then
the pairs of every pairing within each drawn copy of a map: the spread of having played only
these maps, which a deterministic pairing has too. With one map it is the "pairs" scheme, draw
for draw.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import pandas as pd

from marl_bgs_eval.errors import EvalError

NEEDED = ("system_a", "system_b", "map", "pair_id")
MAX_BOOTSTRAP = 1_000_000  # resamples; each holds a small table
SCHEMES = {
    "pairs": "spawn-swapped pairs resampled within each pairing and map",
    "maps": "maps resampled, then spawn-swapped pairs within each pairing and drawn map",
}


class Units(NamedTuple):
    """Per game its unit; per unit its stratum; per stratum its map (numbered in sorted order)."""

    unit: np.ndarray
    strata: np.ndarray
    maps: np.ndarray


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


def check_scheme(scheme: object) -> str:
    """A resampling scheme of `SCHEMES`, or EvalError naming `bootstrap_scheme`."""
    if not isinstance(scheme, str) or scheme not in SCHEMES:
        raise EvalError(f"bootstrap_scheme: expected one of {list(SCHEMES)}, got {scheme!r}")
    return scheme


def pair_units(games: pd.DataFrame) -> Units:
    """Per game, its unit (a spawn-swapped pair: seed, system_a, system_b, pair_id, on its map);
    per unit, its stratum (pairing x map); per stratum, its map. All numbered in sorted key
    order, so the numbering does not depend on the order of the rows. A custom map is told apart
    by its map_hash."""
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
    maps = np.zeros(strata.max() + 1 if strata.size else 0, np.int64)
    maps[strata] = first.groupby("map", sort=True, dropna=False).ngroup().to_numpy()
    return Units(unit, strata, maps)


def _draws(
    n: int, times: int, rng: np.random.Generator, rescaled: bool
) -> tuple[np.ndarray, float]:
    """`times` resamples of n items: how often each is drawn [times, n] and the weight of a draw.
    Rescaled, n - 1 draws with replacement each weighing n / (n - 1) (one item keeps weight 1);
    plain, n draws of weight 1."""
    m = n - 1 if rescaled and n > 1 else n
    draw = rng.integers(0, n, size=(times, m))
    flat = (draw + n * np.arange(times)[:, None]).ravel()
    return np.bincount(flat, minlength=times * n).reshape(times, n), n / m


def draw_weights(
    strata: np.ndarray, bootstrap: int, rng: np.random.Generator, rescaled: bool = True,
    maps: np.ndarray | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """Per stratum (in order): its units, and each unit's weight in each resample [B, k].

    Rescaled (the default): k - 1 draws with replacement, each weighing k / (k - 1); a stratum
    of one unit keeps it at weight 1. Plain (`rescaled=False`): k draws of weight 1. `maps`
    (each stratum's map: the "maps" scheme): the maps are drawn first, the same way, and a
    stratum's units are drawn again for each copy of its map in the resample."""
    n_maps = 0 if maps is None else int(np.unique(maps).size)
    copies, map_weight = (
        _draws(n_maps, bootstrap, rng, rescaled) if maps is not None and n_maps > 1 else (None, 1.0)
    )
    for s in np.unique(strata):
        members = np.flatnonzero(strata == s)
        k = members.size
        if copies is None or maps is None:
            counts, weight = _draws(k, bootstrap, rng, rescaled)
            yield members, counts * weight
            continue
        most = int(copies.max(initial=0))
        counts, weight = _draws(k, bootstrap * most, rng, rescaled)
        used = (np.arange(most) < copies[:, maps[s], None]).astype(float)  # [B, most]
        summed = np.einsum("bc,bck->bk", used, counts.reshape(bootstrap, most, k))
        yield members, summed * (weight * map_weight)
