"""The figures: compiled `lax.scan` rollouts of random legal games, timed in this process.

Each figure builds one rollout `run(key) -> checksum`, times its compile and its first call apart,
then reports the median of `repeats` further calls, each ended by `block_until_ready`. Every tick
samples random legal actions, steps every game and reduces the observations into a checksum carried
through the scan, so neither simulator can have its observations removed as dead code.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

AGENTS_PER_GAME = 10
AGENTS = {"two-bridge": 5}  # agents per game where a figure has not AGENTS_PER_GAME
TDM_MAP_ID = 47
SMAX_SCENARIO = "smacv2_5_units"

Rollout = Callable[[jax.Array], jax.Array]


def _obs_sum(obs: dict[str, jnp.ndarray]) -> jnp.ndarray:
    return sum((jnp.sum(v) for k, v in obs.items() if k != "world_state"), jnp.float32(0.0))


def random_rollout(env: Any, ticks: int, reset_done: bool = True, observed: bool = True) -> Rollout:
    """Listing S1's loop for any env: sample random legal actions, step, restart finished games,
    every tick (`observed=False`: the checksum reads only the rewards, so XLA drops the
    observations: the rules' own cost)."""

    @jax.jit
    def run(key: jax.Array) -> jax.Array:
        key, k_reset = jax.random.split(key)
        _, state = env.reset(k_reset)

        def tick(carry: tuple[Any, jax.Array, jax.Array], _: None) -> tuple[Any, None]:
            state, key, acc = carry
            key, k_act, k_step, k_reset = jax.random.split(key, 4)
            actions = env.sample_actions(k_act, state)
            obs, state, reward, _, _ = env.step(k_step, state, actions)
            if reset_done:
                obs, state = env.reset_done(k_reset, state)
            seen = _obs_sum(obs) if observed else 0.0
            acc = acc + seen + sum(jnp.sum(r) for r in reward.values())
            return (state, key, acc), None

        (_, _, acc), _ = jax.lax.scan(tick, (state, key, jnp.float32(0.0)), None, length=ticks)
        return acc

    return run


def tdm_rollout(
    num_envs: int, ticks: int, *, reset_done: bool = True, observed: bool = True, mesh: Any = None
) -> Rollout:
    """The paper's Listing S1 on test map 47: sample, step, restart finished games, every tick
    (with a `mesh`, the games split over its devices; `observed=False`: the observations left
    out of the checksum, so dropped)."""
    import marl_bgs

    env = marl_bgs.make("tdm", map_id=TDM_MAP_ID, num_envs=num_envs, mesh=mesh)
    return random_rollout(env, ticks, reset_done, observed)


def two_bridge_rollout(num_envs: int, ticks: int) -> Rollout:
    """Listing S1's loop on Two-Bridge V2_Base (5 Marines against 5; the observation carries the
    2 x 32 x 32 minimap)."""
    import marl_bgs

    env = marl_bgs.make("two-bridge", variant="V2_Base", num_envs=num_envs)
    return random_rollout(env, ticks)


def scripted_rollout(num_envs: int, ticks: int) -> Rollout:
    """TDM on test map 47 with both teams scripted (TDM-Alpha vs TDM-Beta): each team's policy
    acts from its own inputs, then the env steps; finished games restart with fresh memories."""
    import marl_bgs

    env = marl_bgs.make("tdm", map_id=TDM_MAP_ID, num_envs=num_envs)
    policies = [marl_bgs.scripted_policy("tdm-alpha"), marl_bgs.scripted_policy("tdm-beta")]

    def summarize(out: Any) -> jax.Array:
        return jnp.sum(out.reward) + jnp.sum(out.actions)

    play = marl_bgs.team_rollout(env, policies, ticks, summarize)
    return jax.jit(lambda key: jnp.sum(play(key)))


def smax_rollout(num_envs: int, ticks: int) -> Rollout:
    """SMAX smacv2_5_units vmapped over games: all ten units are agents, JaxMARL's auto-reset."""
    import jaxmarl
    from jaxmarl.environments.smax import map_name_to_scenario

    env = jaxmarl.make("SMAX", scenario=map_name_to_scenario(SMAX_SCENARIO))
    agents = list(env.agents)
    if len(agents) != AGENTS_PER_GAME:
        raise RuntimeError(f"SMAX {SMAX_SCENARIO}: expected 10 agents, got {len(agents)}")

    def act(key: jax.Array, state: Any) -> dict[str, jax.Array]:
        avail = env.get_avail_actions(state)
        keys = jax.random.split(key, len(agents))
        return {
            a: jax.random.categorical(k, jnp.where(avail[a], 0.0, -jnp.inf))
            for a, k in zip(agents, keys, strict=True)
        }

    @jax.jit
    def run(key: jax.Array) -> jax.Array:
        key, k_reset = jax.random.split(key)
        _, state = jax.vmap(env.reset)(jax.random.split(k_reset, num_envs))

        def tick(carry: tuple[Any, jax.Array, jax.Array], _: None) -> tuple[Any, None]:
            state, key, acc = carry
            key, k_act, k_step = jax.random.split(key, 3)
            actions = jax.vmap(act)(jax.random.split(k_act, num_envs), state)
            obs, state, reward, _, _ = jax.vmap(env.step)(
                jax.random.split(k_step, num_envs), state, actions
            )
            acc = acc + _obs_sum(obs) + sum(jnp.sum(r) for r in reward.values())
            return (state, key, acc), None

        (_, _, acc), _ = jax.lax.scan(tick, (state, key, jnp.float32(0.0)), None, length=ticks)
        return acc

    return run


def _learner(name: str) -> Callable[[int, int], Rollout]:
    def build(num_envs: int, ticks: int) -> Rollout:
        import bench_learner  # flax and optax are needed by these figures only

        return getattr(bench_learner, name)(num_envs, ticks)

    return build


FIGURES: dict[str, Callable[[int, int], Rollout]] = {
    "tdm": tdm_rollout,
    "tdm-no-reset": lambda n, t: tdm_rollout(n, t, reset_done=False),
    "tdm-unobserved": lambda n, t: tdm_rollout(n, t, observed=False),
    "tdm-scripted": scripted_rollout,
    "smax": smax_rollout,
    "two-bridge": two_bridge_rollout,
    "tdm-learn": _learner("tdm_learner"),  # bench_learner.py: a minimal learner loop
    "smax-learn": _learner("smax_learner"),
}


def gpu_memory() -> dict[str, int] | None:
    """Peak and in-use bytes of the first device, where the backend reports them (GPUs do)."""
    stats = jax.devices()[0].memory_stats()
    if not stats:
        return None
    keys = ("peak_bytes_in_use", "bytes_in_use", "bytes_limit")
    return {k: int(stats[k]) for k in keys if k in stats}


def measure(figure: str, num_envs: int, ticks: int, repeats: int) -> dict[str, Any]:
    """One figure: compile seconds (trace, lower, compile), the first call's seconds apart, and
    the median of `repeats` further timed calls."""
    run = FIGURES[figure](num_envs, ticks)
    key = jax.random.key(0)
    start = time.perf_counter()
    compiled = run.lower(key).compile()  # type: ignore[attr-defined]
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    compiled(key).block_until_ready()
    first_call_s = time.perf_counter() - start
    times = []
    for i in range(repeats):
        k = jax.random.fold_in(key, i + 1)
        start = time.perf_counter()
        compiled(k).block_until_ready()
        times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    if figure.endswith("-learn"):  # learner figures play whole 32-tick rollouts
        import bench_learner

        ticks = bench_learner.ticks_played(ticks)
    game_steps = num_envs * ticks / seconds
    return {
        "figure": figure,
        "num_envs": num_envs,
        "ticks": ticks,
        "repeats": repeats,
        "seconds_median": seconds,
        "seconds_all": times,
        "game_steps_per_s": game_steps,
        "agent_steps_per_s": game_steps * AGENTS.get(figure, AGENTS_PER_GAME),
        "compile_s": compile_s,
        "first_call_s": first_call_s,
        "backend": jax.default_backend(),
        "memory": gpu_memory(),
    }
