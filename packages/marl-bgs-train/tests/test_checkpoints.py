"""Checkpoints: the newest saved update comes back by default, any kept one by its step, typed
random keys and empty arrays round trip, and old ones beyond `keep` are gone."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from marl_bgs import ConfigError
from marl_bgs_train import checkpoints


class State(NamedTuple):
    update: jax.Array  # int32 []: the update count, the default step
    weights: jax.Array  # float32 [3]
    key: jax.Array  # a typed random key
    messages: jax.Array  # float32 [2, 0]: orbax stores no empty array


def _state(update: int) -> State:
    return State(
        update=jnp.int32(update), weights=jnp.arange(3, dtype=jnp.float32) * update,
        key=jax.random.key(update), messages=jnp.zeros((2, 0), jnp.float32),
    )  # fmt: skip


def test_the_newest_update_is_restored_and_any_kept_one_by_step(tmp_path) -> None:
    mgr = checkpoints.manager(tmp_path, keep=2)
    like = jax.eval_shape(lambda: _state(0))
    with pytest.raises(ConfigError, match=r"^run_dir: no checkpoint under"):
        checkpoints.restore(mgr, like)
    for update in (1, 2, 3):
        checkpoints.save(mgr, _state(update))
    assert list(mgr.all_steps()) == [2, 3]  # the newest `keep`
    for step, want in ((None, 3), (2, 2)):
        got = checkpoints.restore(mgr, like, step)
        assert int(got.update) == want
        np.testing.assert_array_equal(got.weights, _state(want).weights)
        np.testing.assert_array_equal(
            jax.random.key_data(got.key), jax.random.key_data(_state(want).key)
        )
        assert got.messages.shape == (2, 0)
    again = checkpoints.manager(tmp_path, keep=2)  # a resumed run opens the folder afresh
    assert int(checkpoints.restore(again, like).update) == 3
