"""evaluate: schedule, repeatability across batch sizes and orders, metric levels, results."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import marl_bgs_eval as ev
from marl_bgs_eval import watch
from marl_bgs_eval.tdm.metrics import base_columns, priority_columns


def test_one_row_per_game_in_spawn_swapped_pairs(base_games: pd.DataFrame) -> None:
    g = base_games
    assert len(g) == 16
    assert list(g["game"]) == list(range(16))
    for _, pair in g.groupby("pair_id"):
        assert len(pair) == 2
        assert pair["map"].nunique() == 1
        assert pair["seed_number"].nunique() == 1
        assert sorted(pair["a_spawn"]) == ["left", "right"]
    assert g.groupby("map").size().to_dict() == {0: 8, 12: 8}
    assert set(g["system_a"]) == {"mixed"}
    assert set(g["system_b"]) == {"random"}
    assert set(g["roster_a"]) == {"MWHRP"}
    assert (g["ticks"] <= 40).all()
    assert len(base_columns()) == 6
    assert len(priority_columns()) == 12
    assert set(base_columns() + priority_columns()) <= set(g.columns)
    assert set(g["map_name"]) == {"Open Arena", "Picket Line"}
    assert g.groupby("map")["map_hash"].nunique().eq(1).all()


def test_games_are_real_and_metrics_agree_with_the_score(base_games: pd.DataFrame) -> None:
    g = base_games
    assert g["a_damage_dealt"].sum() > 0
    assert (g["a_kills"] + g["b_kills"]).sum() > 0
    # A death scores 1 point, 2 in the victim's home Red Zone: the score, from facts alone.
    assert (g["points_a"] == g["b_deaths"] + g["b_red_zone_deaths"]).all()
    assert (g["points_b"] == g["a_deaths"] + g["a_red_zone_deaths"]).all()
    assert (g["a_kills"] == g["b_deaths"]).all()
    assert (g["b_rejected_actions"] == 0).all()
    decided = g[g["result"] != "draw"]
    assert ((decided["result"] == "win") == (decided["points_a"] > decided["points_b"])).all()


@pytest.mark.parametrize("batch", [32, 128])
def test_batch_size_changes_no_game(base_games: pd.DataFrame, batch: int, kit) -> None:
    """Batch 8 plays the 16 games two to a slot; 32 and 128, one per slot: the same games, down
    to every trajectory fingerprint (a slot's next game is hashed from its own start)."""
    other = ev.evaluate(kit.mixed, ev.random_system(), batch_size=batch, **kit.settings)
    assert base_games["trajectory"].str.fullmatch("[0-9a-f]{16}").all()
    pd.testing.assert_frame_equal(base_games, other)


def test_order_of_games_changes_nothing(base_games: pd.DataFrame, kit) -> None:
    order = np.random.default_rng(0).permutation(16)
    other = ev.evaluate(kit.mixed, ev.random_system(), batch_size=8, order=order, **kit.settings)
    pd.testing.assert_frame_equal(base_games, other)


def test_seed_changes_games_but_not_the_schedule(base_games: pd.DataFrame, kit) -> None:
    other = ev.evaluate(kit.mixed, ev.random_system(), batch_size=8, **{**kit.settings, "seed": 8})
    same = ["game", "pair_id", "map", "a_spawn"]
    pd.testing.assert_frame_equal(base_games[same], other[same])
    assert not base_games[priority_columns()].equals(other[priority_columns()])


def test_metric_level_none_plays_the_same_games(base_games: pd.DataFrame, kit) -> None:
    plain = ev.evaluate(kit.mixed, ev.random_system(), batch_size=8, metrics="none", **kit.settings)
    assert not set(priority_columns()) & set(plain.columns)
    pd.testing.assert_frame_equal(base_games.drop(columns=priority_columns()), plain)


def test_a_watched_evaluation_plays_the_same_games_a_tick_per_call(base_games, kit) -> None:
    """The watch hears the first games' memory start, then each tick's start and end in order;
    the games are the ones the unwatched loop plays."""
    heard: list[tuple[int, int]] = []

    def hear(event: int, tick: int) -> None:
        heard.append((event, tick))

    watched = ev.evaluate(kit.mixed, ev.random_system(), batch_size=8, metrics="none", watch=hear,
                          **kit.settings)  # fmt: skip
    pd.testing.assert_frame_equal(base_games.drop(columns=priority_columns()), watched)
    assert heard[:2] == [(watch.INIT_START, 0), (watch.INIT_END, 0)]
    ticks = heard[2:]
    assert ticks[0::2] == [(watch.TICK_START, t) for _, t in ticks[0::2]]
    assert [(watch.TICK_END, t) for _, t in ticks[0::2]] == ticks[1::2]
    rounds = -(-len(base_games) // 8)  # the 16 games fill 8 slots twice
    assert len(ticks) // 2 >= int(base_games["ticks"].max()) * (rounds - 1) + 1
    assert {t for _, t in ticks} <= set(range(kit.settings["tick_limit"]))


def test_mixed_team_host_member_pool_and_repairs(base_games: pd.DataFrame, kit) -> None:
    g = base_games
    assert kit.host_calls
    assert all(shape[1] == 5 for shape in kit.host_calls)
    assert set(g["system_a_slot0"]) == {"host-first"}
    assert set(g["system_a_slot4"]) == {"broken"}
    assert set(g["system_a_slot2"]) == {"eastward"}
    assert set(g["system_a_slot3"]) == {"eastward"}
    # The pool draws per game from memory-start keys (which fold the game's own number).
    assert set(g["system_a_slot1"]) == {"eastward", "random"}
    # The broken Priest's every action is repaired and counted: one per tick.
    assert (g["a_rejected_actions"] == g["ticks"]).all()
    assert set(g["system_b_slot0"]) == {"random"}
    assert g["system_a"].iloc[0] == "mixed"


def test_results_round_trip_exactly(base_games: pd.DataFrame, tmp_path) -> None:
    for suffix in ("parquet", "csv"):
        path = ev.save(base_games, tmp_path / f"games.{suffix}")
        pd.testing.assert_frame_equal(ev.load(path), base_games)
    assert set(base_columns()) <= set(base_games.columns)


def test_distinct_games_follow_the_trajectories(base_games: pd.DataFrame) -> None:
    """A pair of mirror images shares one fingerprint; the outcome-and-counters rule kept for
    tables without fingerprints finds the same mirror pairs. Replayed under another seed the
    games are no new evidence: the fingerprints say so, the old rule cannot tell."""
    per_pair = base_games.groupby("pair_id")["trajectory"].nunique()
    assert set(per_pair) == {1, 2}  # this table holds both kinds of pair
    assert ev.distinct_games(base_games) == per_pair.sum()
    old = base_games.drop(columns="trajectory")
    mirrored = ev.mirror_pairs(old).droplevel(["seed", "system_a", "system_b"])
    pd.testing.assert_series_equal(mirrored, per_pair.eq(1), check_names=False)
    assert ev.distinct_games(old) == per_pair.sum()
    again = pd.concat([base_games, base_games.assign(seed=8)], ignore_index=True)
    assert ev.distinct_games(again) == per_pair.sum()
    assert ev.distinct_games(again.drop(columns="trajectory")) == 2 * per_pair.sum()
