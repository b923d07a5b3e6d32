"""One game, unbatched: the engine calls both adapters share, jitted once at module level.

Nothing here is a rule: starts come from `reset.draw_start`, ticks from `transition.transition`,
observations from `views.flat_views`, masks from `actions.action_masks`, the end of the game from
`lifecycle.outcome`. The jitted programs are module-level, and the settings that differ between
adapter instances (maps, rosters, rule values) are traced data in the `StartPool`, so every adapter
instance with the same static shapes reuses the same compiled program.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp

from marl_bgs.actions import action_masks, unflatten
from marl_bgs.config import ConfigError
from marl_bgs.constants import ONGOING
from marl_bgs.env import TeamDeathmatch
from marl_bgs.facts import Facts
from marl_bgs.lifecycle import outcome
from marl_bgs.perception import perceive
from marl_bgs.pytree import pytree_dataclass
from marl_bgs.registry import make
from marl_bgs.reset import StartPool, draw_start
from marl_bgs.state import GameState
from marl_bgs.transition import transition
from marl_bgs.views import flat_views

# The adapters' game is slot 0 of a batch: the same start as `make(..., num_envs=1).reset(key)`.
GAME = 0


def native_env(kwargs: dict[str, Any], adapter: str) -> TeamDeathmatch:
    """The validated one-game native environment holding an adapter's settings."""
    for name in ("num_envs", "message_dim"):
        if name in kwargs:
            raise ConfigError(
                f"{name}: the {adapter} adapter runs one game without messages; use "
                f"marl_bgs.make('tdm', {name}=...) for batches or messages"
            )
    return make("tdm", num_envs=1, **kwargs)


def observe(state: GameState, shared_sight: bool) -> jnp.ndarray:
    """Flat observations [10, obs_size] of one game."""
    return flat_views(state, shared_sight)


def avail(state: GameState) -> jnp.ndarray:
    """Legal flat actions bool [10, 198] of one game."""
    return action_masks(state, perceive(state)).flat


def start(key: jax.Array, pool: StartPool, episode: jnp.ndarray, spawn_swap: str) -> GameState:
    """Episode `episode` of the adapter's game (as `reset` / `reset_done` of the native env)."""
    return draw_start(key, pool, jnp.int32(GAME), jnp.asarray(episode, jnp.int32), spawn_swap, 0)


def ended_by_time(state: GameState) -> jnp.ndarray:
    """True when a finished game ended at the tick limit with neither side at the winning score
    (the draw that PettingZoo calls a truncation); the engine's `outcome` decides."""
    reached = outcome(state.score, jnp.int32(0), state.rules) != ONGOING
    return state.done & ~reached


def advance(
    state: GameState, flat_actions: jnp.ndarray
) -> tuple[GameState, jnp.ndarray, Facts, jnp.ndarray]:
    """One tick from flat actions int [10]: (next state, reward [10], facts, truncated [])."""
    nxt, reward, facts = transition(state, unflatten(flat_actions.astype(jnp.int32)))
    return nxt, reward, facts, ended_by_time(nxt)


@partial(jax.jit, static_argnames=("spawn_swap", "shared_sight"))
def reset_game(
    key: jax.Array, pool: StartPool, episode: jnp.ndarray, spawn_swap: str, shared_sight: bool
) -> tuple[GameState, jnp.ndarray, jnp.ndarray]:
    """Jitted start: (state, obs [10, obs_size], avail [10, 198])."""
    state = start(key, pool, episode, spawn_swap)
    return state, observe(state, shared_sight), avail(state)


@pytree_dataclass
class Tick:
    """What one adapter tick returns (one game)."""

    state: GameState  # the next state, or the reset state where the game ended and auto_reset
    obs: jnp.ndarray  # float32 [10, obs_size] of `state`
    avail: jnp.ndarray  # bool [10, 198] of `state`
    reward: jnp.ndarray  # float32 [10]
    done: jnp.ndarray  # bool []: the game ended on this tick (or had ended)
    truncated: jnp.ndarray  # bool []: it ended at the tick limit (see `ended_by_time`)
    outcome: jnp.ndarray  # int32 []: 1 A wins, 2 B wins, 3 draw (0 running)
    facts: Facts


def _select(pred: jnp.ndarray, on_true: Any, on_false: Any) -> Any:
    return jax.tree.map(lambda x, y: jax.lax.select(pred, x, y), on_true, on_false)


@partial(jax.jit, static_argnames=("spawn_swap", "shared_sight"))
def step_game(
    key: jax.Array,
    state: GameState,
    flat_actions: jnp.ndarray,
    reset_state: GameState,
    use_reset_state: jnp.ndarray,
    auto_reset: jnp.ndarray,
    pool: StartPool,
    spawn_swap: str,
    shared_sight: bool,
) -> Tick:
    """Jitted tick of one game, shared by both adapters (one compiled program for all instances).

    With `auto_reset`, a game that ends is replaced (JaxMARL's `MultiAgentEnv.step` contract) by
    `reset_state` where `use_reset_state`, else by its next episode drawn from the second half of
    `key` (as the native `reset_done(key_reset, state)` draws it). The observation and mask are
    computed once, of the state returned.
    """
    nxt, reward, facts, truncated = advance(state, flat_actions)
    _, key_reset = jax.random.split(key)
    fresh = start(key_reset, pool, state.episode + 1, spawn_swap)
    restart = _select(use_reset_state, reset_state, fresh)
    out = _select(nxt.done & auto_reset, restart, nxt)
    return Tick(
        state=out, obs=observe(out, shared_sight), avail=avail(out), reward=reward, done=nxt.done,
        truncated=truncated, outcome=nxt.outcome, facts=facts,
    )  # fmt: skip
