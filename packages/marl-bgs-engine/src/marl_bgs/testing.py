"""The conformance suite: checks every registered mode, map and adapter must pass.

    from marl_bgs.testing import check_env
    check_env(marl_bgs.make("tdm", map_id=47, num_envs=4), ticks=20)

It checks: reset and step return the same leaf shapes and dtypes; observations lie inside the
declared space and are finite; padded slots stay inert and dead agents never move; sampled legal
actions are accepted without repair; illegal actions are repaired to stay / (none, no); masks and
per-head unions agree; rewards are zero except on the last tick, where every agent of a team gets
the same reward, the other team the opposite one, and padded slots nothing.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


class ConformanceError(AssertionError):
    """A conformance check failed; the message says which and where."""


def _check(cond: Any, message: str) -> None:
    if not bool(np.all(np.asarray(cond))):
        raise ConformanceError(message)


def _same_structure(a: Any, b: Any, what: str) -> None:
    la, lb = jax.tree.leaves_with_path(a), jax.tree.leaves_with_path(b)
    _check(len(la) == len(lb), f"{what}: reset and step states differ in structure")
    for (path, x), (_, y) in zip(la, lb, strict=True):
        name = jax.tree_util.keystr(path)
        _check(
            x.shape == y.shape, f"{what}{name}: shape {x.shape} after reset, {y.shape} after step"
        )
        _check(
            x.dtype == y.dtype, f"{what}{name}: dtype {x.dtype} after reset, {y.dtype} after step"
        )


def check_env(env: Any, ticks: int = 16, seed: int = 0, jit: bool = True) -> None:
    """Run the whole suite on a batched Team Deathmatch environment; raise ConformanceError.

    `jit=True` also checks that `env.step` and `env.reset_done` compile under `jax.jit` (one new
    program per environment); `jit=False` calls them as they are, which for the engine's own
    environment reuses its compiled parts across maps, rosters and rule values.
    """
    key = jax.random.key(seed)
    obs, state = env.reset(key)
    space = env.observation_space(env.agents[0])
    step = jax.jit(env.step) if jit else env.step
    reset_done = jax.jit(env.reset_done) if jit else env.reset_done
    for t in range(ticks):
        padded = np.asarray(state.units.class_id) == 0  # per game; a restart may change roster
        key, k_act, k_step, k_reset = jax.random.split(key, 4)
        for agent in env.agents:
            o = obs[agent]
            _check(o.shape == (env.num_envs, *space.shape), f"obs[{agent}]: shape {o.shape}")
            _check(o.dtype == jnp.float32, f"obs[{agent}]: dtype {o.dtype}")
            _check(jnp.all(jnp.isfinite(o)), f"obs[{agent}]: non-finite values at tick {t}")
            bad = np.argwhere(~((np.asarray(o) >= space.low) & (np.asarray(o) <= space.high)))
            _check(bad.size == 0, f"obs[{agent}]: outside the declared space at index {bad[:3]}")
        masks = env.action_masks(state)
        _check(jnp.all(masks.move[..., 0]), "masks: stay must always be legal")
        _check(jnp.all(masks.pair[..., 0, 0]), "masks: (none, no Ultimate) must always be legal")
        _check(jnp.all(masks.target == masks.pair.any(-1)), "masks: target head != pair union")
        _check(jnp.all(masks.ultimate == masks.pair.any(-2)), "masks: ultimate head != pair union")
        inert = ~np.asarray(state.units.alive)
        _check(np.all(np.asarray(masks.move)[inert][:, 1:] == 0), "masks: a dead agent may move")
        actions = env.sample_actions(k_act, state)
        obs2, nxt, reward, done, info = step(k_step, state, actions)
        _same_structure(state, nxt, "state")
        facts = info["facts"]
        running = ~np.asarray(state.outcome != 0)[:, None]
        _check(~np.any(np.asarray(facts.move_rejected) & running), "legal moves were repaired")
        _check(~np.any(np.asarray(facts.combat_rejected) & running), "legal pairs were repaired")
        dead_before = ~np.asarray(state.units.alive) & ~np.asarray(facts.respawned)
        moved = np.any(np.asarray(nxt.units.pos) != np.asarray(state.units.pos), axis=-1)
        _check(~np.any(dead_before & moved), "a dead agent moved")
        _check(np.all(np.asarray(nxt.units.class_id)[padded] == 0), "a padded slot changed class")
        _check(~np.any(np.asarray(nxt.units.alive)[padded]), "a padded slot came alive")
        r = np.stack([np.asarray(reward[a]) for a in env.agents], axis=1)
        ended = np.asarray(done["__all__"]) & running[:, 0]
        _check(np.all(r[~ended] == 0), "a reward was paid before the last tick")
        _check(np.all(r[padded] == 0), "a padded slot was paid")
        for g in np.nonzero(ended)[0]:
            used = ~padded[g]
            a, b = r[g, :5][used[:5]], r[g, 5:][used[5:]]
            _check(
                np.all(a == a[0]) and np.all(b == b[0]) and a[0] == -b[0],
                f"game {g}: final rewards {r[g].tolist()} are not one per team, opposite",
            )
        for agent in env.agents:
            _check(done[agent].shape == (env.num_envs,), f"done[{agent}]: shape")
        _check("__all__" in done, "done lacks '__all__'")
        obs, state = reset_done(k_reset, nxt)
        _same_structure(nxt, state, "state after reset_done")
        del obs2
    # Illegal actions are repaired to stay and (none, no Ultimate).
    illegal = jnp.broadcast_to(jnp.array([99, 42, 7], jnp.int32), (env.num_envs, 10, 3))
    _, _, _, _, info = step(key, state, illegal)
    acc = np.asarray(info["facts"].accepted)
    running = ~np.asarray(state.outcome != 0)
    _check(np.all(acc[running] == 0), "out-of-range actions were not repaired to (stay, none, no)")


def relative_target(actor: int, slot: int) -> int:
    """The target index under which `actor` names absolute `slot` (1-5 own roster, 6-10 enemies)."""
    same = (actor < 5) == (slot < 5)
    return (1 if same else 6) + slot % 5


def slot_actions(
    basic: dict[int, int] | None = None,
    ult: dict[int, int | None] | None = None,
    move: dict[int, int] | None = None,
) -> jnp.ndarray:
    """One game's actions int32 [10, 3] from absolute slots, for hand-built tests.

    `basic` {actor: target slot}, `ult` {actor: target slot, or None for an untargeted Ultimate},
    `move` {actor: move index in the actor's own frame}; every other head is 0.
    """
    a = np.zeros((10, 3), np.int32)
    for s, m in (move or {}).items():
        a[s, 0] = m
    for s, t in (basic or {}).items():
        a[s, 1] = relative_target(s, t)
    for s, t in (ult or {}).items():
        a[s, 1:] = (0 if t is None else relative_target(s, t), 1)
    return jnp.asarray(a)
