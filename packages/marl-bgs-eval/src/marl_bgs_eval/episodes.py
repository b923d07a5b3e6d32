"""Whole episodes of a single-team mode (Two-Bridge): one team policy plays `env.num_envs` games
from one key until every game has ended, and each game's outcome, length and return come back.

Generic over modes with one team and a shared team reward; nothing here knows a rule. The
policy is any engine team policy (`act(keys, memory, inputs)`, `init(key)`), called exactly as
`marl_bgs.team_step` calls it, and a game's start depends only on (key, game index).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs import BatchedEnv, team_step
from marl_bgs.core.team import TeamPolicy
from marl_bgs_eval.errors import EvalError


class Episodes(NamedTuple):
    """One value per game (numpy): the outcome code, the steps played and the team's return."""

    outcome: np.ndarray  # int32 [n]
    ticks: np.ndarray  # int32 [n]
    returns: np.ndarray  # float32 [n]: the sum of the shared team reward (slot 0's)


def run_episodes(
    env: BatchedEnv, policy: TeamPolicy, key: jax.Array, max_ticks: int = 100_000
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Traceable core of `play_episodes`: (outcome, ticks, returns) arrays [num_envs]. Call it
    under `jit` with a policy built from traced weights to evaluate many checkpoints with one
    compiled program."""
    step = team_step(env, [policy])
    n = env.num_envs
    k_reset, k_memory, k_play = jax.random.split(key, 3)
    _, state = env.reset(k_reset)
    memory = jax.vmap(policy.init)(jax.random.split(k_memory, n))

    def going(carry: tuple) -> jax.Array:
        state, _, t, _ = carry
        return (t < max_ticks) & jnp.any(state.outcome == 0)

    def tick(carry: tuple) -> tuple:
        state, memory, t, returns = carry
        keys = jax.random.split(jax.random.fold_in(k_play, t), n)
        out = step(state, (memory,), [keys])
        return out.state, out.memories[0], t + 1, returns + out.reward[:, 0]

    start = (state, memory, jnp.int32(0), jnp.zeros(n, jnp.float32))
    state, _, _, returns = jax.lax.while_loop(going, tick, start)
    return state.outcome, state.tick, returns


def play_episodes(
    env: BatchedEnv, policy: TeamPolicy, key: jax.Array, max_ticks: int = 100_000
) -> Episodes:
    """Play `env.num_envs` episodes of a one-team env with `policy` until each ends (or
    `max_ticks` pass: a game still running then reads outcome 0)."""
    if len(env.spec.teams) != 1:
        raise EvalError(
            f"env: play_episodes plays single-team modes; {env.spec.id} has "
            f"{len(env.spec.teams)} teams (use evaluate)"
        )
    run = jax.jit(lambda k: run_episodes(env, policy, k, max_ticks))
    outcome, ticks, returns = run(key)
    return Episodes(np.asarray(outcome), np.asarray(ticks), np.asarray(returns))
