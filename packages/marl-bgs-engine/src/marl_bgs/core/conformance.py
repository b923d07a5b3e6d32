"""The conformance suite: checks every registered mode, pool and adapter must pass.

    from marl_bgs.testing import check_env
    check_env(marl_bgs.make("tdm", map_id=47, num_envs=4), ticks=20)

Generic checks, for any mode: reset, step and reset_done return states with the same leaf shapes
and dtypes; observations are finite and inside the declared space; the global state, masks and
team inputs have their declared shapes; flat action 0 (every head's first choice) is always
legal; rewards (under the official reward) are finite and, for a mode with a terminal reward,
zero before a game's last tick and, on it, one value per team with the two teams opposite (a
mode with `dense_reward` pays a shared team reward every tick: equal within each team);
`truncated` implies `done`; out-of-range actions are
refused on the host and (with `jit=True`) repaired under `jit`. Then every named check of the
mode's `tick_invariants` (legal actions accepted, dead and padded slots inert, ...) on every
tick, including the one with bad actions.

`check_jaxmarl_adapter` and `check_pettingzoo_adapter` hold the adapters to the same rules: each
tick's next state, reward and end must equal the mode's own, with the invariants on top.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core import pool as pools
from marl_bgs.core.env import game_tick
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.pytree import where_games
from marl_bgs.core.team import team_inputs


class ConformanceError(AssertionError):
    """A conformance check failed; the message says which and where."""


def _check(cond: Any, message: str) -> None:
    if not bool(np.all(np.asarray(cond))):
        raise ConformanceError(message)


ROUNDING = 1e-5  # two compiled programs may round a float differently (fused multiply-adds)


def same_values(a: Any, b: Any) -> bool:
    """Whether two trees hold the same values: integers and booleans exactly, floats to within
    ROUNDING (the same rules compiled into two programs need not round alike)."""
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        x, y = np.asarray(x), np.asarray(y)
        if np.issubdtype(x.dtype, np.floating):
            if not np.allclose(x, y, rtol=0.0, atol=ROUNDING):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def same_structure(a: Any, b: Any, what: str) -> None:
    """Raise unless `a` and `b` have the same tree structure, leaf shapes and dtypes."""
    la, lb = jax.tree.leaves_with_path(a), jax.tree.leaves_with_path(b)
    _check(jax.tree.structure(a) == jax.tree.structure(b), f"{what}: tree structures differ")
    for (path, x), (_, y) in zip(la, lb, strict=True):
        name = jax.tree_util.keystr(path)
        _check(x.shape == y.shape, f"{what}{name}: shape {x.shape} vs {y.shape}")
        _check(x.dtype == y.dtype, f"{what}{name}: dtype {x.dtype} vs {y.dtype}")


def _check_obs(env: Any, obs: dict, t: int) -> None:
    space = env.observation_space(env.agents[0])
    for agent in env.agents:
        o = np.asarray(obs[agent])
        _check(o.shape == (env.num_envs, *space.shape), f"obs[{agent}]: shape {o.shape}")
        _check(o.dtype == np.float32, f"obs[{agent}]: dtype {o.dtype}")
        _check(np.all(np.isfinite(o)), f"obs[{agent}]: non-finite values at tick {t}")
        bad = np.argwhere(~((o >= space.low) & (o <= space.high)))
        _check(bad.size == 0, f"obs[{agent}]: outside the declared space at index {bad[:3]}")


def _check_rewards(env: Any, reward: dict, ended: np.ndarray) -> None:
    r = np.stack([np.asarray(reward[a]) for a in env.agents], axis=1)
    _check(np.all(np.isfinite(r)), "a reward is not finite")
    if env.spec.dense_reward:  # a shared team reward every tick: equal within each team
        for team in env.spec.teams:
            bad = np.flatnonzero(np.ptp(r[:, list(team)], axis=1) != 0)
            _check(bad.size == 0, f"games {bad[:5].tolist()}: a team's rewards differ")
        return
    _check(np.all(r[~ended] == 0), "a reward was paid before the last tick")
    for g in np.nonzero(ended)[0]:
        per_team = [set(r[g, list(team)].tolist()) - {0.0} for team in env.spec.teams]
        _check(
            all(len(v) <= 1 for v in per_team),
            f"game {g}: final rewards {r[g].tolist()} differ within a team",
        )
        if len(per_team) == 2 and all(per_team):
            (a,), (b,) = per_team
            _check(a == -b, f"game {g}: final rewards {r[g].tolist()} are not opposite")


# The reference computations below run compiled (one program per mode and batch shape, shared by
# every check of equal modes); run op by op, each tick of a check re-dispatched hundreds of
# small programs.
@partial(jax.jit, static_argnames=("mode",))
def _invariants(mode: Any, state: Any, nxt: Any, facts: Any) -> dict[str, jax.Array]:
    return jax.vmap(mode.tick_invariants)(state, nxt, facts)


@partial(jax.jit, static_argnames=("mode",))
def _masks(mode: Any, state: Any) -> Any:
    return jax.vmap(mode.masks)(state)


@partial(jax.jit, static_argnames=("mode", "reward_fn"))
def _rules(mode: Any, reward_fn: Any, state: Any, flat: jax.Array) -> Any:
    """The mode's own tick of a batch of games from flat actions: (next, reward, facts, cut)."""
    one = lambda s, f: game_tick(mode, reward_fn, s, mode.unflatten_actions(f), None)  # noqa: E731
    return jax.vmap(one)(state, flat)


def _check_invariants(env: Any, state: Any, nxt: Any, facts: Any, t: int) -> None:
    checks = _invariants(env.mode, state, nxt, facts)
    for name, ok in checks.items():
        bad = np.nonzero(~np.asarray(ok))[0]
        _check(bad.size == 0, f"tick {t}: {name} (games {bad[:5].tolist()})")


def check_env(env: Any, ticks: int = 16, seed: int = 0, jit: bool = True) -> None:
    """Run the whole suite on a `BatchedEnv` of any mode; raise ConformanceError.

    `jit=True` also runs `env.step` and `env.reset_done` under `jax.jit` (one new program per
    environment); `jit=False` calls them as they are.
    """
    spec, n = env.spec, env.num_envs
    key = jax.random.key(seed)
    obs, state = env.reset(key)
    step = jax.jit(env.step) if jit else env.step
    reset_done = jax.jit(env.reset_done) if jit else env.reset_done
    official = env.reward_fn is None
    for t in range(ticks):
        key, k_act, k_step, k_reset = jax.random.split(key, 4)
        _check_obs(env, obs, t)
        gs = env.global_state(state)
        _check(gs.shape == (n, spec.num_agents, spec.state_size), f"global_state: shape {gs.shape}")
        flat = np.asarray(env.action_masks(state).flat)
        _check(
            flat.shape == (n, spec.num_agents, spec.num_actions), f"masks.flat: shape {flat.shape}"
        )
        _check(
            np.all(flat[..., 0]), "masks: flat action 0 (every head's first choice) must be legal"
        )
        for i, inp in enumerate(team_inputs(env, state)):
            _check(
                inp.obs.shape == (n, spec.team_size, spec.obs_size), f"team {i} inputs: obs shape"
            )
        actions = env.sample_actions(k_act, state)
        obs, nxt, reward, done, info = step(k_step, state, actions)
        same_structure(state, nxt, "state after step")
        _check_invariants(env, state, nxt, info["facts"], t)
        ended = np.asarray(done["__all__"]) & np.asarray(state.outcome == 0)
        if official:
            _check_rewards(env, reward, ended)
        for agent in env.agents:
            _check(np.shape(done[agent]) == (n,), f"done[{agent}]: shape {np.shape(done[agent])}")
        _check("__all__" in done, "done lacks '__all__'")
        trunc = np.asarray(info["truncated"])
        _check(trunc.shape == (n,) and trunc.dtype == bool, "info['truncated']: bool [num_envs]")
        _check(np.all(~trunc | np.asarray(done["__all__"])), "truncated without done")
        obs, state2 = reset_done(k_reset, nxt)
        same_structure(nxt, state2, "state after reset_done")
        state = state2
    # Out-of-range actions: refused on the host; under jit (`jit=True`), repaired, never misread.
    heads = jnp.asarray(spec.action_heads, jnp.int32)
    illegal = jnp.broadcast_to(heads + 7, (n, spec.num_agents, len(spec.action_heads)))
    try:
        env.step(key, state, np.asarray(illegal))
    except ConfigError:
        pass
    else:
        raise ConformanceError("out-of-range actions were accepted on the host")
    if jit:  # per agent, as the ticks above passed theirs: the same compiled step
        per_agent = {a: illegal[:, i] for i, a in enumerate(env.agents)}
        _, nxt, _, _, info = step(key, state, per_agent)
        _check_invariants(env, state, nxt, info["facts"], ticks)


def _agents_stacked(per_agent: dict, agents: Sequence[str]) -> np.ndarray:
    return np.stack([np.asarray(per_agent[a]) for a in agents], axis=1)


def _legal_flat(mode: Any, key: jax.Array, masks: Any) -> jax.Array:
    return mode.flatten_actions(mode.sample_legal(key, masks))


def check_jaxmarl_adapter(env: Any, ticks: int = 12, seed: int = 0, games: int = 2) -> None:
    """A JaxMARL `MultiAgentEnv` adapter (`marl_bgs.adapters.jaxmarl`), vmapped over `games`,
    against its own native env: spaces, `world_state`, per-agent `info`, exact masks, next
    states (`same_values`) and rewards equal to the mode's rules, auto-reset to the native next
    episode, and the mode's tick invariants. Raise ConformanceError."""
    native = env.native
    mode, spec = native.mode, native.spec
    space = native.observation_space(spec.agents[0])
    key = jax.random.key(seed)
    obs, state = jax.vmap(env.reset)(jax.random.split(key, games))
    step, step_env = jax.jit(jax.vmap(env.step)), jax.jit(jax.vmap(env.step_env))
    avail_of = jax.jit(jax.vmap(env.get_avail_actions))
    legal = jax.jit(jax.vmap(partial(_legal_flat, mode)))
    restarts = jax.jit(
        jax.vmap(
            lambda k, s: pools.draw(
                jax.random.split(k)[1],
                native.pool,
                jnp.int32(0),
                s.episode + 1,
                native.spawn_swap,
                mode.start,
            )
        )
    )
    for t in range(ticks):
        key, k_act, k_step = jax.random.split(key, 3)
        for agent in spec.agents:
            o = np.asarray(obs[agent])
            _check(
                o.shape == (games, *space.shape) and o.dtype == np.float32, f"obs[{agent}]: shape"
            )
            _check(np.all((o >= space.low) & (o <= space.high)), f"obs[{agent}]: outside its space")
        world = np.asarray(obs["world_state"])
        _check(world.shape == (games, env.state_size), f"world_state: shape {world.shape}")
        masks = _masks(mode, state)
        avail = avail_of(state)
        _check(
            np.array_equal(np.stack([avail[a] for a in spec.agents], 1), masks.flat),
            "avail != masks",
        )
        flat = legal(jax.random.split(k_act, games), masks)
        actions = {a: flat[:, i] for i, a in enumerate(spec.agents)}
        keys = jax.random.split(k_step, games)
        _, nxt, reward, done, info = step_env(keys, state, actions)
        expected, expected_reward, facts, truncated = _rules(mode, native.reward_fn, state, flat)
        same_structure(state, nxt, "state after step_env")
        _check(
            same_values(nxt, expected), f"tick {t}: next state differs from the mode's transition"
        )
        _check(
            same_values(_agents_stacked(reward, spec.agents), expected_reward),
            f"tick {t}: rewards differ from the env's reward",
        )
        _check(np.array_equal(done["__all__"], expected.outcome != 0), f"tick {t}: done != outcome")
        for name, leaf in jax.tree.leaves_with_path(info):
            _check(
                np.shape(leaf) == (games, spec.num_agents),
                f"info{jax.tree_util.keystr(name)}: not one value per agent",
            )
        _check(np.array_equal(info["truncated"][:, 0], truncated), f"tick {t}: truncated differs")
        _check_invariants(native, state, expected, facts, t)
        obs, after, *_ = step(keys, state, actions)
        want = where_games(expected.outcome != 0, restarts(keys, state), expected)
        _check(
            same_values(after, want),
            f"tick {t}: step does not restart finished games with their next episode",
        )
        state = after


def check_pettingzoo_adapter(env: Any, ticks: int = 12, seed: int = 0) -> None:
    """A PettingZoo `ParallelEnv` adapter (`marl_bgs.adapters.pettingzoo`) against its own
    native env: observations and masks in their spaces and exact, next states and rewards equal
    to the mode's rules, terminations and truncations from the outcome, agents leaving when the
    game ends, and the mode's tick invariants. Raise ConformanceError."""
    native = env.native
    mode, spec = native.mode, native.spec
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    rules = jax.jit(lambda s, a: game_tick(mode, native.reward_fn, s, a, None))
    masks_of = jax.jit(mode.masks)
    for t in range(ticks):
        if not env.agents:
            obs, _ = env.reset()
        state = env.game_state
        flat_masks = np.asarray(masks_of(state).flat)
        for i, agent in enumerate(env.agents):
            _check(
                env.observation_space(agent).contains(obs[agent]),
                f"obs[{agent}]: outside its space",
            )
            _check(
                np.array_equal(obs[agent]["action_mask"], flat_masks[i]),
                f"action_mask[{agent}] != masks",
            )
        flat = np.array([rng.choice(np.flatnonzero(m)) for m in flat_masks])
        obs, rewards, terms, truncs, _ = env.step({a: flat[i] for i, a in enumerate(spec.agents)})
        expected, reward, facts, truncated = rules(state, mode.unflatten_actions(jnp.asarray(flat)))
        _check(
            same_values(env.game_state, expected),
            f"tick {t}: next state differs from the mode's transition",
        )
        _check(
            same_values(np.asarray([rewards[a] for a in spec.agents]), np.asarray(reward)),
            f"tick {t}: rewards differ",
        )
        ended, cut = bool(expected.outcome != 0), bool(truncated)
        _check(
            all(truncs[a] == cut and terms[a] == (ended and not cut) for a in spec.agents),
            f"tick {t}: terminations/truncations do not match the outcome",
        )
        _check(
            (env.agents == []) == ended, f"tick {t}: agents should leave exactly when the game ends"
        )
        _check_invariants(
            native,
            jax.tree.map(lambda a: a[None], state),
            jax.tree.map(lambda a: a[None], expected),
            jax.tree.map(lambda a: a[None], facts),
            t,
        )
