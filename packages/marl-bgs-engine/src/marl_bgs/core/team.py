"""The team contract: what a team may read, how a team policy is called, and a two-team step.

A team policy acts for one team in `n` games at once::

    act(keys, memory, inputs) -> (actions int32 [n, team_size, heads], memory)

`keys` are typed JAX keys [n] (one per game; a policy may fold in its agents), `memory` is the
policy's own pytree with a leading game axis (started per game by `init(key)`, one game, no batch
axis) and `inputs` is `TeamInputs`: the team's agents' flat observations, structured views and
action masks, never the other team's or the global state. Actions are in each agent's own frame.
Scripted opponents, learned policies, LLM teams and human players all take this shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import jax
import jax.numpy as jnp

from marl_bgs.core.env import BatchedEnv
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.mode import Mode, ModeSpec
from marl_bgs.core.pool import StartPool
from marl_bgs.core.pytree import where_games


class TeamInputs(NamedTuple):
    """One team's permitted input [n_games, team_size, ...], in its roster order."""

    obs: jax.Array  # float32 [n, team_size, obs_size]: flat observations
    views: Any  # structured views [n, team_size, ...] (the flat vector's source)
    masks: Any  # exact legal actions [n, team_size, ...]


class TeamPolicy(Protocol):
    """Anything with `act(keys, memory, inputs) -> (actions, memory)` and `init(key) -> memory`."""

    @property
    def act(self) -> Callable[[jax.Array, Any, TeamInputs], tuple[jax.Array, Any]]: ...

    @property
    def init(self) -> Callable[[jax.Array], Any]: ...


def no_memory(key: jax.Array) -> tuple[()]:
    """The memory of a policy that keeps none."""
    del key
    return ()


@dataclass(frozen=True, eq=False)
class Policy:
    """A JAX team policy: `act` (see the module docstring) and `init` (one game's memory)."""

    name: str
    act: Callable[[jax.Array, Any, TeamInputs], tuple[jax.Array, Any]]
    init: Callable[[jax.Array], Any] = no_memory


def team_inputs(env: BatchedEnv, state: Any) -> tuple[TeamInputs, ...]:
    """Each team's permitted inputs from a batched state, one `TeamInputs` per team."""
    obs, views, masks = env.observe(state), env.views(state), env.action_masks(state)
    return tuple(
        TeamInputs(*env.spec.team_slice((obs, views, masks), t)) for t in range(len(env.spec.teams))
    )


def random_policy(mode: Mode) -> Policy:
    """Uniform random legal actions from the masks (the mode's own sampler)."""

    def act(keys: jax.Array, memory: Any, inputs: TeamInputs) -> tuple[jax.Array, Any]:
        return jax.vmap(mode.sample_legal)(keys, inputs.masks), memory

    return Policy(name="random", act=act)


def idle_policy(mode: Mode) -> Policy:
    """Every agent picks choice 0 of every head (stay, no target, no Ultimate): always legal."""
    heads = len(mode.spec.action_heads)

    def act(keys: jax.Array, memory: Any, inputs: TeamInputs) -> tuple[jax.Array, Any]:
        del keys
        return jnp.zeros((*inputs.obs.shape[:2], heads), jnp.int32), memory

    return Policy(name="idle", act=act)


def act_team(
    spec: ModeSpec, policy: TeamPolicy, keys: jax.Array, memory: Any, inputs: TeamInputs
) -> tuple[jax.Array, Any]:
    """One team's policy on its inputs: (actions int32 [n, team_size, heads], memory)."""
    actions, memory = policy.act(keys, memory, inputs)
    shape = (inputs.obs.shape[0], spec.team_size, len(spec.action_heads))
    if tuple(actions.shape) != shape:
        name = getattr(policy, "name", type(policy).__name__)
        raise ConfigError(
            f"policy {name!r}: actions must have shape {shape}, got {tuple(actions.shape)}"
        )
    return actions.astype(jnp.int32), memory


def act_teams(
    spec: ModeSpec,
    policies: Sequence[TeamPolicy],
    keys: Sequence[jax.Array],
    memories: Sequence[Any],
    inputs: Sequence[TeamInputs],
) -> tuple[jax.Array, tuple[Any, ...]]:
    """Every team's policy on its own inputs: (actions [n, agents, heads], slot order; memories)."""
    acted = [act_team(spec, *args) for args in zip(policies, keys, memories, inputs, strict=True)]
    joined = jnp.concatenate([a for a, _ in acted], axis=1)  # in team order
    order = [slot for team in spec.teams for slot in team]
    if order != list(range(spec.num_agents)):
        joined = joined[:, jnp.argsort(jnp.asarray(order))]
    return joined, tuple(m for _, m in acted)


class TeamStep(NamedTuple):
    """What one two-team tick returns (batched)."""

    state: Any
    memories: tuple[Any, ...]
    actions: jax.Array  # int32 [n, agents, heads]: as the policies gave them
    reward: jax.Array  # float32 [n, agents]
    done: jax.Array  # bool [n]
    info: dict[str, Any]


def team_step(
    env: BatchedEnv, policies: Sequence[TeamPolicy]
) -> Callable[[Any, Sequence[Any], Sequence[jax.Array]], TeamStep]:
    """A pure tick in which every team's policy acts from its own inputs, then the env steps:
    `step(state, memories, keys) -> TeamStep` (keys: one [n] per team). Compose it under `jit`
    and `lax.scan`; finished games stay as they are (restart them with `env.reset_done`)."""
    if len(policies) != len(env.spec.teams):
        raise ConfigError(
            f"policies: expected one per team ({len(env.spec.teams)}), got {len(policies)}"
        )

    def step(state: Any, memories: Sequence[Any], keys: Sequence[jax.Array]) -> TeamStep:
        actions, memories = act_teams(env.spec, policies, keys, memories, team_inputs(env, state))
        _, nxt, reward, done, info = env.step(keys[0], state, actions)
        return TeamStep(nxt, memories, actions, env.stack(reward), done["__all__"], info)

    return step


def restart_finished(
    env: BatchedEnv,
    key: jax.Array,
    state: Any,
    memories: Any = (),
    fresh: Any = (),
    pool: StartPool | None = None,
) -> tuple[Any, Any]:
    """The one rule for what follows a game's end, for every loop over many games: the games
    that ended restart in place (`env.reset_done`: the next episode from `pool`, default the env's
    own) and, in exactly those games, `memories` (any pytree of per-game memories) become
    `fresh` (the same structure). Returns (state, memories)."""
    done = state.outcome != 0
    _, state = env.reset_done(key, state, pool)
    return state, where_games(done, fresh, memories)


def team_rollout(
    env: BatchedEnv,
    policies: Sequence[TeamPolicy],
    ticks: int,
    summarize: Callable[[TeamStep], Any],
) -> Callable[[jax.Array], Any]:
    """A jittable `run(key, state=None) -> summaries` that plays `env.num_envs` games for `ticks`
    ticks from `state` (default: `env.reset`), every team's policy acting from its own inputs;
    finished games restart in place (`env.reset_done`) with fresh memories.
    `summarize(TeamStep)` is stacked per tick."""
    step = team_step(env, policies)
    n = env.num_envs

    def run(key: jax.Array, state: Any = None) -> Any:
        key, k_reset, k_memory = jax.random.split(key, 3)
        if state is None:
            _, state = env.reset(k_reset)
        fresh = tuple(
            jax.vmap(p.init)(jax.random.split(jax.random.fold_in(k_memory, t), n))
            for t, p in enumerate(policies)
        )

        def tick(carry: tuple[Any, Any, jax.Array], _x: None) -> tuple[Any, Any]:
            state, memories, key = carry
            key, k_reset, *k_teams = jax.random.split(key, 2 + len(policies))
            out = step(state, memories, [jax.random.split(k, n) for k in k_teams])
            state, memories = restart_finished(env, k_reset, out.state, out.memories, fresh)
            return (state, memories, key), summarize(out)

        return jax.lax.scan(tick, (state, fresh, key), None, length=ticks)[1]

    return run
