"""Synthetic tournaments drawn from known ratings, to validate the fit and its intervals."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from marl_bgs_eval.ratings import ELO_PER_LOGIT


def synthetic_games(
    elo: Sequence[float],
    nu: float = 0.5,
    maps: int = 5,
    pairs_per_map: int = 20,
    seed: int = 0,
    pair_effect: float = 0.0,
    mirror: bool = False,
) -> pd.DataFrame:
    """Round robin of every ordered pairing: `pairs_per_map` spawn-swapped pairs on each map,
    each game drawn from the Bradley-Terry-Davidson model with the given ratings.

    `pair_effect` (Elo) adds a shared random shift to both games of a pair (correlated pairs);
    `mirror` gives both games of a pair one drawn result, as mirror-image games end alike.
    Columns: system_a, system_b, map, pair_id, result.
    """
    rng = np.random.default_rng(seed)
    theta = (np.asarray(elo, float) - np.mean(elo)) / ELO_PER_LOGIT
    n = theta.size
    a, b = np.array([(i, j) for i in range(n) for j in range(n) if i != j]).T
    P, per = a.size, maps * pairs_per_map
    pa = np.repeat(a, per * 2)
    pb = np.repeat(b, per * 2)
    m = np.tile(np.repeat(np.arange(maps), pairs_per_map * 2), P)
    pair = np.arange(P * per * 2) // 2
    shift = np.repeat(rng.normal(0, pair_effect / ELO_PER_LOGIT, P * per), 2) if pair_effect else 0
    h = 0.5 * (theta[pa] - theta[pb] + shift)
    z = np.exp(h) + np.exp(-h) + nu
    u = (np.repeat(rng.random(P * per), 2) if mirror else rng.random(pa.size)) * z
    result = np.where(u < np.exp(h), "win", np.where(u < np.exp(h) + nu, "draw", "loss"))
    names = np.asarray([f"s{k}" for k in range(n)], dtype=object)
    return pd.DataFrame(
        {"system_a": names[pa], "system_b": names[pb], "map": m, "pair_id": pair, "result": result}
    )
