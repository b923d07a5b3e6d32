"""The class table and slot layout as JAX arrays, looked up by class id or slot."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from marl_bgs.core.arena import MAP_WIDTH
from marl_bgs.tdm.constants import SPAWN_PAD_X, SPAWN_PAD_Y, TEAM_SIZE

SLOT_TEAM = np.repeat(np.arange(2, dtype=np.int32), TEAM_SIZE)  # [10]: 0 team A, 1 team B
SLOT_INDEX = np.tile(np.arange(TEAM_SIZE, dtype=np.int32), 2)  # [10]: roster slot within team
SAME_TEAM = SLOT_TEAM[:, None] == SLOT_TEAM[None, :]  # [10, 10]


def lookup(table: np.ndarray, class_id: jnp.ndarray) -> jnp.ndarray:
    """Per-slot value of a class table."""
    return jnp.asarray(table)[class_id]


def spawn_left(swap: jnp.ndarray) -> jnp.ndarray:
    """[10] bool: whether each slot's team spawns on the left edge."""
    return (jnp.asarray(SLOT_TEAM) == 0) != swap


def spawn_pads(swap: jnp.ndarray) -> jnp.ndarray:
    """[10, 2] world position of each slot's own spawn pad."""
    x = jnp.where(spawn_left(swap), SPAWN_PAD_X, MAP_WIDTH - SPAWN_PAD_X)
    y = jnp.asarray(np.asarray(SPAWN_PAD_Y, np.float32)[SLOT_INDEX])
    return jnp.stack([x, y], axis=-1)


def _rel_to_abs() -> np.ndarray:
    """[10, 11]: absolute slot named by each relative target index (-1 for none)."""
    own = SLOT_TEAM[:, None] * TEAM_SIZE + np.arange(TEAM_SIZE)[None, :]
    enemy = (1 - SLOT_TEAM[:, None]) * TEAM_SIZE + np.arange(TEAM_SIZE)[None, :]
    return np.concatenate([np.full((10, 1), -1), own, enemy], axis=1).astype(np.int32)


REL_TO_ABS = _rel_to_abs()


def observer_columns(pairs: jnp.ndarray) -> jnp.ndarray:
    """Pairwise [10 observers, 10 slots] -> [10 observers, 10 rows] in each observer's order:
    `pairs[i, REL_TO_ABS[i, 1:]]`, cut from slices (team B's observers see slots 5-9, then 0-4)
    instead of gathered, which XLA's CPU code does far faster."""
    return jnp.concatenate([pairs[:TEAM_SIZE], jnp.roll(pairs[TEAM_SIZE:], TEAM_SIZE, axis=1)])


def absolute_target(target: jnp.ndarray) -> jnp.ndarray:
    """Relative target index per slot [10] (0 none, 1-5 own team, 6-10 enemies) -> slot or -1."""
    return jnp.asarray(REL_TO_ABS)[jnp.arange(target.shape[0]), target]


def relative_index() -> np.ndarray:
    """[10, 10]: the relative target index (1-10) under which actor i names slot j."""
    same = SAME_TEAM
    return np.where(same, 1 + SLOT_INDEX[None, :], 1 + TEAM_SIZE + SLOT_INDEX[None, :]).astype(
        np.int32
    )


RELATIVE_INDEX = relative_index()
