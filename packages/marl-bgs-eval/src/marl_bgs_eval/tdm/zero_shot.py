"""Zero-shot coordination (paper 7.7, S9): a stranger plays one class of a base team.

Each stranger (and, as the floor, a random agent) takes one class of the base team in turn; every
resulting team plays every field member on the same maps, spawn ends and seed numbers as the base
team alone, so game n of each team starts from the same position. A stranger's cost is its
team's point margin per game minus the base team's in the same game, with a 95% interval from
resampling whole seed pairs within each opponent. Full metrics give its spacing: its mean
distance to its four teammates, against the base team's agent of that class in the same games.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from marl_bgs.tdm.classes import CLASS_LETTERS, CLASS_NAMES
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.evaluate import as_system, evaluate
from marl_bgs_eval.resampling import check_bootstrap, draw_weights
from marl_bgs_eval.systems import System, random_system
from marl_bgs_eval.tdm.compose import team
from marl_bgs_eval.tdm.metrics.analysis import CLASSES

RANDOM = "random"  # the stranger name of the random-agent floor


def _distance(games: pd.DataFrame, letter: str) -> pd.Series:
    """Per game: mean distance from team A's agent of class `letter` to its living teammates,
    weighted by the ticks both lived (NaN where the roster has no such agent)."""
    out = pd.Series(np.nan, index=games.index)
    for roster, g in games.groupby("roster_a", sort=False):
        i = str(roster).find(letter)
        if i < 0:
            continue
        pairs = [f"a{min(i, j)}>a{max(i, j)}" for j in range(len(str(roster))) if j != i]
        ticks = g[[f"teammate_ticks.{p}" for p in pairs]].sum(axis=1)
        dist = g[[f"teammate_distance.{p}" for p in pairs]].sum(axis=1)
        out[g.index] = dist / ticks.where(ticks > 0)
    return out


def _interval(diff: pd.DataFrame, bootstrap: int, rng: np.random.Generator) -> tuple[float, float]:
    """95% interval of the mean per-game change, resampling seed pairs within each opponent
    (`resampling.draw_weights`, the draws of the Elo and metric intervals)."""
    pairs = diff.groupby(["opponent", "pair_id"], sort=True)["change"]
    per_pair = cast(pd.DataFrame, pairs.agg(["sum", "size"]))
    strata = per_pair.index.get_level_values("opponent").factorize(sort=True)[0]
    sums, sizes = per_pair["sum"].to_numpy(float), per_pair["size"].to_numpy(float)
    change, games = np.zeros(bootstrap), np.zeros(bootstrap)
    for members, weights in draw_weights(strata, bootstrap, rng):
        change += weights @ sums[members]
        games += weights @ sizes[members]
    low, high = np.percentile(change / games, [2.5, 97.5])
    return float(low), float(high)


def zero_shot(
    base: System | str,
    strangers: Sequence[System | str],
    field: Sequence[System | str],
    *,
    classes: str = CLASSES,
    with_random: bool = True,
    bootstrap: int = 2000,
    seed: int = 0,
    **evaluate_kwargs: Any,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each stranger in each class of `classes` (plus a random agent per class with
    `with_random`) inside the base team, against every System of `field`.

    `evaluate_kwargs` go to every `evaluate` call (maps, games_per_map, batch_size, rule
    keywords); every team plays with the same `seed`, so game n matches across teams. Returns
    (summary, games): one summary row per (stranger, class) with the mean point-margin change
    per game against the base team alone, its 95% interval (`bootstrap` resamples of seed pairs
    within each opponent, from `seed`), and spacing: the stranger's mean distance to its
    teammates, the base agent's in the same games, and the difference. `games` holds every
    game played, with `team` and `stranger`/`class` columns.
    """
    if "metrics" in evaluate_kwargs:
        raise EvalError("metrics: zero_shot always records full metrics (for spacing)")
    if not isinstance(classes, str) or not classes or set(classes) - set(CLASS_LETTERS):
        raise EvalError(f"classes: expected letters of MWHRP, got {classes!r}")
    bootstrap = check_bootstrap(bootstrap)
    home = as_system(base, "base")
    guests = [as_system(s, f"strangers[{k}]") for k, s in enumerate(strangers)]
    opponents = [as_system(s, f"field[{k}]") for k, s in enumerate(field)]
    if not opponents:
        raise EvalError("field: expected at least one System to play against")
    teams: list[tuple[str, str, System]] = [("", "", home)]
    named = [(g.name, g) for g in guests] + ([(RANDOM, random_system())] if with_random else [])
    for label, guest in named:
        for c in classes:
            mixed = team(classes={c: guest}, rest=home, name=f"{home.name}+{label}@{c}")
            teams.append((label, c, mixed))
    frames = []
    for label, c, t in teams:
        for opp in opponents:
            g = evaluate(t, opp, metrics="full", seed=seed, **evaluate_kwargs)
            frames.append(g.assign(stranger=label, **{"class": c}, opponent=opp.name))
    games = pd.concat(frames, ignore_index=True)
    return _summarize(games, home.name, bootstrap, seed), games


def _summarize(games: pd.DataFrame, base: str, bootstrap: int, seed: int) -> pd.DataFrame:
    games = games.assign(margin=games["points_a"] - games["points_b"])
    alone = games[games["stranger"] == ""].set_index(["opponent", "game"])
    rng = np.random.default_rng(seed)
    rows = []
    strangers = games.loc[games["stranger"] != ""]
    for (label, c), g in strangers.groupby(["stranger", "class"], sort=False):
        ref = alone.loc[list(zip(g["opponent"], g["game"], strict=True))].reset_index()
        diff = pd.DataFrame(
            {
                "opponent": g["opponent"].to_numpy(),
                "pair_id": g["pair_id"].to_numpy(),
                "change": g["margin"].to_numpy() - ref["margin"].to_numpy(),
            }
        )
        low, high = _interval(diff, bootstrap, rng)
        own = float(_distance(g, c).mean())
        home = float(_distance(ref, c).mean())
        rows.append(
            {
                "base": base, "stranger": label, "class": c, "games": len(g),
                "margin_change": float(cast(pd.Series, diff["change"]).mean()),
                "low": low, "high": high,
                "distance": own, "base_distance": home, "distance_added": own - home,
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


def plot_zero_shot(
    summary: pd.DataFrame, path: str | Path, title: str = "Zero-shot coordination"
) -> Path:
    """Each stranger's point-margin change per game in each class (a panel per class, strangers
    in the summary's order, the random agent last), with its 95% interval, written as a PNG with
    matplotlib's Agg renderer (the paper's Figure S7)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    out = Path(path)
    if not out.parent.is_dir():
        raise EvalError(f"path: folder {str(out.parent)!r} does not exist")
    classes = list(dict.fromkeys(summary["class"].astype(str)))
    strangers = list(dict.fromkeys(summary["stranger"].astype(str)))
    order = [s for s in strangers if s != RANDOM] + [s for s in strangers if s == RANDOM]
    fig = Figure(figsize=(2.2 * max(len(classes), 1) + 1.6, 0.8 + 0.32 * max(len(order), 1)),
                 layout="constrained")  # fmt: skip
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, max(len(classes), 1), sharey=True, squeeze=False)[0]
    for ax, c in zip(axes, classes, strict=False):
        rows = summary[summary["class"].astype(str) == c].set_index("stranger").reindex(order)
        change = rows["margin_change"].to_numpy(float)
        low, high = rows["low"].to_numpy(float), rows["high"].to_numpy(float)
        err = np.clip([change - low, high - change], 0.0, None)  # rounding: never below 0
        colour = ["#9a9a9a" if s == RANDOM else "#3b6fb6" for s in order]
        ax.barh(order, change, xerr=err, color=colour, ecolor="black", capsize=2)
        ax.axvline(0.0, color="black", lw=0.8, ls="--")
        ax.set_title(CLASS_NAMES[CLASS_LETTERS[c]].capitalize() if c in CLASS_LETTERS else c,
                     fontsize=9)  # fmt: skip
        ax.tick_params(labelsize=7)
        ax.invert_yaxis()
    fig.supxlabel("Point margin change per game, against the base team alone", fontsize=8)
    base = str(summary["base"].iat[0]) if len(summary) else ""
    fig.suptitle(f"{title}: strangers in {base}'s team", fontsize=10)
    fig.savefig(out, format="png", dpi=150)
    return out
