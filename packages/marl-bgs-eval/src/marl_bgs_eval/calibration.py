"""How often the Elo intervals hold the true ratings, measured on synthetic tournaments.

Every tournament is the paper's Season 0 field (`SEASON_0`, nine Systems) playing every ordered
pairing on `maps` maps, drawn from the Bradley-Terry-Davidson model (`synthetic_games`) with draw
parameter `nu` (0.4: about 14% draws) and the two games of a spawn-swapped pair ending alike, as
mirror-image games do. Each tournament is fitted once and resampled by each method of `METHODS`
with the same seed: "rescaled" (Rao-Wu, what `rate` uses), "plain" (every stratum's k pairs
drawn again, too narrow when k is small) and "maps" (`rate(..., scheme="maps")`: the maps, then
the pairs within each; the synthetic maps are all alike, so here it can only be too wide).
Coverage counts the intervals that hold the true Elo; its 95% interval is Clopper-Pearson's over
all intervals as if they were independent (an approximation: the nine of one tournament share a
fit).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.progress import progress_bar
from marl_bgs_eval.ratings import bootstrap_elo
from marl_bgs_eval.resampling import check_bootstrap, check_seed
from marl_bgs_eval.synthetic import synthetic_games
from marl_bgs_eval.tiers import MEAN_ELO

SEASON_0 = (1441.0, 1358.0, 1304.0, 1300.0, 1240.0, 1140.0, 1043.0, 1000.0, 974.0)
METHODS: dict[str, dict[str, Any]] = {  # method: bootstrap_elo's keywords
    "rescaled": {"rescaled": True},
    "plain": {"rescaled": False},
    "maps": {"scheme": "maps"},
}
COLUMNS = [
    "games_per_pairing", "method", "tournaments", "intervals", "covered", "coverage",
    "coverage_low", "coverage_high", "mean_width", "rmse",
]  # fmt: skip


def _sizes(games_per_pairing: Sequence[int], maps: int) -> list[int]:
    if isinstance(maps, bool) or not isinstance(maps, int) or maps < 1:
        raise EvalError(f"maps: expected a positive number of maps, got {maps!r}")
    sizes = list(games_per_pairing) if isinstance(games_per_pairing, Sequence) else []
    if not sizes or any(
        isinstance(g, bool) or not isinstance(g, int | np.integer) or g < 1 or g % (2 * maps)
        for g in sizes
    ):
        raise EvalError(
            f"games_per_pairing: expected positive multiples of {2 * maps} (pairs on {maps} "
            f"maps), got {games_per_pairing!r}"
        )
    return [int(g) for g in sizes]


def coverage_study(
    tournaments: int,
    bootstrap: int,
    seed: int = 0,
    games_per_pairing: Sequence[int] = (40, 200),
    *,
    elo: Sequence[float] = SEASON_0,
    nu: float = 0.4,
    maps: int = 5,
    level: float = 0.95,
    methods: Sequence[str] = tuple(METHODS),
    progress: bool = False,
) -> pd.DataFrame:
    """One row per (games per pairing, method): tournaments, intervals (one per System and
    tournament), covered (those holding the true Elo), coverage with its 95% interval
    (coverage_low, coverage_high), mean_width (Elo) and rmse (Elo, the fit's error, the same
    for every method). `methods`: some of `METHODS`. attrs: the settings and draw_share, the
    share of games drawn."""
    if isinstance(tournaments, bool) or not isinstance(tournaments, int) or tournaments < 1:
        raise EvalError(f"tournaments: expected a positive number, got {tournaments!r}")
    bootstrap, seed = check_bootstrap(bootstrap), check_seed(seed)
    sizes = _sizes(games_per_pairing, maps)
    chosen = list(methods) if isinstance(methods, Sequence) and not isinstance(methods, str) else []
    if not chosen or any(m not in METHODS for m in chosen) or len(set(chosen)) < len(chosen):
        raise EvalError(f"methods: expected some of {list(METHODS)}, each once; got {methods!r}")
    if not 0 < level < 1:
        raise EvalError(f"level: expected a number in (0, 1), got {level!r}")
    truth = np.asarray(elo, float) - np.mean(elo) + MEAN_ELO
    q = 100 * (1 - level) / 2
    rows, draws, games = [], 0, 0
    total = tournaments * len(sizes)
    with progress_bar(progress, total, "coverage study", unit="tournaments") as show:
        for s, size in enumerate(sizes):
            hits = dict.fromkeys(chosen, 0)
            widths = dict.fromkeys(chosen, 0.0)
            squared = 0.0
            for t in range(tournaments):
                game_seed, boot_seed = np.random.SeedSequence([seed, size, t]).generate_state(2)
                g = synthetic_games(
                    elo, nu=nu, maps=maps, pairs_per_map=size // (2 * maps),
                    seed=int(game_seed), mirror=True,
                )  # fmt: skip
                draws += int(np.sum(g["result"].to_numpy() == "draw"))
                games += len(g)
                runs = [bootstrap_elo(g, bootstrap, int(boot_seed), **METHODS[m]) for m in chosen]
                squared += float(np.sum((runs[0][0].elo - truth) ** 2))  # one fit for all methods
                for method, (_, boots) in zip(chosen, runs, strict=True):
                    lo, hi = np.percentile(boots, [q, 100 - q], axis=0)
                    hits[method] += int(np.sum((lo <= truth) & (truth <= hi)))
                    widths[method] += float(np.sum(hi - lo))
                done = s * tournaments + t + 1
                show(done, done)
            n = tournaments * truth.size
            for method in chosen:
                ci = binomtest(hits[method], n).proportion_ci(0.95)
                rows.append(
                    (size, method, tournaments, n, hits[method], hits[method] / n, ci.low,
                     ci.high, widths[method] / n, float(np.sqrt(squared / n)))
                )  # fmt: skip
    out = pd.DataFrame(rows, columns=COLUMNS)
    out.attrs.update(
        bootstrap=bootstrap, seed=seed, nu=nu, maps=maps, level=level, draw_share=draws / games
    )
    return out
