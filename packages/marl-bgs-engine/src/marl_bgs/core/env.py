"""The generic batched environment: JaxMARL-style calls with a leading `num_envs` axis, any mode.

It owns batching, start-state draws, `reset_done`, rewards, dict <-> stacked arrays and spaces; the
mode owns every rule. Compiled programs are module-level and keyed on the mode (hashable static
settings), the side rule and the reward function only: a new pool (maps, rosters, rule values,
snapshots, curriculum stages) reuses them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec

from marl_bgs.core import pool as pools
from marl_bgs.core.checks import check_int, shown
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.inputs import check_actions, check_indices, check_messages
from marl_bgs.core.mode import Mode
from marl_bgs.core.pytree import where_games
from marl_bgs.core.spaces import Box, Discrete, MultiDiscrete

RewardFn = Callable[[Any, Any, Any], jax.Array]  # (state, next_state, facts) -> reward [agents]


@partial(jax.jit, static_argnames=("mode", "full", "per_agent"))
def _observe(mode: Mode, state: Any, full: bool = False, per_agent: bool = False) -> Any:
    """Flat observations [num_envs, agents, D], or (`per_agent`) one [num_envs, D] per agent."""
    observe = mode.observe_agents if per_agent else mode.observe
    return jax.vmap(lambda s: observe(s, full))(state)


@partial(jax.jit, static_argnames=("mode",))
def _views(mode: Mode, state: Any) -> Any:
    return jax.vmap(mode.views)(state)


@partial(jax.jit, static_argnames=("mode",))
def _masks(mode: Mode, state: Any) -> Any:
    return jax.vmap(mode.masks)(state)


@partial(jax.jit, static_argnames=("mode",))
def _sample(mode: Mode, key: jax.Array, state: Any) -> jax.Array:
    # Game g's key depends only on (key, g), never on the batch size.
    keys = jax.vmap(lambda g: jax.random.fold_in(key, g))(jnp.arange(state.tick.shape[0]))
    return jax.vmap(mode.sample_legal)(keys, jax.vmap(mode.masks)(state))


@partial(jax.jit, static_argnames=("mode", "num_envs", "spawn_swap"))
def _reset(
    mode: Mode, key: jax.Array, pool: pools.StartPool, num_envs: int, spawn_swap: str
) -> Any:
    draw = lambda g: pools.draw(key, pool, g, jnp.int32(0), spawn_swap, mode.start)  # noqa: E731
    return jax.vmap(draw)(jnp.arange(num_envs))


RESTART_CHUNK = 64  # finished games restarted per pass of `_reset_done`'s in-place loop


@partial(jax.jit, static_argnames=("mode", "spawn_swap", "chunk"))
def _reset_done(
    mode: Mode, key: jax.Array, state: Any, pool: pools.StartPool, spawn_swap: str,
    chunk: int | None = RESTART_CHUNK,
) -> Any:  # fmt: skip
    """Finished games restarted with their next episode's start; the others as they are.

    With a `chunk`, only the finished games' starts are drawn and written, `chunk` games a pass,
    rather than a start drawn for every game and selected (reading and writing every game's whole
    state, its map included, every tick). `chunk=None` (games split over devices, where finding
    the finished ones would gather the games axis) selects. Both give the same states."""
    ended = state.outcome != 0
    n = ended.shape[0]
    draw = lambda g, e: pools.draw(key, pool, g, e + 1, spawn_swap, mode.start)  # noqa: E731
    if chunk is None:
        return where_games(ended, jax.vmap(draw)(jnp.arange(n), state.episode), state)
    size = min(n, chunk)
    # The finished games' indices first, then indices past the end (their writes are dropped).
    order = jnp.nonzero(ended, size=-(-n // size) * size, fill_value=n)[0]

    def restart(i: jax.Array, games: Any) -> Any:
        g = jax.lax.dynamic_slice_in_dim(order, i * size, size)
        safe = jnp.minimum(g, n - 1)
        fresh = jax.vmap(draw)(safe, state.episode[safe])
        return jax.tree.map(lambda a, f: a.at[g].set(f, mode="drop"), games, fresh)

    return jax.lax.fori_loop(0, -(-jnp.sum(ended) // size), restart, state)


@partial(jax.jit, static_argnames=("mode",))
def _start(
    mode: Mode,
    key: jax.Array,
    pool: pools.StartPool,
    entry: jax.Array,
    side: jax.Array,
    episode: jax.Array,
) -> Any:
    def one(g: jax.Array, p: jax.Array, s: jax.Array, e: jax.Array) -> Any:
        k = jax.random.fold_in(jax.random.fold_in(jax.random.fold_in(key, g), e), pools.START_TAG)
        return mode.start(k, pools.take(pool, p, s, e))

    return jax.vmap(one)(jnp.arange(entry.shape[0]), entry, side, episode)


def game_tick(
    mode: Mode,
    reward_fn: RewardFn | None,
    state: Any,
    actions: jax.Array,
    messages: jax.Array | None,
) -> tuple[Any, jax.Array, Any, jax.Array]:
    """One tick of one game: (next state, reward [agents], facts, truncated []).

    `reward_fn=None` is the mode's official reward (None rather than the bound method, so that
    equal modes share compiled programs)."""
    nxt, facts = mode.transition(state, actions, messages)
    shaped = (mode.reward if reward_fn is None else reward_fn)(state, nxt, facts)
    if jnp.shape(shaped) != (mode.spec.num_agents,):
        raise ConfigError(
            f"reward_fn: expected one reward per agent, shape ({mode.spec.num_agents},) for one"
            f" game, got shape {jnp.shape(shaped)}"
        )
    # A game that had already ended pays nothing, whatever the reward function says.
    reward = jnp.where(state.outcome != 0, 0.0, shaped).astype(jnp.float32)
    return nxt, reward, facts, mode.truncated(nxt)


@partial(jax.jit, static_argnums=(0, 1))
def _step(mode, reward_fn, state, actions, messages):
    """`game_tick` over a batch; one program per (mode, reward_fn); `messages` may be None."""
    return jax.vmap(partial(game_tick, mode, reward_fn))(state, actions, messages)


MAX_NUM_ENVS = 2**31 - 1  # game indices are int32
STEP_MEMORY_FACTOR = 32  # a step's peak memory per game, in multiples of one game state's bytes


def available_memory() -> int:
    """Bytes the default device can hold: its allocator's limit, or the host's physical memory."""
    stats = jax.local_devices()[0].memory_stats() or {}
    if "bytes_limit" in stats:
        return int(stats["bytes_limit"])
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def game_state_bytes(pool: pools.StartPool) -> int:
    """Bytes of one game's state in this pool's layout."""
    leaves = jax.tree.leaves(pool.states)
    return sum(leaf.nbytes for leaf in leaves) // max(1, leaves[0].shape[0] * 2)


def batch_memory_estimate(pool: pools.StartPool, num_envs: int) -> int:
    """An upper bound on the bytes one batched step of `num_envs` games needs (the state, the
    observations and the step's intermediates): STEP_MEMORY_FACTOR times the batch's state."""
    return STEP_MEMORY_FACTOR * game_state_bytes(pool) * num_envs


def check_batch_fits(pool: pools.StartPool, num_envs: int) -> None:
    """Refuse a batch whose estimated memory exceeds what the device holds, before allocating."""
    need, have = batch_memory_estimate(pool, num_envs), available_memory()
    if need > have:
        fits = max(1, num_envs * have // need)
        raise ConfigError(
            f"num_envs: {num_envs} games need about {need / 2**30:.1f} GiB, more than the "
            f"{have / 2**30:.1f} GiB that {jax.local_devices()[0].platform} memory holds; "
            f"use at most about {fits} (or several batches)"
        )


def auto_axes(mesh: Mesh) -> Mesh:
    """`mesh` with every axis Auto: a layout on it is a constraint XLA propagates through the
    programs' indexing and gathers, also for meshes built with Explicit axes (`jax.make_mesh`'s
    default)."""
    return Mesh(mesh.devices, mesh.axis_names, axis_types=(AxisType.Auto,) * len(mesh.axis_names))


def games_sharding(mesh: Mesh | None, axis: str | None, num_envs: int) -> NamedSharding | None:
    """The layout that splits the games axis over `mesh`'s `axis` (default: its first), checked:
    None without a mesh; the games must divide evenly among the devices of that axis."""
    if mesh is None:
        if axis is not None:
            raise ConfigError(f"mesh_axis: {shown(axis)} given without a mesh")
        return None
    if not isinstance(mesh, Mesh):
        raise ConfigError(f"mesh: expected a jax.sharding.Mesh, got {type(mesh).__name__}")
    axis = mesh.axis_names[0] if axis is None else axis
    if axis not in mesh.axis_names:
        raise ConfigError(f"mesh_axis: expected one of {list(mesh.axis_names)}, got {shown(axis)}")
    devices = mesh.shape[axis]
    if num_envs % devices:
        raise ConfigError(
            f"num_envs: {num_envs} games do not split evenly over the {devices} devices of mesh "
            f"axis {axis!r}; use a multiple of {devices}"
        )
    # The rules run per game, so the layout is a constraint XLA propagates.
    return NamedSharding(auto_axes(mesh), PartitionSpec(axis))


def shard_games(tree: Any, env: BatchedEnv) -> Any:
    """Lay `tree` (leading games axis) out along the env's games sharding; as is without one.
    Works eagerly and under `jit`; the rules, being per game, then run on each device's games."""
    if env.sharding is None:
        return tree
    return jax.tree.map(lambda x: jax.lax.with_sharding_constraint(x, env.sharding), tree)


class BatchedEnv:
    """`num_envs` games of one mode, stepped together (build it with `marl_bgs.make`).

    `reward_fn(state, next_state, facts) -> reward [agents]` (one game) shapes rewards without
    touching the rules; None gives the mode's official reward. `spawn_swap` picks spawn ends per
    game: "half" alternates (mirrored pairs), "none" / "all" fix them, "random" draws them.
    """

    def __init__(
        self,
        mode: Mode,
        pool: pools.StartPool,
        *,
        num_envs: int = 1,
        spawn_swap: str = "half",
        reward_fn: RewardFn | None = None,
        mesh: Mesh | None = None,
        mesh_axis: str | None = None,
    ) -> None:
        num_envs = check_int(num_envs, "num_envs", 1, MAX_NUM_ENVS)
        self.sharding = games_sharding(mesh, mesh_axis, num_envs)
        sharding = self.sharding  # None exactly when there is no mesh
        devices = 1 if sharding is None else sharding.mesh.shape[sharding.spec[0]]
        check_batch_fits(pool, -(-num_envs // devices))
        spawn_swap = pools.check_spawn_swap(spawn_swap)
        if reward_fn is not None and not callable(reward_fn):
            raise ConfigError(f"reward_fn: expected a callable, got {type(reward_fn).__name__}")
        self.mode = mode
        self.spec = mode.spec
        self.pool = pool
        self.num_envs = num_envs
        self.spawn_swap = spawn_swap
        self.reward_fn = reward_fn  # None: the mode's official reward
        low, high = mode.observation_bounds()
        self._obs_space = Box(low=low, high=high)

    # --- names and spaces ---------------------------------------------------------------------
    @property
    def agents(self) -> tuple[str, ...]:
        return self.spec.agents

    @property
    def num_agents(self) -> int:
        return self.spec.num_agents

    @property
    def obs_size(self) -> int:
        """Length of each agent's flat observation vector."""
        return self.spec.obs_size

    def observation_space(self, agent: str) -> Box:
        """The flat observation's bounds (the same for every agent)."""
        self._check_agent(agent)
        return self._obs_space

    def action_space(self, agent: str) -> MultiDiscrete:
        """One choice per action head."""
        self._check_agent(agent)
        return MultiDiscrete(self.spec.action_heads)

    def flat_action_space(self, agent: str) -> Discrete:
        """The flattened action (the product of the heads)."""
        self._check_agent(agent)
        return Discrete(self.spec.num_actions)

    def _check_agent(self, agent: str) -> None:
        if agent not in self.agents:
            raise ConfigError(f"agent: expected one of {list(self.agents)}, got {agent!r}")

    # --- dict <-> stacked ---------------------------------------------------------------------
    def to_dict(self, stacked: jax.Array) -> dict[str, jax.Array]:
        """[num_envs, agents, ...] -> {agent: [num_envs, ...]}."""
        return {a: stacked[:, i] for i, a in enumerate(self.agents)}

    def stack(self, per_agent: dict[str, Any]) -> jax.Array:
        """{agent: [num_envs, ...]} -> [num_envs, agents, ...]."""
        missing = [a for a in self.agents if a not in per_agent]
        if missing:
            raise ConfigError(f"actions: missing agent(s) {missing}")
        return jnp.stack([jnp.asarray(per_agent[a]) for a in self.agents], axis=1)

    def action_array(self, actions: Any) -> jax.Array:
        """Actions as int32 heads [num_envs, agents, heads] from a dict, heads or flat indices,
        checked on the host (see `marl_bgs.core.inputs`)."""
        return check_actions(self.spec, self.num_envs, actions, self.mode.unflatten_actions)

    # --- the API ------------------------------------------------------------------------------
    def reset(self, key: jax.Array, pool: pools.StartPool | None = None) -> tuple[dict, Any]:
        """Start `num_envs` games drawn from the pool (default: this env's): (obs, state)."""
        state = _reset(self.mode, key, self._pool(pool), self.num_envs, self.spawn_swap)
        state = shard_games(state, self)
        return self.get_obs(state), state

    def step(
        self, key: jax.Array, state: Any, actions: Any, messages: jax.Array | None = None
    ) -> tuple[dict, Any, dict, dict, dict]:
        """Advance every game one tick: (obs, state, reward, done, info), JaxMARL's order.

        `actions`: {agent: [num_envs, heads] or [num_envs]} or an array [num_envs, agents, heads]
        (or flat [num_envs, agents]) of integers; out-of-range values are an error on the host,
        in-range illegal ones get the mode's repair. `messages` [num_envs, agents, message_dim]
        (finite floats) reach teammates next tick. A finished game does not change until
        `reset_done`. The key is unused (the rules are deterministic) and kept for the JaxMARL
        signature. `info` holds `facts`,
        `outcome`, `truncated` (ended by the clock, not by the win condition), `episode`, `tick`.
        """
        del key
        arr = self.action_array(actions)
        width = self.spec.message_dim
        if messages is None and width > 0:
            # No messages sent this tick: teammates receive none next tick (not stale ones).
            messages = jnp.zeros((self.num_envs, self.num_agents, width), jnp.float32)
        elif messages is not None:
            messages = check_messages(self.spec, self.num_envs, messages)
        nxt, reward, facts, truncated = _step(self.mode, self.reward_fn, state, arr, messages)
        nxt = shard_games(nxt, self)
        done = nxt.outcome != 0
        dones = dict.fromkeys(self.agents, done) | {"__all__": done}
        info = {
            "facts": facts,
            "outcome": nxt.outcome,
            "truncated": truncated,
            "episode": nxt.episode,
            "tick": nxt.tick,
        }
        return self.get_obs(nxt), nxt, self.to_dict(reward), dones, info

    def reset_done(
        self, key: jax.Array, state: Any, pool: pools.StartPool | None = None
    ) -> tuple[dict, Any]:
        """Restart only finished games with their next episode from the pool: (obs, state)."""
        nxt = _reset_done(
            self.mode, key, state, self._pool(pool), self.spawn_swap,
            RESTART_CHUNK if self.sharding is None else None,
        )  # fmt: skip
        nxt = shard_games(nxt, self)
        return self.get_obs(nxt), nxt

    def _pool(self, pool: pools.StartPool | None) -> pools.StartPool:
        if pool is None:
            return self.pool
        if not isinstance(pool, pools.StartPool):
            raise ConfigError(f"pool: expected a StartPool, got {type(pool).__name__}")
        pools.check_like(pool, self.pool)
        return pool

    def start_entries(
        self, entry: Any, side: Any, episode: Any = None, key: jax.Array | None = None
    ) -> Any:
        """Start states chosen per game [num_envs]: a pool entry and a side (True: the teams'
        spawn ends swapped). For evaluation schedules that fix every game's setting. A mode
        with random starts (`Mode.start`) draws game g's from `key` (default `key(0)`), g and
        its episode, as `reset` would."""
        n = self.num_envs
        entries = check_indices(entry, n, self.pool.size, "entry")
        sides = check_indices(side, n, 2, "side").astype(bool)
        big = np.iinfo(np.int32).max
        episodes = (
            np.zeros(n, np.int32) if episode is None else check_indices(episode, n, big, "episode")
        )
        key = jax.random.key(0) if key is None else key
        states = _start(
            self.mode, key, self.pool, jnp.asarray(entries), jnp.asarray(sides),
            jnp.asarray(episodes),
        )  # fmt: skip
        return shard_games(states, self)

    def get_obs(self, state: Any) -> dict[str, jax.Array]:
        """Each agent's flat permitted observation {agent: [num_envs, obs_size]}.

        Built per agent rather than sliced from `observe`: each slice would be a copy."""
        return dict(zip(self.agents, _observe(self.mode, state, per_agent=True), strict=True))

    def observe(self, state: Any) -> jax.Array:
        """Stacked flat observations [num_envs, agents, obs_size]."""
        return _observe(self.mode, state)

    def views(self, state: Any) -> Any:
        """Structured views of every agent [num_envs, agents, ...] (the flat vector's source)."""
        return _views(self.mode, state)

    def team_views(self, state: Any, team: int) -> Any:
        """Structured views of one team's agents [num_envs, team_size, ...]."""
        return self.spec.team_slice(self.views(state), team)

    def global_state(self, state: Any) -> jax.Array:
        """Critic-only state [num_envs, agents, state_size]: each agent's frame, all visible."""
        return _observe(self.mode, state, full=True)

    def action_masks(self, state: Any) -> Any:
        """Exact legal-action masks [num_envs, agents, ...] in each agent's own frame."""
        return _masks(self.mode, state)

    def get_avail_actions(self, state: Any) -> dict[str, jax.Array]:
        """Legal flat actions {agent: bool [num_envs, num_actions]} (JaxMARL's name)."""
        return self.to_dict(self.action_masks(state).flat)

    def sample_actions(self, key: jax.Array, state: Any) -> dict[str, jax.Array]:
        """Uniform random legal actions {agent: [num_envs, heads]}."""
        return self.to_dict(_sample(self.mode, key, state))

    def flatten_actions(self, actions: jax.Array) -> jax.Array:
        """Heads [..., heads] -> flat indices [...]."""
        return self.mode.flatten_actions(actions)
