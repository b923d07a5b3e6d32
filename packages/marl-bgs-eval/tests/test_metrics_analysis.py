"""Analysis measures and `system_metrics` on small hand-built full-level tables.

Every table here is zeros except the columns a test sets, so each expected value is worked out
by hand: which side is read, how games pool (ratio of sums), and how pairs are resampled.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from marl_bgs_eval import EvalError
from marl_bgs_eval.compare import draw_measure_vs_elo, plot_measure_vs_elo, system_metrics
from marl_bgs_eval.ratings import _design
from marl_bgs_eval.resampling import draw_weights, pair_units
from marl_bgs_eval.synthetic import synthetic_games
from marl_bgs_eval.tdm import metrics as mt
from marl_bgs_eval.tdm.metrics.analysis import (
    MEASURES,
    by_class,
    class_of,
    measure,
    measures_table,
    slots_of_class,
)

FULL = mt.columns("full")


def table(n: int, level: str = "full", **meta: object) -> pd.DataFrame:
    """`n` games of x (team A) vs y, each pair of two spawn-swapped games on map 47, 100 ticks,
    every metric 0; `meta` overrides a results column for every game."""
    rows = {
        "system_a": "x",
        "system_b": "y",
        "map": 47,
        "pair_id": np.arange(n) // 2,
        "seed": 7,
        "a_spawn": np.where(np.arange(n) % 2, "right", "left"),
        "roster_a": "MWHRP",
        "roster_b": "MWHRP",
        "result": "draw",
        "points_a": 0,
        "points_b": 0,
        "ticks": 100,
        **meta,
    }
    info = pd.DataFrame(rows, index=range(n))
    zeros = pd.DataFrame(0.0, index=range(n), columns=mt.columns(level))
    return pd.concat([info, zeros], axis=1)


def value(out: pd.DataFrame, system: str, name: str, col: str = "value") -> float:
    row = out[(out["system"] == system) & (out["measure"] == name)]
    assert len(row) == 1
    return float(row[col].iloc[0])


# --- the measures ---------------------------------------------------------------------------------

# Per measure: columns to set on one game of 200 ticks ({s}: the side read, {o}: the other), and
# the expected value read from side {s}.
CASES: dict[str, tuple[dict[str, float], float]] = {
    "teammate_distance": (
        {"teammate_distance.{s}0>{s}1": 30, "teammate_distance.{s}2>{s}4": 10,
         "teammate_ticks.{s}0>{s}1": 6, "teammate_ticks.{s}2>{s}4": 4},
        40 / 10,
    ),
    "time_in_mage_aura": (
        {"aura_stack.{s}0.mage.one": 20, "aura_stack.{s}3.mage.two": 10,
         "aura_stack.{s}1.warrior.one": 99, "alive_ticks.{s}0": 100, "alive_ticks.{s}3": 100},
        100 * 30 / 200,
    ),
    "time_in_warrior_aura": (
        {"aura_stack.{s}1.warrior.one": 50, "aura_stack.{s}1.mage.one": 99,
         "alive_ticks.{s}1": 200},
        25.0,
    ),
    "mage_aura_added_per_100_ticks": ({"aura_totals.{s}.added": 9, "aura_totals.{o}.added": 99},
                                      4.5),
    "warrior_aura_prevented_per_100_taken": (
        {"aura_totals.{s}.prevented": 6, "damage_received.{s}2.basic": 30,
         "damage_received.{s}4.ultimate": 10},
        100 * 6 / 40,
    ),
    "useful_share_of_basic_healing": (
        {"healing_done.{s}4>{s}0.basic": 30, "excess_healing.{s}4>{s}4.basic": 10,
         "healing_done.{s}4>{s}1.ultimate": 99},
        75.0,
    ),
    "damage_to_hunter_slowed_per_100_ticks": (
        {"damage_to_affected.{s}0>{o}2.slowed_hunter": 14,
         "damage_to_affected.{s}3>{o}0.slowed_hunter": 6,
         "damage_to_affected.{o}0>{s}2.slowed_hunter": 99,
         "damage_to_affected.{s}0>{o}2.stunned": 99},
        10.0,
    ),
    "kills_with_two_or_more_helpers": (
        {"kill_setups.{s}.two_or_more_helpers": 3, "results.{s}.kills": 4}, 75.0),
    "ticks_with_two_or_more_attackers": (
        {"coordination.{s}.two_or_more_attackers": 50, "coordination.{s}.focus_fire": 99}, 25.0),
    "kills_warrior_ultimate_helped": (
        {"kill_setups.{s}.warrior_ultimate": 1, "results.{s}.kills": 4}, 25.0),
    "kills_warrior_basic_helped_per_100_ticks": ({"kill_setups.{s}.warrior_basic": 3}, 1.5),
    "ultimates_per_100_ticks": ({"{s}_ultimates_used": 5, "{o}_ultimates_used": 99}, 2.5),
    "basics_per_100_ticks": ({"{s}_basics_used": 40}, 20.0),
    "kills_per_100_ticks": ({"{s}_kills": 4, "{o}_kills": 99}, 2.0),
    "deaths_per_100_ticks": ({"{s}_deaths": 6}, 3.0),
    "home_deaths_per_100_ticks": ({"{s}_red_zone_deaths": 1, "{s}_deaths": 6}, 0.5),
    "ultimates_together": (
        {"ultimates_together.{s}0": 1, "ultimates_together.{s}2": 2, "{s}_ultimates_used": 12},
        25.0,
    ),
    "bursts_with_enemy_in_reach": (
        {"burst.{s}0.pressed": 4, "burst.{s}0.enemy_in_reach": 3, "burst.{s}0.held_ticks": 99},
        75.0,
    ),
}  # fmt: skip


def test_every_measure_has_a_case_and_a_kind() -> None:
    assert set(CASES) == set(MEASURES)
    assert set(measures_table()["kind"]) <= {"rate", "share", "mean"}
    assert all(m.meaning and m.unit for m in MEASURES.values())


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("side", ["a", "b"])
def test_measure_reads_its_side(name: str, side: str) -> None:
    """Values on side a's columns read from "a", the same on b's read from "b"; the columns set
    to 99 are neighbours a wrong reading would pick up."""
    cells, expected = CASES[name]
    other = "b" if side == "a" else "a"
    g = table(1, ticks=200)
    for col, v in cells.items():
        col = col.format(s=side, o=other)
        assert col in g.columns, col
        g.loc[0, col] = v
    assert measure(name).value(g, side) == pytest.approx(expected)


def test_rate_pools_a_ratio_of_sums() -> None:
    g = table(2, ticks=[100, 50])
    g["a_ultimates_used"] = [3, 1]
    m = MEASURES["ultimates_per_100_ticks"]
    num, den = m(g, "a")
    assert num.tolist() == [3.0, 1.0]
    assert den.tolist() == [1.0, 0.5]
    assert m.value(g, "a") == pytest.approx(4 / 150 * 100)  # not the mean of 3 and 2
    assert np.isnan(MEASURES["kills_with_two_or_more_helpers"].value(g, "a"))  # no kills


def test_classes_from_the_roster() -> None:
    g = table(2, roster_a=["MWHRP", "PRHW"])
    assert class_of(g, "a", 0).tolist() == ["M", "P"]
    assert class_of(g, "a", 4).tolist() == ["P", "-"]
    mages = slots_of_class(g, "a", "M")
    assert list(mages.columns) == ["a0", "a1", "a2", "a3", "a4"]
    assert mages["a0"].tolist() == [True, False]
    assert mages["a4"].tolist() == [False, False]
    g["damage_done.a0>b1.basic"] = 5.0
    g["damage_done.a0>b4.ultimate"] = 2.0
    g["damage_done.a3>b0.basic"] = 11.0
    g["damage_done.b0>a0.basic"] = 99.0
    per = by_class(g, "damage_done", "a")
    assert per["M"].tolist() == [7.0, 0.0]
    assert per["P"].tolist() == [0.0, 7.0]
    assert per["R"].tolist() == [11.0, 0.0]
    assert per["W"].tolist() == [0.0, 11.0]
    assert per.to_numpy().sum() == 36.0


def test_errors_name_the_level_the_columns_and_the_side() -> None:
    pri = table(2, level="priority")
    with pytest.raises(EvalError, match=r"teammate_distance\.a0>a1.*metrics='full'"):
        MEASURES["teammate_distance"](pri, "a")
    with pytest.raises(EvalError, match=r"metrics='full'"):
        system_metrics(pri, bootstrap=10)
    assert MEASURES["ultimates_per_100_ticks"].value(pri, "b") == 0.0  # a priority column
    with pytest.raises(EvalError, match=r"side: expected one of \['a', 'b'\], got 'c'"):
        MEASURES["ultimates_per_100_ticks"](table(1), "c")
    with pytest.raises(EvalError, match="side"):
        class_of(table(1), "B", 0)
    with pytest.raises(EvalError, match="slot"):
        class_of(table(1), "a", 5)
    with pytest.raises(EvalError, match=r"\['ticks'\]$"):  # a results column: no level hint
        MEASURES["ultimates_per_100_ticks"](table(1).drop(columns="ticks"), "a")
    with pytest.raises(EvalError, match=r"a_ultimates_used.*metrics='priority' or 'full'"):
        MEASURES["ultimates_per_100_ticks"](table(1, level="none"), "a")
    with pytest.raises(EvalError, match="unknown"):
        measure("nope")
    with pytest.raises(EvalError, match="not indexed by slot"):
        by_class(table(1), "results", "a")


# --- system_metrics -------------------------------------------------------------------------------


def test_each_system_is_read_from_its_own_side() -> None:
    g = pd.concat([table(2), table(2, system_a="y", system_b="x")], ignore_index=True)
    g["a_ultimates_used"] = [1, 1, 10, 10]  # x as A: 2; y as A: 20
    g["b_ultimates_used"] = [5, 5, 3, 3]  # y as B: 10; x as B: 6
    out = system_metrics(g, ["ultimates_per_100_ticks"], bootstrap=50)
    assert list(out.columns) == ["system", "measure", "kind", "unit", "value", "low", "high",
                                 "games", "distinct_games", "repeats"]  # fmt: skip
    assert value(out, "x", "ultimates_per_100_ticks") == pytest.approx(8 / 400 * 100)
    assert value(out, "y", "ultimates_per_100_ticks") == pytest.approx(30 / 400 * 100)
    assert value(out, "x", "ultimates_per_100_ticks", "games") == 4
    # no fingerprints: each pair's two games agree, so each pair is one mirror-image game
    assert value(out, "x", "ultimates_per_100_ticks", "distinct_games") == 2
    assert not out["repeats"].any()  # one pair per pairing: nothing replayed
    # each (pairing, map) stratum holds one pair: every resample is the table itself
    assert value(out, "x", "ultimates_per_100_ticks", "low") == pytest.approx(2.0)
    assert value(out, "x", "ultimates_per_100_ticks", "high") == pytest.approx(2.0)


def test_self_play_counts_both_sides() -> None:
    g = table(2, system_b="x")
    g["a_ultimates_used"] = [2, 0]
    g["b_ultimates_used"] = [4, 0]
    out = system_metrics(g, ["ultimates_per_100_ticks"], bootstrap=20)
    assert out["system"].tolist() == ["x"]
    assert value(out, "x", "ultimates_per_100_ticks") == pytest.approx(6 / 400 * 100)
    assert value(out, "x", "ultimates_per_100_ticks", "games") == 2


def test_shares_pool_a_ratio_of_sums() -> None:
    g = table(4)
    g["results.a.kills"] = [1, 0, 9, 0]
    g["kill_setups.a.two_or_more_helpers"] = [1, 0, 0, 0]
    out = system_metrics(g, ["kills_with_two_or_more_helpers"], bootstrap=20)
    assert value(out, "x", "kills_with_two_or_more_helpers") == pytest.approx(10.0)  # not 50
    assert np.isnan(value(out, "y", "kills_with_two_or_more_helpers"))  # y has no kills


def _varied(pairs: int, seed: int = 0) -> pd.DataFrame:
    g = table(2 * pairs)
    rng = np.random.default_rng(seed)
    g["a_ultimates_used"] = rng.integers(0, 20, size=2 * pairs)
    g["ticks"] = rng.integers(50, 300, size=2 * pairs)
    return g


def test_interval_holds_the_estimate_and_shrinks_with_more_pairs() -> None:
    name = "ultimates_per_100_ticks"
    small = _varied(8)
    big = pd.concat([small] * 4, ignore_index=True)
    big["pair_id"] = np.arange(len(big)) // 2  # the same games, four times the pairs
    a = system_metrics(small, [name], bootstrap=2000, seed=1)
    b = system_metrics(big, [name], bootstrap=2000, seed=1)
    for out in (a, b):
        assert value(out, "x", name, "low") < value(out, "x", name) < value(out, "x", name, "high")
    assert value(a, "x", name) == pytest.approx(value(b, "x", name))
    wa = value(a, "x", name, "high") - value(a, "x", name, "low")
    wb = value(b, "x", name, "high") - value(b, "x", name, "low")
    assert 0.35 < wb / wa < 0.65, (wa, wb)  # about 1 / sqrt(4)


def test_same_seed_same_interval_and_row_order_does_not_matter() -> None:
    name = "ultimates_per_100_ticks"
    g = _varied(10)
    a = system_metrics(g, [name], bootstrap=300, seed=3)
    b = system_metrics(g.iloc[::-1], [name], bootstrap=300, seed=3)
    c = system_metrics(g, [name], bootstrap=300, seed=4)
    pd.testing.assert_frame_equal(a, b, rtol=1e-12)
    assert value(a, "x", name, "low") != value(c, "x", name, "low")
    assert a.attrs == {"bootstrap": 300, "seed": 3, "level": 0.95, "scheme": "pairs"}


def test_resampling_keeps_a_pairs_two_games_together() -> None:
    # Each pair: one game with 10 Ultimates, one with none. Drawn as whole pairs, every resample
    # gives 5 per 100 ticks; drawn game by game, it would not.
    g = table(40)
    g["a_ultimates_used"] = np.tile([10, 0], 20)
    out = system_metrics(g, ["ultimates_per_100_ticks"], bootstrap=500)
    assert value(out, "x", "ultimates_per_100_ticks", "low") == pytest.approx(5.0)
    assert value(out, "x", "ultimates_per_100_ticks", "high") == pytest.approx(5.0)
    g["pair_id"] = np.arange(40)  # now every game is its own pair
    out = system_metrics(g, ["ultimates_per_100_ticks"], bootstrap=500)
    assert value(out, "x", "ultimates_per_100_ticks", "high") > 6.0


def test_interval_has_the_stratified_sampling_spread() -> None:
    """With every game 100 ticks long the measure is a mean of pair totals y, linear in the
    pair weights: over 40 maps of 2 pairs its resamples are near normal with sd
    sqrt(sum over maps of 2 s^2) / 160 games. The interval spans 2 x 1.96 such sds; drawing
    both pairs of a map again (not rescaled) would give only sqrt(1/2) of it."""
    g = table(160)
    g["map"] = g["pair_id"] // 2
    g["a_ultimates_used"] = np.random.default_rng(8).integers(0, 20, size=160)
    name = "ultimates_per_100_ticks"
    out = system_metrics(g, [name], bootstrap=4000, seed=2)
    used = g["a_ultimates_used"].to_numpy(float)
    y = (used[0::2] + used[1::2]).reshape(40, 2)  # per map, its two pairs' totals
    sd = np.sqrt(np.sum(2 * np.var(y, axis=1, ddof=1))) / 160
    width = value(out, "x", name, "high") - value(out, "x", name, "low")
    assert width / (2 * 1.96 * sd) == pytest.approx(1.0, abs=0.08)


def test_pairs_are_resampled_within_pairing_and_map() -> None:
    g = pd.concat(
        [table(4), table(4, map=48), table(2, system_a="y", system_b="x"),
         table(2, seed=8)], ignore_index=True,
    )  # fmt: skip
    unit, strata, maps = pair_units(g)
    assert unit.tolist() == [0, 0, 1, 1, 3, 3, 4, 4, 5, 5, 2, 2]
    assert strata.tolist() == [0, 0, 0, 1, 1, 2]
    assert maps.tolist() == [0, 1, 0]  # strata (x, y, 47), (x, y, 48), (y, x, 47)


def test_units_and_draws_match_the_elo_bootstrap() -> None:
    """Without self-play, units and strata are numbered as `bootstrap_elo` numbers them, so the
    same seed draws the same pairs: resample k of a measure and of the Elo share a tournament."""
    games = synthetic_games([1000.0, 1200.0, 1300.0], maps=2, pairs_per_map=5, seed=2)
    games = games.sample(frac=1.0, random_state=0)  # row order must not matter
    names = sorted(set(games["system_a"]))
    _, _, _, _, (elo_strata, _, elo_counts) = _design(names, games)
    unit, strata, _ = pair_units(games)
    np.testing.assert_array_equal(strata, elo_strata)
    wins = np.zeros((len(strata), 3))
    np.add.at(wins, unit, np.eye(3)[games["result"].map({"win": 0, "draw": 1, "loss": 2})])
    np.testing.assert_array_equal(wins, elo_counts)
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    for members, weights in draw_weights(strata, 7, rng_a):
        k = members.size  # rescaled: k - 1 draws, each weighing k / (k - 1)
        draw = rng_b.integers(0, k, size=(7, k - 1))
        assert all(np.allclose(np.bincount(d, minlength=k) * k / (k - 1), w)
                   for d, w in zip(draw, weights, strict=True))  # fmt: skip


def test_all_measures_on_a_full_table() -> None:
    out = system_metrics(table(4), bootstrap=10)
    assert len(out) == 2 * len(MEASURES)
    assert out["measure"].tolist()[: len(MEASURES)] == list(MEASURES)
    rates = out[out["kind"] == "rate"]
    assert (rates["value"] == 0.0).all()  # zeros everywhere: no events per tick
    assert out[out["kind"] != "rate"]["value"].isna().all()  # and no denominators


def test_system_metrics_rejects_bad_input() -> None:
    g = table(2)
    with pytest.raises(EvalError, match="DataFrame"):
        system_metrics([1, 2])  # type: ignore[arg-type]
    with pytest.raises(EvalError, match="no games"):
        system_metrics(g.iloc[:0])
    with pytest.raises(EvalError, match=r"missing column\(s\) \['pair_id'\]"):
        system_metrics(g.drop(columns="pair_id"))
    for bad in (0, -1, 2.5, True):
        with pytest.raises(EvalError, match="bootstrap"):
            system_metrics(g, bootstrap=bad)  # type: ignore[arg-type]
    with pytest.raises(EvalError, match="seed"):
        system_metrics(g, seed=-1)
    with pytest.raises(EvalError, match="unknown 'nope'"):
        system_metrics(g, ["nope"])
    with pytest.raises(EvalError, match="measures"):
        system_metrics(g, "kills_per_100_ticks")


# --- the plot --------------------------------------------------------------------------------


def test_plot_measure_vs_elo_writes_a_png(tmp_path: Path) -> None:
    import matplotlib.image

    parts = [table(4, system_a=a, system_b=b) for a, b in (("x", "y"), ("y", "z"), ("z", "x"))]
    g = pd.concat(parts, ignore_index=True)
    g["a_kills"] = np.arange(len(g)) % 5
    g["b_kills"] = np.arange(len(g)) % 3
    metrics = system_metrics(g, ["kills_per_100_ticks"], bootstrap=100)
    ratings = pd.DataFrame(
        {"system": ["x", "y", "z"], "elo": [1100.0, 1200.0, 1300.0],
         "elo_low": [1050.0, 1150.0, 1240.0], "elo_high": [1150.0, 1260.0, 1350.0]}
    )  # fmt: skip
    path = plot_measure_vs_elo(metrics, ratings, "kills_per_100_ticks", tmp_path / "fig.png")
    assert path == tmp_path / "fig.png"
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 1000
    image = matplotlib.image.imread(path)
    assert image.ndim == 3
    assert image.shape[0] > 100
    with pytest.raises(EvalError, match="does not exist"):
        plot_measure_vs_elo(metrics, ratings, "kills_per_100_ticks", tmp_path / "no" / "f.png")
    with pytest.raises(EvalError, match="not in metrics_table"):
        plot_measure_vs_elo(metrics, ratings, "deaths_per_100_ticks", tmp_path / "x.png")
    with pytest.raises(EvalError, match="elo_low"):
        plot_measure_vs_elo(metrics, ratings.drop(columns="elo_low"), "kills_per_100_ticks",
                            tmp_path / "y.png")  # fmt: skip


def test_panel_title_shows_spearmans_rho() -> None:
    from matplotlib.figure import Figure

    metrics = pd.DataFrame(
        {"system": ["x", "y", "z", "w"], "measure": "m", "unit": "%",
         "value": [3.0, 1.0, 2.0, np.nan], "low": [2.5, 0.5, 1.5, np.nan],
         "high": [3.5, 1.5, 2.5, np.nan]}
    )  # fmt: skip
    ratings = pd.DataFrame(
        {"system": ["x", "y", "z", "w"], "elo": [1300.0, 1100.0, 1200.0, 900.0],
         "elo_low": [1250.0, 1000.0, 1150.0, 800.0], "elo_high": [1350.0, 1150.0, 1250.0, 950.0]}
    )  # fmt: skip
    axes = Figure().add_subplot()
    assert draw_measure_vs_elo(axes, metrics, ratings, "m") == pytest.approx(1.0)
    assert "Spearman's rho = +1.00 (3 Systems)" in axes.get_title()  # w has no value
    ratings["elo"] = [1100.0, 1300.0, 1200.0, 900.0]
    axes = Figure().add_subplot()
    assert draw_measure_vs_elo(axes, metrics, ratings, "m") == pytest.approx(-1.0)
    axes = Figure().add_subplot()
    assert np.isnan(draw_measure_vs_elo(axes, metrics.iloc[:2], ratings, "m"))
    assert "rho = n/a" in axes.get_title()
