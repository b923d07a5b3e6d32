"""Two-Bridge evaluation: outcome distributions per variant, win rate = (navigation + combat
wins) / episodes, episode play through the engine's team step."""

from __future__ import annotations

import jax
import numpy as np
import pandas as pd
import pytest

import marl_bgs
from marl_bgs.two_bridge import OUTCOMES
from marl_bgs_eval import EvalError
from marl_bgs_eval import two_bridge as tb
from marl_bgs_eval.episodes import play_episodes


@pytest.fixture(scope="module")
def random_table() -> pd.DataFrame:
    policy = lambda env: marl_bgs.random_policy(env.mode)  # noqa: E731
    return tb.evaluate_variants(policy, variants=["V1_Navigate", "V1_Base"], episodes=16, seed=3)


def test_rows_per_episode_and_table_per_variant(random_table: pd.DataFrame) -> None:
    assert len(random_table) == 32
    table = tb.outcome_table(random_table)
    assert list(table.index) == ["V1_Base", "V1_Navigate"]  # the paper's order, no pooled row
    shares = table[list(OUTCOMES[1:])]
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    np.testing.assert_allclose(table["win rate"], table["navigation win"] + table["combat win"])
    assert (table["win low"] <= table["win rate"]).all()
    assert (table["win rate"] <= table["win high"]).all()
    for variant, games in random_table.groupby("variant"):
        assert table.loc[variant, "win rate"] == games["win"].mean()


def test_same_seed_same_episodes(random_table: pd.DataFrame) -> None:
    policy = lambda env: marl_bgs.random_policy(env.mode)  # noqa: E731
    again = tb.evaluate_variants(policy, variants=["V1_Navigate", "V1_Base"], episodes=16, seed=3)
    pd.testing.assert_frame_equal(random_table, again)


def test_an_idle_team_times_out_with_the_timeout_reward() -> None:
    games = tb.evaluate_variants(
        lambda env: marl_bgs.idle_policy(env.mode), variants="V2_Base", episodes=8, tick_limit=30
    )
    assert (games["outcome"] == "timeout loss").all()
    assert (games["ticks"] == 30).all()
    # Standing still away from everything: no shaping, only the -15 of a timeout.
    np.testing.assert_allclose(games["return"], -15.0)
    assert tb.outcome_table(games).loc["V2_Base", "win high"] < 0.4


def test_returns_are_the_sum_of_the_env_rewards() -> None:
    env = marl_bgs.make("two-bridge", variant="V1_Navigate", num_envs=4, tick_limit=40)
    policy = marl_bgs.random_policy(env.mode)
    played = play_episodes(env, policy, jax.random.key(5))
    # Replay the same games by hand with the same keys.
    k_reset, k_memory, k_play = jax.random.split(jax.random.key(5), 3)
    del k_memory
    _, state = env.reset(k_reset)
    total, t = np.zeros(4), 0
    step = marl_bgs.team_step(env, [policy])
    while bool((state.outcome == 0).any()):
        out = step(state, ((),), [jax.random.split(jax.random.fold_in(k_play, t), 4)])
        total += np.asarray(out.reward[:, 0])
        state, t = out.state, t + 1
    np.testing.assert_allclose(played.returns, total, rtol=1e-5)
    np.testing.assert_array_equal(played.outcome, np.asarray(state.outcome))
    np.testing.assert_array_equal(played.ticks, np.asarray(state.tick))


def test_bad_requests_are_clear_errors() -> None:
    idle = lambda env: marl_bgs.idle_policy(env.mode)  # noqa: E731
    with pytest.raises(EvalError, match="variants"):
        tb.evaluate_variants(idle, variants=["V9_Base"])
    with pytest.raises(EvalError, match="episodes"):
        tb.evaluate_variants(idle, episodes=0)
    with pytest.raises(EvalError, match="missing column"):
        tb.outcome_table(pd.DataFrame({"variant": ["V1_Base"]}))
    tdm = marl_bgs.make("tdm", num_envs=2)
    with pytest.raises(EvalError, match="single-team"):
        play_episodes(tdm, marl_bgs.idle_policy(tdm.mode), jax.random.key(0))
