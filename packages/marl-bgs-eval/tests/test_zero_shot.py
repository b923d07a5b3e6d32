"""Zero-shot coordination: strangers in one class of a base team, compared game by game."""

from __future__ import annotations

import numpy as np
import pytest

import marl_bgs_eval as ev
from marl_bgs_eval.tdm.zero_shot import zero_shot

SETTINGS = {"maps": [0], "games_per_map": 4, "tick_limit": 40, "winning_score": 5, "batch_size": 4}


@pytest.fixture(scope="module")
def played() -> tuple:
    rush = ev.get_system("eastward")
    return zero_shot(
        rush, [rush, "idle"], [ev.random_system()], classes="M", with_random=False, seed=3,
        bootstrap=500, **SETTINGS,
    )  # fmt: skip


def test_a_stranger_that_plays_like_the_base_costs_nothing(played: tuple) -> None:
    summary, games = played
    same = summary[summary["stranger"] == "eastward"].iloc[0]
    assert same["margin_change"] == 0.0
    assert (same["low"], same["high"]) == (0.0, 0.0)
    assert same["distance_added"] == pytest.approx(0.0, abs=1e-9)
    alone = games[games["stranger"] == ""]
    twin = games[games["stranger"] == "eastward"]
    cols = ["game", "seed_number", "a_spawn", "points_a", "points_b", "ticks"]
    np.testing.assert_array_equal(alone[cols].to_numpy(), twin[cols].to_numpy())


def test_margin_change_is_matched_game_by_game(played: tuple) -> None:
    summary, games = played
    idle = summary[summary["stranger"] == "idle"].iloc[0]
    margin = games["points_a"] - games["points_b"]
    alone = margin[games["stranger"] == ""].to_numpy()
    mixed = margin[games["stranger"] == "idle"].to_numpy()
    assert idle["games"] == len(mixed) == 4
    assert idle["margin_change"] == pytest.approx(float(np.mean(mixed - alone)))
    assert idle["low"] <= idle["margin_change"] <= idle["high"]
    assert idle["distance"] > 0


def test_zero_shot_refuses_bad_settings() -> None:
    with pytest.raises(ev.EvalError, match="classes: expected letters of MWHRP"):
        zero_shot("eastward", ["idle"], ["idle"], classes="MX")
    with pytest.raises(ev.EvalError, match="metrics: zero_shot always records full"):
        zero_shot("eastward", ["idle"], ["idle"], metrics="none")
    with pytest.raises(ev.EvalError, match="field: expected at least one"):
        zero_shot("eastward", ["idle"], [])
