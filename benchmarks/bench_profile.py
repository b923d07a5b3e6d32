"""Where one TDM tick spends its time: each phase of `marl_bgs.tdm.transition`, timed alone.

The phases follow `transition.py`'s tick order and call the engine's own rule functions on inputs
precomputed from one mid-game batch, so each time is that phase alone. XLA fuses across phase
boundaries inside the real step, so the parts need not add up to the whole. If the engine's tick
order changes, update `_phases` to match (the benchmark owns no rule; it only splits the calls).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

WARMUP_TICKS = 60


def _time(
    fn: Callable[..., Any], args: tuple[Any, ...], repeats: int
) -> tuple[float, float | None]:
    """Median milliseconds per call of jit(fn)(*args), and XLA's flop estimate."""
    compiled = jax.jit(fn).lower(*args).compile()
    cost = compiled.cost_analysis()
    if isinstance(cost, list | tuple):
        cost = cost[0] if cost else None
    flops = float(cost["flops"]) if cost and "flops" in cost else None
    jax.block_until_ready(compiled(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times), flops


def _phases(env: Any, key: jax.Array, state: Any) -> list[tuple[str, Callable[..., Any], tuple]]:
    from marl_bgs.core import env as env_mod
    from marl_bgs.core.movement import move
    from marl_bgs.tdm.actions import action_masks, can_move, repair, to_world_move
    from marl_bgs.tdm.charge import charge
    from marl_bgs.tdm.classes import WARRIOR
    from marl_bgs.tdm.combat import resolve_combat
    from marl_bgs.tdm.lifecycle import death_points, kill, outcome, respawn_waves
    from marl_bgs.tdm.perception import perceive, sight_lines
    from marl_bgs.tdm.shields import clear_bodies
    from marl_bgs.tdm.statuses import advance_statuses, applied_statuses, movement_speed
    from marl_bgs.tdm.tables import absolute_target, spawn_left

    v = jax.vmap
    actions = env_mod._sample(env.mode, key, state)
    seen = v(perceive)(state)
    masks = v(action_masks)(state, seen)
    accepted = v(lambda a, m: repair(a, m)[0])(actions, masks)
    combat = v(resolve_combat)(state, seen, accepted)

    def statuses(s: Any, c: Any) -> Any:
        return kill(advance_statuses(s.units, c, applied_statuses(s.units, c)), c.died)

    units = v(statuses)(state, combat)

    def charge_phase(s: Any, u: Any, c: Any, a: jnp.ndarray) -> jnp.ndarray:
        solid = u.alive & (s.units.shield == 0)
        chargers = c.ultimate_used & (s.units.class_id == WARRIOR) & u.alive
        return charge(s.units.pos, chargers, absolute_target(a[:, 1]), solid, s.obstacles)

    after_charge = v(charge_phase)(state, units, combat, accepted)

    def move_phase(s: Any, u: Any, a: jnp.ndarray, start: jnp.ndarray) -> jnp.ndarray:
        solid = u.alive & (s.units.shield == 0)
        speed = movement_speed(s.units, s.rules.shield_speed)
        mobile = can_move(s) & u.alive
        world = to_world_move(a[:, 0], s.swap)
        return move(start, world, speed, mobile, solid, s.obstacles, s.near)

    moved = v(move_phase)(state, units, accepted, after_charge)

    def clear_phase(s: Any, u: Any, m: jnp.ndarray) -> Any:
        ending = u.alive & (s.units.shield == 1)
        settled = u.alive & ((s.units.shield == 0) | ending)
        return clear_bodies(m, ending, settled, s.free, spawn_left(s.swap), s.units.class_id)

    def lifecycle(s: Any, u: Any, c: Any) -> Any:
        pts, _, scored = death_points(c.died, s.units.pos, s.swap, s.rules)
        u, wave, back = respawn_waves(u, s.wave, s.swap, s.rules)
        return pts, u, wave, back, outcome(s.score + scored, s.tick + 1, s.rules)

    def tick(k: jax.Array, s: Any) -> tuple[Any, jnp.ndarray]:
        k1, k2, k3 = jax.random.split(k, 3)
        obs, s, _, _, _ = env.step(k2, s, env.sample_actions(k1, s))
        obs, s = env.reset_done(k3, s)
        return s, sum(jnp.sum(o) for o in obs.values())

    return [
        ("sample_actions (perception + masks + draw)",
         lambda k, s: env_mod._sample(env.mode, k, s), (key, state)),
        ("sight lines (45 pairs x 32 obstacles; once per tick, in transition)",
         v(lambda s: sight_lines(s.units.pos, s.obstacles)), (state,)),
        ("perception (distances, sight from cached lines)", v(perceive), (state,)),
        ("masks + repair", v(lambda s, p, a: repair(a, action_masks(s, p))), (state, seen, actions)),  # noqa: E501
        ("combat", v(resolve_combat), (state, seen, accepted)),
        ("statuses + deaths", v(statuses), (state, combat)),
        ("movement: charge", v(charge_phase), (state, units, combat, accepted)),
        ("movement: move (while_loop)", v(move_phase), (state, units, accepted, after_charge)),
        ("movement: clear_bodies", v(clear_phase), (state, units, moved)),
        ("lifecycle (points, waves, end)", v(lifecycle), (state, units, combat)),
        ("transition (whole rule step)",
         lambda s, a: env_mod._step(env.mode, None, s, a, None), (state, actions)),
        ("observations (views, flattened)", lambda s: env.observe(s), (state,)),
        ("reset_done (rule part, no obs)", lambda k, s: env_mod._reset_done(
            env.mode, k, s, env.pool, env.spawn_swap), (key, state)),
        ("__tick__", tick, (key, state)),
    ]  # fmt: skip


def profile(num_envs: int, repeats: int) -> dict[str, Any]:
    """Per-phase milliseconds for one tick of `num_envs` games on map 47."""
    from bench_figures import TDM_MAP_ID

    import marl_bgs

    env = marl_bgs.make("tdm", map_id=TDM_MAP_ID, num_envs=num_envs)
    key = jax.random.key(1)
    _, state = env.reset(key)

    @jax.jit
    def warm(k: jax.Array, s: Any) -> Any:
        def body(s: Any, k: jax.Array) -> tuple[Any, None]:
            k1, k2 = jax.random.split(k)
            _, s, _, _, _ = env.step(k1, s, env.sample_actions(k1, s))
            return env.reset_done(k2, s)[1], None

        return jax.lax.scan(body, s, jax.random.split(k, WARMUP_TICKS))[0]

    state = warm(key, state)
    phases = []
    step_ms = 0.0
    for name, fn, args in _phases(env, jax.random.key(2), state):
        ms, flops = _time(fn, args, max(repeats, 5) * 4)
        if name == "__tick__":
            step_ms = ms
        else:
            phases.append({"name": name, "ms": ms, "flops": flops})
    alive = float(jnp.mean(state.units.alive))
    return {
        "num_envs": num_envs,
        "backend": jax.default_backend(),
        "warmup_ticks": WARMUP_TICKS,
        "repeats": max(repeats, 5) * 4,
        "step_ms": step_ms,
        "phases": phases,
        "notes": [
            f"Mid-game batch: {alive:.0%} of slots alive after {WARMUP_TICKS} ticks."
            " The rule phases are sub-parts of `transition`; sample_actions, transition,"
            " observations and reset_done are the parts of a full tick (observations are built"
            " twice per tick by `step` and `reset_done`, once of which XLA can drop)."
        ],
    }
