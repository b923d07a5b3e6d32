"""The teamwork screen: Spearman's rho with exact p, Holm and Westfall-Young max-statistic."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import permutation_test, spearmanr

from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.screen import holm, plot_screen, screen, teamwork_screen

SYSTEMS = [f"s{k}" for k in range(7)]


def _field(seed: int = 0) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(seed)
    elo = pd.Series(np.linspace(1500, 900, len(SYSTEMS)), index=SYSTEMS)
    values = pd.DataFrame(
        {
            "follows_elo": elo.to_numpy() / 100 + rng.normal(0, 0.5, len(SYSTEMS)),
            "noise": rng.normal(0, 1, len(SYSTEMS)),
            "with_ties": rng.integers(0, 3, len(SYSTEMS)).astype(float),
            "against_elo": -elo.to_numpy(),
        },
        index=SYSTEMS,
    )
    return values, elo


def test_rho_and_exact_p_match_scipy() -> None:
    values, elo = _field()
    out = screen(values, elo).set_index("measure")
    for m in values.columns:
        x, y = values[m].to_numpy(), elo.to_numpy()
        assert out.loc[m, "rho"] == pytest.approx(spearmanr(x, y)[0], abs=1e-12)
        ref = permutation_test(
            (x,), lambda v, y=y: abs(spearmanr(v, y)[0]), permutation_type="pairings",
            n_resamples=np.inf, alternative="greater",
        )  # fmt: skip
        assert out.loc[m, "p"] == pytest.approx(ref.pvalue, abs=1e-12), m
        assert bool(out.loc[m, "exact"])
    # A measure that follows Elo's order exactly: only it and its reverse reach |rho| = 1.
    assert out.loc["against_elo", "rho"] == pytest.approx(-1.0)
    assert out.loc["against_elo", "p"] == pytest.approx(2 / math.factorial(len(SYSTEMS)))


def test_holm_step_down() -> None:
    got = holm(np.array([0.01, 0.04, 0.03, 0.005, np.nan]))
    assert got[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert np.isnan(got[4])
    assert holm(np.array([0.5, 0.9]))[1] == pytest.approx(1.0)  # capped at 1


def test_max_statistic_correction() -> None:
    values, elo = _field(1)
    out = screen(values, elo).set_index("measure")
    # Never below the uncorrected p; with one measure it is the uncorrected p.
    assert (out["p_maxt"] >= out["p"] - 1e-12).all()
    one = screen(values[["noise"]], elo)
    assert one["p_maxt"].iat[0] == pytest.approx(one["p"].iat[0])
    # By hand: the share of orderings whose largest |rho| over the measures reaches each one's.
    import itertools

    ranks = values.rank().to_numpy()
    best = []
    for perm in itertools.permutations(range(len(SYSTEMS))):
        e = elo.to_numpy()[list(perm)]
        best.append(max(abs(spearmanr(ranks[:, j], e)[0]) for j in range(ranks.shape[1])))
    best = np.asarray(best)
    for m in values.columns:
        want = np.mean(best >= abs(out.loc[m, "rho"]) - 1e-9)
        assert out.loc[m, "p_maxt"] == pytest.approx(want), m


def test_missing_and_constant_measures() -> None:
    values, elo = _field(2)
    values["constant"] = 3.0
    values.loc["s2", "noise"] = np.nan
    out = screen(values, elo).set_index("measure")
    assert not out.loc["constant", "varies"]
    assert np.isnan(out.loc["constant", ["rho", "p", "p_holm", "p_maxt"]].to_numpy(float)).all()
    # The System without a value leaves that measure's test (over 6! orderings), and the
    # max-statistic correction, which covers measures with a value for every System.
    assert out.loc["noise", "systems"] == 6
    keep = [s for s in SYSTEMS if s != "s2"]
    ref = spearmanr(values.loc[keep, "noise"], elo[keep])[0]
    assert out.loc["noise", "rho"] == pytest.approx(ref)
    assert (out.loc["noise", "p"] * math.factorial(6)) == pytest.approx(
        round(out.loc["noise", "p"] * math.factorial(6))
    )
    assert np.isnan(out.loc["noise", "p_maxt"])
    # Holm counts the four measures that vary.
    tested = out[out["varies"]]
    assert np.allclose(np.sort(tested["p_holm"]), np.sort(holm(tested["p"].to_numpy())))


def test_large_fields_use_seeded_random_orderings() -> None:
    names = [f"t{k}" for k in range(12)]
    rng = np.random.default_rng(5)
    elo = pd.Series(rng.normal(1200, 150, 12), index=names)
    values = pd.DataFrame({"m": elo.to_numpy() + rng.normal(0, 150, 12)}, index=names)
    a = screen(values, elo, orderings=2000, seed=1)
    assert a["p"].equals(screen(values, elo, orderings=2000, seed=1)["p"])
    assert not bool(a["exact"].iat[0])
    assert 1 / 2001 <= a["p"].iat[0] <= 1.0


def test_teamwork_screen_reads_season_tables(tmp_path) -> None:
    values, elo = _field(3)
    measures = values.reset_index(names="system").melt(
        id_vars="system", var_name="measure", value_name="value"
    )
    ratings = pd.DataFrame({"system": elo.index, "elo": elo.to_numpy()})
    out = teamwork_screen(measures, ratings)
    assert list(out["measure"]) == list(values.columns)
    pd.testing.assert_frame_equal(out, screen(values, elo))
    png = plot_screen(out, tmp_path / "screen.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(EvalError, match="measures: missing column"):
        teamwork_screen(measures.drop(columns="value"), ratings)
    with pytest.raises(EvalError, match="at least 3 Systems"):
        teamwork_screen(measures, ratings, systems=["s0", "s1"])
    with pytest.raises(EvalError, match=r"systems: \['nobody'\]"):
        teamwork_screen(measures, ratings, systems=["s0", "s1", "nobody"])
    with pytest.raises(EvalError, match="orderings"):
        screen(values, elo, orderings=0)
    with pytest.raises(EvalError, match="no rating"):
        screen(values, elo.drop("s3"))
    with pytest.raises(EvalError, match="every System is rated 1200"):
        screen(values, elo * 0 + 1200)
