"""Keys per paper S5.3: functions of (seed number, tick, team or slot); memory keys of the game."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs_eval.seeds import action_keys, memory_keys, root_key


def _data(keys: jax.Array) -> np.ndarray:
    return np.asarray(jax.random.key_data(keys))


def test_pair_games_draw_identical_action_keys() -> None:
    root = root_key(3)
    seeds, ticks = jnp.array([5, 5, 6]), jnp.array([9, 9, 9])
    k = _data(action_keys(root, seeds, ticks, team=0))
    assert (k[0] == k[1]).all()
    assert not (k[0] == k[2]).all()
    assert not (k[0] == _data(action_keys(root, seeds, ticks, team=1))[0]).all()


def test_keys_do_not_depend_on_batch_or_position() -> None:
    root = root_key(3)
    alone = _data(action_keys(root, jnp.array([4]), jnp.array([2]), team=1))
    among = _data(action_keys(root, jnp.array([0, 1, 4, 7]), jnp.array([5, 5, 2, 0]), team=1))
    assert (alone[0] == among[2]).all()
    per_agent = _data(action_keys(root, jnp.array([4, 4]), jnp.array([2, 2]), 1, per_agent=True))
    assert per_agent.shape == (2, 5, 2)
    assert len({tuple(r) for r in per_agent[0]}) == 5
    assert (per_agent[0] == per_agent[1]).all()


def test_memory_keys_fold_the_game_number() -> None:
    root = root_key(3)
    m = _data(memory_keys(root, jnp.array([5, 5]), jnp.array([10, 11]), team=0))
    assert not (m[0] == m[1]).all()
    again = _data(memory_keys(root, jnp.array([5]), jnp.array([11]), team=0))
    assert (again[0] == m[1]).all()
    assert not (_data(memory_keys(root_key(4), jnp.array([5]), jnp.array([11]), 0)) == again).all()
