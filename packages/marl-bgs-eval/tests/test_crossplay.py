"""Cross-play: every ordered pairing, unique seed numbers, and the matchup matrix."""

from __future__ import annotations

import pandas as pd

import marl_bgs_eval as ev


def test_cross_play_every_ordered_pair(base_games: pd.DataFrame, kit) -> None:
    matrix, games = ev.cross_play(
        [kit.mixed, "random"], include_self=False, batch_size=8, **kit.settings
    )
    assert len(games) == 32
    assert games["game"].is_unique
    assert games.groupby("seed_number").size().eq(2).all()
    first = games[games["system_a"] == "mixed"].reset_index(drop=True)
    pd.testing.assert_frame_equal(first, base_games)  # the same games as a plain evaluate
    assert list(matrix.index) == ["mixed", "random"]
    assert matrix.loc["mixed", "random"] >= 0
    assert pd.isna(matrix.loc["mixed", "mixed"])
    score = games[games["system_a"] == "random"]["result"].map({"win": 1, "draw": 0.5, "loss": 0})
    assert matrix.loc["random", "mixed"] == score.mean()
    ratings = ev.rate(games, bootstrap=200, seed=0)
    assert set(ratings["system"]) == {"mixed", "random"}
    assert ratings["elo"].mean() == 1200
