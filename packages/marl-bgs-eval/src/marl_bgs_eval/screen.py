"""The teamwork screen (paper 7.5, S8, Table S14): every measure against Elo across a field.

For each measure, Spearman's rho between the Systems' values and their Elo (average ranks for
ties). Its p is two-sided and exact: the share of all orderings of the ratings whose |rho| is at
least the observed one, every ordering enumerated for up to `EXACT_UP_TO` Systems (nine Systems:
362,880 orderings), else `orderings` random ones from `seed` (then p = (1 + hits) / (1 +
orderings)). A System without a value for a measure (a share of kills with no kills) leaves that
measure's test; the others test it over their own orderings.

Screening many measures invites chance hits, so two corrections are given over the measures that
vary: Holm's step-down, and the Westfall-Young single-step max-statistic over the measures with a
value for every System (for each ordering, the largest |rho| over those measures; a measure's p
is the share of orderings whose largest |rho| reaches its own), which accounts for how the
measures move together.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.resampling import check_seed

EXACT_UP_TO = 10  # Systems whose orderings are all enumerated (10! = 3,628,800)
ORDERINGS = 100_000  # random orderings for larger fields
CHUNK = 65_536  # orderings scored at once
TIE = 1e-9  # |rho| within this of the observed one counts as reaching it
COLUMNS = ["measure", "rho", "p", "p_holm", "p_maxt", "systems", "varies", "exact"]


def _standard_ranks(x: np.ndarray) -> np.ndarray | None:
    """Average ranks centred and scaled so that the dot product of two is Pearson's r of the
    ranks (Spearman's rho); None where all values are equal."""
    r = rankdata(x)
    r = r - r.mean()
    norm = float(np.sqrt(np.sum(r * r)))
    return None if norm == 0.0 else r / norm


def _orderings(n: int, count: int, seed: int) -> tuple[np.ndarray, bool]:
    """(orderings [P, n], exact): every permutation of n for n <= EXACT_UP_TO, else `count`
    random ones."""
    if n <= EXACT_UP_TO:
        return np.fromiter(
            itertools.chain.from_iterable(itertools.permutations(range(n))), np.int8,
            count=math.factorial(n) * n,
        ).reshape(-1, n), True  # fmt: skip
    rng = np.random.default_rng(seed)
    return rng.permuted(np.tile(np.arange(n), (count, 1)), axis=1), False


def _hits(
    elo: np.ndarray, ranks: np.ndarray, perms: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Per measure, the orderings whose |rho| reaches its own, and the orderings whose largest
    |rho| over all the measures does (both counts [M]). `ranks` [M, n] standard ranks."""
    observed = np.abs(ranks @ elo)
    own = np.zeros(len(ranks), np.int64)
    peak = np.zeros(len(ranks), np.int64)
    for start in range(0, len(perms), CHUNK):
        rho = np.abs(elo[perms[start : start + CHUNK]] @ ranks.T)  # [chunk, M]
        own += np.sum(rho >= observed - TIE, axis=0)
        peak += np.sum(rho.max(axis=1)[:, None] >= observed - TIE, axis=0)
    return own, peak


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN stays NaN and is not counted)."""
    p = np.asarray(p, float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    steps = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(steps, 1.0)
    return out


def screen(
    values: pd.DataFrame, elo: pd.Series, *, orderings: int = ORDERINGS, seed: int = 0
) -> pd.DataFrame:  # fmt: skip
    """One row per measure (a column of `values`, whose index is the Systems; `elo` by System):
    rho, p, p_holm, p_maxt (NaN where the measure does not vary or the correction does not
    cover it), systems (those with a value), varies, exact (every ordering enumerated)."""
    if not isinstance(values, pd.DataFrame) or values.empty:
        raise EvalError("values: expected a non-empty DataFrame (Systems x measures)")
    if not isinstance(elo, pd.Series):
        raise EvalError(f"elo: expected a pandas Series by System, got {type(elo).__name__}")
    missing = [s for s in values.index if s not in elo.index]
    if missing:
        raise EvalError(f"elo: no rating for System(s) {missing}")
    if isinstance(orderings, bool) or not isinstance(orderings, int) or orderings < 1:
        raise EvalError(f"orderings: expected a positive integer, got {orderings!r}")
    check_seed(seed)
    ratings = elo.reindex(values.index).to_numpy(float)
    if not np.isfinite(ratings).all():
        raise EvalError("elo: every System's rating must be a finite number")
    if np.ptp(ratings) == 0:
        raise EvalError(f"elo: every System is rated {ratings[0]:g}; nothing goes with strength")
    table = values.apply(pd.to_numeric, errors="coerce").to_numpy(float)  # [n, M]
    rows: dict[Any, dict[str, Any]] = {
        m: {"measure": m, "rho": np.nan, "p": np.nan, "p_holm": np.nan, "p_maxt": np.nan,
            "systems": int(np.isfinite(table[:, j]).sum()), "varies": False, "exact": False}
        for j, m in enumerate(values.columns)
    }  # fmt: skip
    # Measures grouped by which Systems have a value: each group tests over its own orderings.
    groups: dict[tuple[bool, ...], list[int]] = {}
    for j in range(table.shape[1]):
        groups.setdefault(tuple(np.isfinite(table[:, j])), []).append(j)
    full = tuple([True] * len(ratings))
    for mask, cols in groups.items():
        keep = np.asarray(mask)
        elo_ranks = _standard_ranks(ratings[keep]) if keep.sum() >= 3 else None
        if elo_ranks is None:
            continue
        ranked = [(j, _standard_ranks(table[keep, j])) for j in cols]
        ranked = [(j, r) for j, r in ranked if r is not None]
        if not ranked:
            continue
        ranks = np.stack([r for _, r in ranked])
        perms, exact = _orderings(int(keep.sum()), orderings, seed)
        own, peak = _hits(elo_ranks, ranks, perms)
        total = len(perms) if exact else len(perms) + 1
        extra = 0 if exact else 1  # a random test counts the observed ordering
        for k, (j, r) in enumerate(ranked):
            row = rows[values.columns[j]]
            row.update(rho=round(float(r @ elo_ranks), 12), p=(own[k] + extra) / total, varies=True,
                       exact=exact)  # fmt: skip
            if mask == full:
                row["p_maxt"] = (peak[k] + extra) / total
    out = pd.DataFrame(list(rows.values()), columns=COLUMNS)
    out["p_holm"] = holm(out["p"].to_numpy(float))
    return out


def teamwork_screen(
    measures: pd.DataFrame, ratings: pd.DataFrame, systems: list[str] | None = None, **kwargs: Any
) -> pd.DataFrame:
    """`screen` of a `system_metrics` table against a `rate` table (a season's `measures.csv`
    and `ratings.csv`), over `systems` (default: every System in both). The max-statistic
    correction covers the measures with a value for every System."""
    for name, table, cols in (("measures", measures, ["system", "measure", "value"]),
                              ("ratings", ratings, ["system", "elo"])):  # fmt: skip
        if not isinstance(table, pd.DataFrame):
            raise EvalError(f"{name}: expected a pandas DataFrame, got {type(table).__name__}")
        lost = [c for c in cols if c not in table.columns]
        if lost:
            raise EvalError(f"{name}: missing column(s) {lost}")
    wide = measures.pivot_table(index="system", columns="measure", values="value",
                                aggfunc="first", dropna=False, sort=False)  # fmt: skip
    elo = pd.Series(ratings["elo"].to_numpy(float), index=ratings["system"].astype(str))
    known = [s for s in wide.index if s in elo.index]
    chosen = known if systems is None else list(systems)
    unknown = [s for s in chosen if s not in known]
    if unknown:
        raise EvalError(f"systems: {unknown} have no measures or no rating; known: {known}")
    if len(chosen) < 3:
        raise EvalError(f"systems: a screen needs at least 3 Systems, got {len(chosen)}")
    order = list(dict.fromkeys(measures["measure"].astype(str)))
    return screen(wide.loc[chosen, order], elo, **kwargs)


def plot_screen(table: pd.DataFrame, path: str | Path, title: str = "Teamwork screen") -> Path:
    """Each measure's rho with Elo as a bar (dark: Holm p < 0.05; mid: p < 0.05), written as a
    PNG with matplotlib's Agg renderer."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    out = Path(path)
    if not out.parent.is_dir():
        raise EvalError(f"path: folder {str(out.parent)!r} does not exist")
    shown = table.loc[table["varies"].to_numpy(bool)].sort_values(by="rho")
    fig = Figure(figsize=(6.4, 0.9 + 0.24 * max(len(shown), 1)), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    colour = ["#1f3b73" if h < 0.05 else "#5b8bd0" if p < 0.05 else "#c9d6ea"
              for p, h in zip(shown["p"], shown["p_holm"], strict=True)]  # fmt: skip
    ax.barh(shown["measure"].astype(str), shown["rho"], color=colour)
    ax.set_ylim(-0.6, len(shown) - 0.4)  # no blank rows at the ends of a long list
    ax.axvline(0.0, color="black", lw=0.6)
    ax.set_xlim(-1.0, 1.0)
    ax.set_xlabel("Spearman's rho with Elo (dark: Holm p < 0.05; mid: p < 0.05)")
    ax.tick_params(axis="y", labelsize=7)
    n = int(table["systems"].to_numpy().max()) if len(table) else 0
    ax.set_title(f"{title} ({n} Systems)", fontsize=10)
    fig.savefig(out, format="png", dpi=150)
    return out
