"""One game of any mode, unbatched: the engine calls both adapters share, jitted once per module.

Nothing here is a rule: starts come from the start-state pool (`core.pool.draw`), ticks from the
mode's `transition` and the env's reward function, observations and masks from the mode. The
jitted programs take the mode (hashable static settings) and the pool (traced data), so every
adapter instance with the same static settings reuses the same compiled program whatever its
maps, rosters or rule values.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp

from marl_bgs.core import pool as pools
from marl_bgs.core.env import BatchedEnv, RewardFn, game_tick
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.mode import Mode
from marl_bgs.core.pytree import PyTree, pytree_dataclass, where_games
from marl_bgs.core.registry import make

# The adapters' game is slot 0 of a batch: the same start as `make(..., num_envs=1).reset(key)`.
GAME = 0


def native_env(mode: str, settings: dict[str, Any], adapter: str) -> BatchedEnv:
    """The validated one-game native environment holding an adapter's settings."""
    for name in ("num_envs", "message_dim"):
        if name in settings:
            raise ConfigError(
                f"{name}: the {adapter} adapter runs one game without messages; use "
                f"marl_bgs.make({mode!r}, {name}=...) for batches or messages"
            )
    return make(mode, num_envs=1, **settings)


def world_state(mode: Mode, state: Any) -> jax.Array:
    """One critic-only vector per game [teams * state_size]: the global state of each team's
    first slot (its own frame, every unit visible), concatenated."""
    full = mode.observe(state, True)
    firsts = jnp.asarray([team[0] for team in mode.spec.teams])
    return full[firsts].reshape(-1)


def _start(
    mode: Mode, key: jax.Array, pool: pools.StartPool, episode: jax.Array, spawn_swap: str
) -> Any:
    episode = jnp.asarray(episode, jnp.int32)
    return pools.draw(key, pool, jnp.int32(GAME), episode, spawn_swap, mode.start)


@pytree_dataclass
class Tick(PyTree):
    """What one adapter tick returns (one game)."""

    state: Any  # the next state, or the start state where the game ended and auto_reset
    obs: jax.Array  # float32 [agents, obs_size] of `state`
    world_state: jax.Array  # float32 [teams * state_size] of `state`
    avail: jax.Array  # bool [agents, num_actions] of `state`
    reward: jax.Array  # float32 [agents]
    done: jax.Array  # bool []: the game ended on this tick (or had ended)
    truncated: jax.Array  # bool []: it ended by the clock, not by the win condition
    outcome: jax.Array  # int32 []: the mode's outcome code (0 running)
    facts: Any


def _faces(mode: Mode, state: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
    return mode.observe(state), world_state(mode, state), mode.masks(state).flat


@partial(jax.jit, static_argnames=("mode", "spawn_swap"))
def reset_game(
    mode: Mode, key: jax.Array, pool: pools.StartPool, episode: jax.Array, spawn_swap: str
) -> tuple[Any, jax.Array, jax.Array, jax.Array]:
    """Jitted start: (state, obs [agents, obs_size], world_state, avail [agents, num_actions])."""
    state = _start(mode, key, pool, episode, spawn_swap)
    return state, *_faces(mode, state)


@partial(jax.jit, static_argnames=("mode", "reward_fn", "spawn_swap"))
def step_game(
    mode: Mode,
    reward_fn: RewardFn | None,
    key: jax.Array,
    state: Any,
    flat_actions: jax.Array,
    reset_state: Any,
    use_reset_state: jax.Array,
    auto_reset: jax.Array,
    pool: pools.StartPool,
    spawn_swap: str,
) -> Tick:
    """Jitted tick of one game from flat actions int [agents], shared by both adapters.

    With `auto_reset`, a game that ends is replaced (JaxMARL's `MultiAgentEnv.step` contract) by
    `reset_state` where `use_reset_state`, else by its next episode drawn from the second half of
    `key` (as the native `reset_done(key_reset, state)` draws it). Observations and masks are
    computed once, of the state returned.
    """
    actions = mode.unflatten_actions(flat_actions.astype(jnp.int32))
    nxt, reward, facts, truncated = game_tick(mode, reward_fn, state, actions, None)
    _, key_reset = jax.random.split(key)
    fresh = _start(mode, key_reset, pool, state.episode + 1, spawn_swap)
    restart = where_games(use_reset_state, reset_state, fresh)
    done = nxt.outcome != 0
    out = where_games(done & auto_reset, restart, nxt)
    obs, world, avail = _faces(mode, out)
    return Tick(
        state=out, obs=obs, world_state=world, avail=avail, reward=reward, done=done,
        truncated=truncated, outcome=nxt.outcome, facts=facts,
    )  # fmt: skip
