"""Bradley-Terry-Davidson fit: gradient, recovery of known ratings, resampled intervals
(their coverage: test_calibration)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import check_grad

from marl_bgs_eval import EvalError, fit_btd, rate, system_metrics
from marl_bgs_eval.ratings import _objective, bootstrap_elo
from marl_bgs_eval.synthetic import synthetic_games

TRUE = np.array([974.0, 1043.0, 1140.0, 1240.0, 1358.0, 1441.0])


def test_gradient_is_exact() -> None:
    rng = np.random.default_rng(0)
    n, B = 4, 3
    i, j = np.array([0, 1, 2, 3, 0]), np.array([1, 2, 3, 0, 2])
    counts = rng.integers(0, 9, size=(B, 5, 3)).astype(float)
    x = rng.normal(size=B * n)
    f = lambda x: _objective(x, i, j, counts, n, 0.1, 0.04)[0]  # noqa: E731
    g = lambda x: _objective(x, i, j, counts, n, 0.1, 0.04)[1]  # noqa: E731
    assert check_grad(f, g, x) < 1e-5


def test_fit_recovers_known_ratings() -> None:
    games = synthetic_games(TRUE, nu=0.4, maps=5, pairs_per_map=40, seed=1)
    fit = fit_btd(games)
    truth = TRUE - TRUE.mean() + 1200
    err = fit.elo - truth
    assert abs(fit.elo.mean() - 1200) < 1e-6
    print(f"fit error: rmse {np.sqrt(np.mean(err**2)):.1f} Elo, max {np.abs(err).max():.1f} Elo")
    assert np.sqrt(np.mean(err**2)) < 20, err
    assert np.abs(err).max() < 40, err
    assert abs(fit.nu - 0.4) < 0.05


def test_probabilities_depend_only_on_the_gap() -> None:
    games = synthetic_games([1000, 1300], nu=0.5, maps=2, pairs_per_map=50, seed=2)
    shifted = synthetic_games([1400, 1700], nu=0.5, maps=2, pairs_per_map=50, seed=2)
    np.testing.assert_allclose(fit_btd(games).elo, fit_btd(shifted).elo)


def test_elo_refits_are_rescaled_by_default() -> None:
    """With 2 pairs per pairing and map, plain refits spread about sqrt(1/2) as far as rescaled
    ones (the default): the interval `rate` gives is the wider, calibrated one."""
    games = synthetic_games(TRUE[:4].tolist(), nu=0.4, maps=6, pairs_per_map=2, seed=3, mirror=True)
    _, default = bootstrap_elo(games, bootstrap=1500, seed=2)
    _, rescaled = bootstrap_elo(games, bootstrap=1500, seed=2, rescaled=True)
    _, plain = bootstrap_elo(games, bootstrap=1500, seed=2, rescaled=False)
    np.testing.assert_array_equal(default, rescaled)
    ratio = rescaled.std(axis=0) / plain.std(axis=0)
    assert np.all((ratio > 1.25) & (ratio < 1.6)), ratio


def test_rate_table_and_bootstrap_seed() -> None:
    games = synthetic_games(TRUE[:3], nu=0.4, maps=2, pairs_per_map=10, seed=5)
    r1 = rate(games, bootstrap=300, seed=9)
    r2 = rate(games, bootstrap=300, seed=9)
    pd.testing.assert_frame_equal(r1, r2)
    assert list(r1["rank"]) == [1, 2, 3]
    assert r1["elo"].is_monotonic_decreasing
    assert (r1["elo_low"] <= r1["elo"]).all()
    assert (r1["elo"] <= r1["elo_high"]).all()
    assert (r1["games"] == 2 * 2 * 10 * 2 * 2).all()
    assert r1["tier"].str.len().min() > 0


def test_rate_errors_name_the_problem() -> None:
    games = synthetic_games(TRUE[:2], maps=1, pairs_per_map=2)
    with pytest.raises(EvalError, match="pair_id"):
        rate(games.drop(columns="pair_id"), bootstrap=10)
    with pytest.raises(EvalError, match="result"):
        rate(games.assign(result="won"), bootstrap=10)
    with pytest.raises(EvalError, match="bootstrap"):
        rate(games, bootstrap=0)
    with pytest.raises(EvalError, match="two different"):
        rate(games.assign(system_b=games["system_a"]), bootstrap=10)


def _one_pairing(results: list[str]) -> pd.DataFrame:
    """A plays B on one map; consecutive games form a spawn-swapped pair."""
    n = len(results)
    return pd.DataFrame(
        {"system_a": ["A"] * n, "system_b": ["B"] * n, "map": [0] * n,
         "pair_id": np.arange(n) // 2, "result": results}
    )  # fmt: skip


def test_elo_gap_is_400_log10_of_the_win_ratio() -> None:
    """With no draws the fit is Bradley-Terry: gap = 400 log10(760 / 240) ~ 200.24 Elo.

    The weak prior on the draw parameter keeps nu ~ 7e-4 (not 0), which moves the gap ~0.06 Elo."""
    r = rate(_one_pairing(["win"] * 760 + ["loss"] * 240), bootstrap=20).set_index("system")
    gap = r.loc["A", "elo"] - r.loc["B", "elo"]
    assert gap == pytest.approx(400 * np.log10(760 / 240), abs=0.1)
    assert r.loc["A", "elo"] + r.loc["B", "elo"] == pytest.approx(2 * 1200)


def test_bootstrap_resamples_whole_pairs() -> None:
    """Every pair is one win and one loss, so every resample of pairs gives the same fit."""
    r = rate(_one_pairing(["win", "loss"] * 50), bootstrap=200)
    for col in ("elo_low", "elo_high"):
        np.testing.assert_allclose(r[col], r["elo"], atol=1e-6)
    np.testing.assert_allclose(r["elo"], 1200.0, atol=1e-6)


def test_bootstrap_resamples_within_each_map() -> None:
    """A wins every game on map 0 and loses every game on map 1: resampling pairs within each
    (pairing, map) keeps that half-and-half split, so the interval has zero width."""
    games = pd.concat(
        [
            _one_pairing(["win"] * 20),
            _one_pairing(["loss"] * 20).assign(map=1, pair_id=lambda d: d["pair_id"] + 10),
        ],
        ignore_index=True,
    )
    r = rate(games, bootstrap=200)
    for col in ("elo_low", "elo_high"):
        np.testing.assert_allclose(r[col], r["elo"], atol=1e-6)


def _map_split(wins_on: int, maps: int = 5) -> pd.DataFrame:
    """A deterministic pairing: A wins every game on the first `wins_on` maps and loses every
    game on the rest, 4 pairs per map."""
    return pd.concat(
        [
            _one_pairing(["win" if m < wins_on else "loss"] * 8).assign(
                map=m, pair_id=lambda d, m=m: d["pair_id"] + 4 * m
            )
            for m in range(maps)
        ],
        ignore_index=True,
    )


def test_the_maps_scheme_gives_a_deterministic_pairing_the_spread_of_its_maps() -> None:
    """Every pair on a map is the same game: resampled within each map (the default) the
    interval has zero width; resampling the five maps first gives the spread of having played
    only these maps (3 won of 5: anywhere from all lost to all won), around the same fit."""
    games = _map_split(3)
    pairs = rate(games, bootstrap=400, seed=1).set_index("system")
    maps = rate(games, bootstrap=400, seed=1, scheme="maps").set_index("system")
    np.testing.assert_allclose(pairs["elo_high"] - pairs["elo_low"], 0.0, atol=1e-6)
    np.testing.assert_allclose(maps["elo"], pairs["elo"])  # one fit; only the intervals differ
    assert (maps["elo_high"] - maps["elo_low"] > 200).all(), maps
    assert (maps["elo_low"] < maps["elo"]).all()
    assert (maps["elo"] < maps["elo_high"]).all()
    assert pairs.attrs["scheme"] == "pairs"
    assert maps.attrs["scheme"] == "maps"
    # won everywhere: every resample of maps is the same table again
    one_sided = rate(_map_split(5), bootstrap=100, scheme="maps")
    np.testing.assert_allclose(one_sided["elo_high"] - one_sided["elo_low"], 0.0, atol=1e-6)


def test_with_one_map_the_maps_scheme_is_the_pairs_scheme() -> None:
    games = synthetic_games(TRUE[:4].tolist(), nu=0.4, maps=1, pairs_per_map=6, seed=2)
    fit_a, pairs = bootstrap_elo(games, bootstrap=300, seed=3)
    fit_b, maps = bootstrap_elo(games, bootstrap=300, seed=3, scheme="maps")
    np.testing.assert_array_equal(pairs, maps)
    np.testing.assert_array_equal(fit_a.elo, fit_b.elo)
    several = synthetic_games(TRUE[:4].tolist(), nu=0.4, maps=3, pairs_per_map=6, seed=2)
    _, pairs = bootstrap_elo(several, bootstrap=300, seed=3)
    _, maps = bootstrap_elo(several, bootstrap=300, seed=3, scheme="maps")
    assert not np.array_equal(pairs, maps)


@pytest.mark.parametrize("scheme", ["map", "Pairs", "", None, 1])
def test_an_unknown_scheme_is_refused(scheme: object) -> None:
    games = synthetic_games(TRUE[:2], maps=1, pairs_per_map=2)
    want = r"^bootstrap_scheme: expected one of \['pairs', 'maps'\], got "
    with pytest.raises(EvalError, match=want):
        rate(games, bootstrap=10, scheme=scheme)  # type: ignore[arg-type]
    with pytest.raises(EvalError, match=want):
        bootstrap_elo(games, bootstrap=10, scheme=scheme)  # type: ignore[arg-type]
    with pytest.raises(EvalError, match=want):
        system_metrics(games, ["ultimates_per_100_ticks"], bootstrap=10, scheme=scheme)  # type: ignore[arg-type]


@pytest.mark.parametrize("level", [0.95, 0.8])
def test_interval_is_the_middle_share_of_the_refits(level: float) -> None:
    """elo_low/elo_high are the (1 - level)/2 and (1 + level)/2 quantiles of the same refits."""
    games = synthetic_games([1000, 1200, 1400], maps=2, pairs_per_map=6, seed=1)
    r = rate(games, bootstrap=300, seed=4, level=level).set_index("system")
    fit, boots = bootstrap_elo(games, bootstrap=300, seed=4)
    lo, hi = np.percentile(boots, [50 * (1 - level), 50 * (1 + level)], axis=0)
    for k, name in enumerate(fit.names):
        assert r.loc[name, "elo_low"] == pytest.approx(lo[k])
        assert r.loc[name, "elo_high"] == pytest.approx(hi[k])


def test_pairs_of_runs_with_different_seeds_are_resampled_apart() -> None:
    """Two runs (seeds 0 and 1) reuse pair ids: A wins every game of run 0 and loses every game
    of run 1. Merged by pair id, every unit would hold two wins and two losses and the interval
    would have zero width; kept apart, resampling sees all-win and all-loss pairs."""
    games = pd.concat(
        [_one_pairing(["win"] * 20).assign(seed=0), _one_pairing(["loss"] * 20).assign(seed=1)],
        ignore_index=True,
    )
    r = rate(games, bootstrap=300).set_index("system")
    assert r.loc["A", "elo_high"] - r.loc["A", "elo_low"] > 50
