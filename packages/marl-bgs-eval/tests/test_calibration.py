"""The rescaled pair bootstrap, mirror tournaments and the coverage study of the Elo intervals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from marl_bgs_eval import EvalError
from marl_bgs_eval.calibration import COLUMNS, coverage_study
from marl_bgs_eval.cli import app
from marl_bgs_eval.resampling import draw_weights
from marl_bgs_eval.synthetic import synthetic_games

SIZES = (2, 4, 7)  # units per stratum


def _resampled_variance(rescaled: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per stratum: the variance of the resampled weighted total of its units' values over
    40,000 resamples, and the stratified-sampling variance k s^2 it should match."""
    rng = np.random.default_rng(3)
    strata = np.repeat(np.arange(len(SIZES)), SIZES)
    y = rng.normal(size=strata.size) * 10
    found, expected = [], []
    for members, weights in draw_weights(strata, 40_000, rng, rescaled):
        k = members.size
        np.testing.assert_allclose(weights.sum(axis=1), k)  # every stratum keeps its weight
        found.append(np.var(weights @ y[members]))
        expected.append(k * np.var(y[members], ddof=1))
    return np.asarray(found), np.asarray(expected)


def test_rescaled_bootstrap_has_the_stratified_sampling_variance() -> None:
    """A weighted total is linear, so its variance is known: k s^2 per stratum. The rescaled
    draws match it; drawing all k units again gives only (k - 1) / k of it."""
    found, expected = _resampled_variance(rescaled=True)
    np.testing.assert_allclose(found / expected, 1.0, atol=0.03)
    plain, _ = _resampled_variance(rescaled=False)
    k = np.asarray(SIZES)
    np.testing.assert_allclose(plain / expected, (k - 1) / k, atol=0.03)


def test_a_stratum_of_one_unit_keeps_it() -> None:
    (members, weights), *_ = draw_weights(np.array([0, 1, 1]), 5, np.random.default_rng(0))
    assert members.tolist() == [0]
    assert weights.tolist() == [[1.0]] * 5


def test_the_maps_scheme_resamples_maps_then_pairs() -> None:
    """Five maps of one unit each: the maps are the resampled items, so the weighted total's
    variance is the rescaled bootstrap's M s^2 and every resample keeps the total weight M. With
    one map there is nothing to draw: the draws are the pairs scheme's, number for number."""
    rng = np.random.default_rng(2)
    y = rng.normal(size=5) * 10
    parts = draw_weights(np.arange(5), 40_000, rng, maps=np.arange(5))
    weights = np.concatenate([w for _, w in parts], axis=1)  # [B, 5 maps]
    np.testing.assert_allclose(weights.sum(axis=1), 5.0)
    np.testing.assert_allclose(np.var(weights @ y) / (5 * np.var(y, ddof=1)), 1.0, atol=0.03)
    strata = np.repeat([0, 1], [3, 4])
    one_map = draw_weights(strata, 50, np.random.default_rng(7), maps=np.zeros(2, int))
    pairs = draw_weights(strata, 50, np.random.default_rng(7))
    for (m1, w1), (m2, w2) in zip(one_map, pairs, strict=True):
        np.testing.assert_array_equal(m1, m2)
        np.testing.assert_array_equal(w1, w2)


def test_a_map_drawn_twice_draws_its_pairs_twice() -> None:
    """Two maps of 3 pairs: a resample holds one map (rescaled: M - 1 = 1 draw, weight 2); its
    pairs are drawn within that copy (2 of 3, weight 3/2), so each map's weights total 6 or 0."""
    strata, maps = np.repeat([0, 1], 3), np.array([0, 1])
    (_, w0), (_, w1) = draw_weights(strata, 2000, np.random.default_rng(0), maps=maps)
    totals = np.stack([w0.sum(axis=1), w1.sum(axis=1)], axis=1)
    assert set(map(tuple, totals.tolist())) == {(6.0, 0.0), (0.0, 6.0)}
    assert set(np.unique(w0)) <= {0.0, 3.0, 6.0}


def test_mirror_pairs_end_alike() -> None:
    elo = [1000.0, 1200.0, 1300.0]
    g = synthetic_games(elo, nu=0.4, maps=2, pairs_per_map=30, seed=4, mirror=True)
    first, second = g["result"].to_numpy()[0::2], g["result"].to_numpy()[1::2]
    assert (g["pair_id"].to_numpy()[0::2] == g["pair_id"].to_numpy()[1::2]).all()
    assert (first == second).all()
    assert set(first) == {"win", "draw", "loss"}
    independent = synthetic_games(elo, nu=0.4, maps=2, pairs_per_map=30, seed=4)
    assert (independent["result"].to_numpy()[0::2] != independent["result"].to_numpy()[1::2]).any()


def test_coverage_study_table_and_the_wider_rescaled_intervals() -> None:
    """At 4 pairs per pairing and map, rescaled intervals are about sqrt(4 / 3) = 1.15 times
    as wide as plain ones; the maps scheme adds the maps' spread on top; the fit (and its RMSE)
    is the same for all."""
    t = coverage_study(6, 150, seed=2, games_per_pairing=(40,))
    assert list(t.columns) == COLUMNS
    assert t["method"].tolist() == ["rescaled", "plain", "maps"]
    low, coverage, high = (t[c].to_numpy() for c in ("coverage_low", "coverage", "coverage_high"))
    assert t["intervals"].tolist() == [6 * 9] * 3
    assert np.all((low <= coverage) & (coverage <= high))
    assert len(set(t["rmse"].tolist())) == 1
    width = t.set_index("method")["mean_width"]
    assert 1.09 < width["rescaled"] / width["plain"] < 1.22, width
    assert 1.2 < width["maps"] / width["rescaled"] < 1.7, width
    assert 0.08 < t.attrs["draw_share"] < 0.2
    two = coverage_study(6, 150, seed=2, games_per_pairing=(40,), methods=["rescaled", "plain"])
    pd.testing.assert_frame_equal(t.iloc[:2], two)  # each method's draws are its own


def test_coverage_study_refuses_bad_settings() -> None:
    with pytest.raises(EvalError, match="games_per_pairing"):
        coverage_study(1, 10, games_per_pairing=(45,))
    with pytest.raises(EvalError, match="tournaments"):
        coverage_study(0, 10)
    with pytest.raises(EvalError, match="bootstrap"):
        coverage_study(1, 0)
    for methods in (["pairs"], [], "maps", ["maps", "maps"]):
        with pytest.raises(EvalError, match=r"^methods: expected some of \['rescaled', 'plain'"):
            coverage_study(1, 10, methods=methods)


def test_calibrate_command_prints_and_saves_the_table(tmp_path: Path) -> None:
    out = tmp_path / "coverage.csv"
    args = ["calibrate", "--tournaments", "2", "--bootstrap", "20", "--sizes", "10,20"]
    result = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    # not a terminal: plain progress lines on stderr, the table on stdout
    assert "coverage study: 0/4 tournaments, 0%, 0 s elapsed" in result.stderr
    assert "coverage study: 4/4 tournaments, 100%" in result.stderr
    assert "Coverage of the 95% Elo intervals" in result.stdout
    assert "rescaled" in result.output
    assert "plain" in result.output
    assert "maps" in result.output
    saved = pd.read_csv(out)
    assert saved["games_per_pairing"].tolist() == [10, 10, 10, 20, 20, 20]
    bad = CliRunner().invoke(app, ["calibrate", "--sizes", "40,x"])
    assert bad.exit_code == 2
    assert "--sizes" in bad.output
    bad = CliRunner().invoke(app, ["calibrate", "--methods", "rescaled,hier"])
    assert bad.exit_code == 2
    assert "methods: expected some of ['rescaled', 'plain', 'maps']" in bad.output


@pytest.mark.slow
def test_rescaled_intervals_hold_the_truth_95_percent_of_the_time() -> None:
    """200 Season 0 tournaments per size (1,800 intervals each, coverage +-1 point): the
    rescaled intervals land in 93-97% at 40 and 200 games per pairing; plain ones are narrow
    at 40 (about 91%)."""
    t = coverage_study(200, 500, seed=1, methods=["rescaled", "plain"])
    t = t.set_index(["games_per_pairing", "method"])
    print(t.to_string())
    for size in (40, 200):
        assert 0.93 <= t.loc[(size, "rescaled"), "coverage"] <= 0.97, t
    assert t.loc[(40, "plain"), "coverage"] < t.loc[(40, "rescaled"), "coverage"]
