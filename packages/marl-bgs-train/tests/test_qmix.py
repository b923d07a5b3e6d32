"""Recurrent QMIX end to end at tiny sizes: legal play, the replay holds consecutive rollouts of
each game, learning waits for `learning_starts`, the targets are copied every `target_every`
updates, and a saved run (replay included) resumes bit for bit."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from marl_bgs import ConfigError
from marl_bgs_train.learners import make_train
from marl_bgs_train.qmix import QMIXTrainer
from marl_bgs_train.testing import assert_resumes_exactly, tiny_config


@pytest.fixture(scope="module")
def trainer() -> QMIXTrainer:
    return make_train(tiny_config("qmix", free_paths=4))  # replay rows hold the added features


def _equal(a, b) -> bool:
    return all(
        np.array_equal(np.asarray(x), np.asarray(y))
        for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True)
    )


def test_qmix_trains_legally_with_its_replay_and_targets(trainer, tmp_path):
    init = jax.jit(trainer.init)
    state, history = init(jax.random.key(2)), []
    start = jax.device_get(state)  # `run` consumes (donates) the state it is given
    for _ in range(3):
        state, metrics = trainer.run(state, 1)
        history.append(jax.device_get(metrics))
        if len(history) == 1:
            after_one = jax.device_get(state)
    for m in history:
        assert int(m["repaired_actions"][0]) == 0
        assert all(np.isfinite(np.asarray(v)).all() for v in m.values())
    assert [int(m["replay_rows"][0]) for m in history] == [16, 32, 32]  # capacity 8 x 4 ticks
    # learning_starts = 16 rows: the first update learns; targets copy after updates 2, 4, ...
    assert not _equal(after_one.actor, start.actor)
    assert _equal(after_one.target_actor, start.actor)
    assert not _equal(state.target_actor, start.actor)
    # consecutive rollouts of game g sit in rows g and 4 + g (after 3 updates, row g holds the
    # third): the tick after a stored sequence is the next sequence's first tick
    replay = jax.device_get(state.replay)
    t = trainer.config.rollout
    for g in range(4):
        later, earlier = g, 4 + g  # ring of 8: update 3 overwrote rows 0-3
        np.testing.assert_array_equal(replay.x[earlier, t], replay.x[later, 0])
        np.testing.assert_array_equal(replay.start[earlier, t], replay.start[later, 0])
        np.testing.assert_array_equal(replay.mask[earlier, t], replay.mask[later, 0])
    assert replay.mask[:, :, :, :].any(axis=-1).all()  # every stored tick has a legal action

    assert_resumes_exactly(trainer, jax.random.key(2), 2, tmp_path / "run", state, history[-1])


def test_qmix_waits_for_learning_starts():
    waiting = make_train(tiny_config("qmix", learning_starts=10_000, target_every=1))
    start = jax.jit(waiting.init)(jax.random.key(0))
    state, metrics = waiting.run(jax.tree.map(jnp.copy, start), 1)  # `run` consumes its state
    assert _equal(state.actor, start.actor)
    assert _equal(state.mixer, start.mixer)
    assert float(metrics["loss"][0]) == 0.0


def test_qmix_settings_are_checked():
    with pytest.raises(ConfigError, match="replay_rows"):
        make_train(tiny_config("qmix", replay_rows=8))
    with pytest.raises(ConfigError, match="heads"):
        make_train(tiny_config("qmix", heads="factored"))
    with pytest.raises(ConfigError, match="target_every"):
        make_train(tiny_config("qmix", target_every=0))
