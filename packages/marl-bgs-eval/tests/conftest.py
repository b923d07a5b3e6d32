"""Shared Systems and one base evaluation, so the suite compiles only a few programs.

Settings are small on purpose: 2 maps (open arena, picket line) x 8 games, first to 5 points,
draw at tick 40.
"""

from __future__ import annotations

from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import marl_bgs_eval as ev

SETTINGS = {"maps": [0, 12], "games_per_map": 8, "seed": 7, "tick_limit": 40, "winning_score": 5}


def _rush(keys: jax.Array, memory: tuple, inputs: ev.TeamInputs) -> tuple[jax.Array, tuple]:
    """East (toward the enemy, in the agent's own frame) when it may move; a random legal pair."""
    acts, memory = ev.random_system().act(keys, memory, inputs)
    move = jnp.where(inputs.masks.move[..., 3], 3, 0)
    return acts.at[..., 0].set(move), memory


def _broken(keys: jax.Array, memory: tuple, inputs: ev.TeamInputs) -> tuple[jax.Array, tuple]:
    """Always an out-of-range move: the engine repairs it every tick."""
    del keys
    return jnp.full((inputs.obs.shape[0], 5, 3), 99, jnp.int32), memory


HOST_CALLS: list[tuple[int, ...]] = []


def _host_random(key_data: np.ndarray, memory: tuple, inputs: ev.TeamInputs) -> tuple:
    """A host System on numpy: the first legal move and pair (records its input shape)."""
    HOST_CALLS.append(tuple(inputs.obs.shape))
    assert isinstance(inputs.obs, np.ndarray)
    assert key_data.shape == (inputs.obs.shape[0], 2)
    move = np.argmax(inputs.masks.move, axis=-1)
    pair = np.argmax(inputs.masks.pair.reshape(*inputs.masks.pair.shape[:2], -1), axis=-1)
    return np.stack([move, pair // 2, pair % 2], axis=-1), memory


RUSH = ev.system(_rush, name="eastward")
BROKEN = ev.system(_broken, name="broken")
HOST = ev.system(_host_random, name="host-first", host=True)
MIXED = ev.team(
    classes={"M": HOST, "W": ev.pool([RUSH, ev.random_system()], [1, 1]), "P": BROKEN},
    rest=RUSH,
    name="mixed",
)
ev.register("eastward", lambda: RUSH)
ev.register("mixed", lambda: MIXED)


@pytest.fixture(scope="session")
def kit() -> SimpleNamespace:
    """The shared Systems and settings."""
    return SimpleNamespace(
        rush=RUSH, mixed=MIXED, host_calls=HOST_CALLS, settings=SETTINGS, broken=BROKEN, host=HOST
    )


@pytest.fixture(scope="session")
def base_games() -> pd.DataFrame:
    """mixed (A) vs random (B): the evaluation most tests share (batch 8)."""
    HOST_CALLS.clear()
    return ev.evaluate(MIXED, ev.random_system(), batch_size=8, **SETTINGS)
