"""Every System's analysis measures, each read from its own side, with resampled 95% intervals.

A System's game is read from side "a" where it is `system_a` and from "b" where it is
`system_b` (a self-play game from both). Its measure is pooled over all its games (ratio of sums).
Intervals come from resampling as for Elo (`ratings`): within every pairing and map, whole
spawn-swapped pairs (the games sharing seed, system_a, system_b and pair_id) are drawn again with
replacement, rescaled (`resampling`: k - 1 of k pairs, each weighing k / (k - 1), so that few
pairs do not make the intervals narrow). Each pair's sums are computed once; a resample is a
matrix of pair weights.
With the same seed and a table from one seed without self-play, the draws match
`bootstrap_elo`'s stratum by stratum: resample k of a measure and of the Elo come from one
resampled tournament. Memory: the resamples' sums, [bootstrap, Systems, 2 x measures] floats.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from marl_bgs.core.checks import did_you_mean
from marl_bgs_eval.distinct import per_system
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.measures import SCALE, Measure
from marl_bgs_eval.modes import parts as mode_parts
from marl_bgs_eval.resampling import (
    NEEDED,
    check_bootstrap,
    check_scheme,
    check_seed,
    draw_weights,
    pair_units,
)
from marl_bgs_eval.results import mode_of

COLUMNS = ["system", "measure", "kind", "unit", "value", "low", "high", "games",
           "distinct_games", "repeats"]  # fmt: skip


def _check(games: object, bootstrap: object, seed: object, level: object) -> pd.DataFrame:
    if not isinstance(games, pd.DataFrame):
        raise EvalError(f"games: expected a pandas DataFrame, got {type(games).__name__}")
    if games.empty:
        raise EvalError("games: the table holds no games")
    missing = [c for c in NEEDED if c not in games.columns]
    if missing:
        raise EvalError(f"games: missing column(s) {missing}")
    check_bootstrap(bootstrap)
    check_seed(seed)
    if isinstance(level, bool) or not isinstance(level, float | int) or not 0 < level < 1:
        raise EvalError(f"level: expected a number in (0, 1), got {level!r}")
    return games.reset_index(drop=True)


def _names(
    measures: Sequence[str] | None, default: dict[str, Measure], more: dict[str, Measure]
) -> list[str]:
    """The measures asked for (every one of `default` when None), each of `default` or `more`."""
    if measures is None:
        return list(default)
    catalog = {**default, **more}
    if isinstance(measures, str) or not isinstance(measures, Sequence) or not measures:
        raise EvalError(f"measures: expected a non-empty list of names, got {measures!r}")
    for m in measures:
        if not isinstance(m, str) or m not in catalog:
            hint = did_you_mean(m, catalog)
            also = (
                f", or one of the mode's {len(more)} team measures ({min(more)}, ...)"
                if more
                else ""
            )
            raise EvalError(f"measure: unknown {m!r}{hint}; expected one of {list(default)}{also}")
    return list(measures)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1.0), np.nan)


def system_metrics(
    games: pd.DataFrame,
    measures: Sequence[str] | None = None,
    *,
    bootstrap: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    scheme: str = "pairs",
) -> pd.DataFrame:
    """One row per (System, measure): system, measure, kind, unit, value (pooled over the
    System's games from its own side), low and high (the middle `level` of `bootstrap`
    resamples of spawn-swapped pairs within every pairing and map, or with `scheme="maps"` of
    maps and then pairs (`resampling`); resamples whose denominator is 0 are left out), games
    (the games it played; a self-play game counts once), distinct_games and repeats (one of its
    pairings replays a few games: `distinct`). A value is NaN where its denominator is 0 (no
    kills for a share of kills). `measures` (default: the mode's analysis measures) may also
    name the mode's team-level measures (`team_measures`)."""
    g = _check(games, bootstrap, seed, level)
    scheme = check_scheme(scheme)
    parts_of = mode_parts(mode_of(g))
    names = _names(measures, parts_of.measures(), parts_of.team_measures())
    catalog = {**parts_of.measures(), **parts_of.team_measures()}
    systems = sorted({*g["system_a"].astype(str), *g["system_b"].astype(str)})
    index = {s: k for k, s in enumerate(systems)}
    # parts[side]: per game, per measure, (num, den), already scaled
    parts = {}
    for side in ("a", "b"):
        cols = []
        for name in names:
            m = catalog[name]
            num, den = m(g, side)
            cols.append(np.stack([SCALE[m.kind] * num.to_numpy(), den.to_numpy()], axis=-1))
        parts[side] = np.stack(cols, axis=1)  # [G, M, 2]
    unit, strata, maps = pair_units(g)
    U, M = len(strata), len(names)
    per_unit = {}
    for side in ("a", "b"):
        sums = np.zeros((U, M, 2))
        np.add.at(sums, unit, parts[side])
        per_unit[side] = sums.reshape(U, M * 2)
    sys_of_unit = {}
    for side in ("a", "b"):
        sys_of_unit[side] = np.zeros(U, dtype=int)
        sys_of_unit[side][unit] = [index[s] for s in g[f"system_{side}"].astype(str)]
    S = len(systems)
    point = np.zeros((S, M * 2))
    boot = np.zeros((bootstrap, S, M * 2))
    rng = np.random.default_rng(int(seed))
    by_map = maps if scheme == "maps" else None
    for members, weights in draw_weights(strata, int(bootstrap), rng, maps=by_map):
        for side in ("a", "b"):
            k = sys_of_unit[side][members[0]]
            point[k] += per_unit[side][members].sum(axis=0)
            boot[:, k] += weights @ per_unit[side][members]
    value = _ratio(point[:, 0::2], point[:, 1::2])  # [S, M]
    ratios = _ratio(boot[..., 0::2], boot[..., 1::2])  # [B, S, M]
    q = 100 * (1 - level) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all resamples without a denominator
        low, high = np.nanpercentile(ratios, [q, 100 - q], axis=0)
    counted = per_system(g)
    rows = [
        (s, name, catalog[name].kind, catalog[name].unit, float(value[i, j]),
         float(low[i, j]), float(high[i, j]), int(counted.at[s, "games"]),
         int(counted.at[s, "distinct_games"]), bool(counted.at[s, "repeats"]))
        for i, s in enumerate(systems)
        for j, name in enumerate(names)
    ]  # fmt: skip
    out = pd.DataFrame(rows, columns=COLUMNS)
    out.attrs.update(bootstrap=int(bootstrap), seed=int(seed), level=float(level), scheme=scheme)
    return out


def draw_measure_vs_elo(
    axes: Any, metrics_table: pd.DataFrame, ratings_table: pd.DataFrame, measure: str
) -> float:
    """Draw one Figure 6 panel on a matplotlib Axes: one point per System at its Elo (from
    `rate`) and the measure's value (from `system_metrics`), both intervals as error bars, and
    Spearman's rho in the title (NaN, shown "n/a", below 3 Systems or with no spread). Returns
    rho."""
    from scipy.stats import spearmanr

    for name, table, cols in (
        ("metrics_table", metrics_table, ["system", "measure", "unit", "value", "low", "high"]),
        ("ratings_table", ratings_table, ["system", "elo", "elo_low", "elo_high"]),
    ):
        if not isinstance(table, pd.DataFrame):
            raise EvalError(f"{name}: expected a pandas DataFrame, got {type(table).__name__}")
        missing = [c for c in cols if c not in table.columns]
        if missing:
            raise EvalError(f"{name}: missing column(s) {missing}")
    rows = metrics_table[metrics_table["measure"] == measure]
    if rows.empty:
        known = sorted(set(metrics_table["measure"].astype(str)))
        hint = did_you_mean(measure, known)
        raise EvalError(f"measure: {measure!r} is not in metrics_table{hint}; it holds {known}")
    both = rows.merge(ratings_table[["system", "elo", "elo_low", "elo_high"]], on="system")
    both = both.loc[np.isfinite(both["value"].to_numpy(float))]
    if both.empty:
        raise EvalError(f"{measure}: no System has both a rating and a value")
    x, y = both["elo"].to_numpy(float), both["value"].to_numpy(float)
    xerr = [x - both["elo_low"].to_numpy(float), both["elo_high"].to_numpy(float) - x]
    yerr = [y - both["low"].to_numpy(float), both["high"].to_numpy(float) - y]
    rho = float("nan")
    if len(both) >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
        rho = float(np.asarray(spearmanr(x, y)[0]))
    bars = {k: np.maximum(np.nan_to_num(v), 0.0) for k, v in (("xerr", xerr), ("yerr", yerr))}
    axes.errorbar(x, y, **bars, fmt="o", ms=4, capsize=2, lw=0.8)
    for name, xi, yi in zip(both["system"].astype(str), x, y, strict=True):
        axes.annotate(name, (xi, yi), xytext=(3, 3), textcoords="offset points", fontsize=7)
    shown = "n/a" if np.isnan(rho) else f"{rho:+.2f}"
    axes.set_title(f"{measure}\nSpearman's rho = {shown} ({len(both)} Systems)", fontsize=9)
    axes.set_xlabel("Elo")
    axes.set_ylabel(f"{measure} ({both['unit'].iloc[0]})", fontsize=8)
    return rho


def plot_measure_vs_elo(
    metrics_table: pd.DataFrame, ratings_table: pd.DataFrame, measure: str, path: str | Path
) -> Path:
    """`draw_measure_vs_elo` on a figure of its own, written as a PNG to `path` with
    matplotlib's Agg renderer (no window, no pyplot state). Returns the path."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as err:  # pragma: no cover - matplotlib is an optional dependency
        raise EvalError("plot_measure_vs_elo needs matplotlib (pip install matplotlib)") from err
    out = Path(path)
    if not out.parent.is_dir():
        raise EvalError(f"path: folder {str(out.parent)!r} does not exist")
    fig = Figure(figsize=(4.8, 3.8), layout="constrained")
    FigureCanvasAgg(fig)
    draw_measure_vs_elo(fig.add_subplot(), metrics_table, ratings_table, measure)
    fig.savefig(out, format="png", dpi=150)
    return out
