"""Recurrent PQN-VDN end to end at tiny sizes: it trains with legal actions only, its exploration
follows the schedule, a saved and resumed run repeats the uninterrupted one exactly, a run is a
greedy System, and its config round-trips through disk."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import marl_bgs
from marl_bgs import ConfigError, team_inputs
from marl_bgs_train import runs
from marl_bgs_train.config import PQNConfig
from marl_bgs_train.learners import make_train
from marl_bgs_train.pqn import PQNTrainer
from marl_bgs_train.testing import assert_resumes_exactly, tiny_config


@pytest.fixture(scope="module")
def trainer() -> PQNTrainer:
    return make_train(tiny_config("pqn-vdn", epsilon_steps=40))


def test_pqn_vdn_trains_legally_and_resumes_bit_for_bit(trainer, tmp_path):
    init = jax.jit(trainer.init)
    state = init(jax.random.key(4))
    before = jax.device_get(state.actor)  # `run` consumes (donates) the state it is given
    history = []
    for _ in range(3):
        state, metrics = trainer.run(state, 1)
        history.append(jax.device_get(metrics))
    for m in history:
        assert int(m["repaired_actions"][0]) == 0  # epsilon-greedy over legal actions only
        assert all(np.isfinite(np.asarray(v)).all() for v in m.values())
    # exploration falls linearly over 40 game steps (16 per update): 1.0, 0.604, 0.208
    eps = [float(m["epsilon"][0]) for m in history]
    np.testing.assert_allclose(eps, [1.0, 1.0 - 0.99 * 16 / 40, 1.0 - 0.99 * 32 / 40], rtol=1e-5)
    assert float(trainer.epsilon(np.int32(1000))) == pytest.approx(0.01)
    moved = jax.tree_util.tree_map(lambda a, b: float(np.abs(a - b).max()), state.actor, before)
    assert max(jax.tree_util.tree_leaves(moved)) > 0
    assert int(state.copies_saved) == 3

    assert_resumes_exactly(trainer, jax.random.key(4), 2, tmp_path / "run", state, history[-1])


def test_a_pqn_run_plays_greedy_legal_actions(trainer, tmp_path):
    runs.train_run(trainer.config, tmp_path / "pqn", seed=1, progress=False)
    policy = runs.run_policy(tmp_path / "pqn")
    env = marl_bgs.make("tdm", map_id=[42], num_envs=3)
    _, state = env.reset(jax.random.key(0))
    inputs, _ = team_inputs(env, state)
    memory = jax.vmap(policy.init)(jax.random.split(jax.random.key(1), 3))
    act = jax.jit(policy.act)
    first, _ = act(jax.random.split(jax.random.key(2), 3), memory, inputs)
    again, _ = act(jax.random.split(jax.random.key(3), 3), memory, inputs)
    np.testing.assert_array_equal(first, again)  # greedy: the keys do not matter
    move_ok = np.take_along_axis(np.asarray(inputs.masks.move), np.asarray(first)[..., :1], -1)
    assert move_ok.all()


def test_pqn_settings_are_checked():
    with pytest.raises(ConfigError, match="heads"):
        make_train(tiny_config("pqn-vdn", heads="factored"))
    with pytest.raises(ConfigError, match="td_lambda"):
        make_train(tiny_config("pqn-vdn", td_lambda=1.5))
    with pytest.raises(ConfigError, match="epsilon_steps"):
        make_train(tiny_config("pqn-vdn", epsilon_steps=0))
    assert isinstance(tiny_config("pqn-vdn"), PQNConfig)
