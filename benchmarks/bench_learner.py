"""Training-shaped figures: the same minimal learner loop on TDM and on SMAX, side by side.

One small MLP policy (two hidden layers of 64, flax) is shared by all ten agents of a game. Each
update plays a 32-tick rollout of every game with masked sampling over the flat action space
(finished games restart: `reset_done` for TDM, JaxMARL's auto-reset for SMAX), then takes one Adam
step (optax) on a policy-gradient loss (REINFORCE on the discounted reward-to-go) recomputed over
the stored rollout. It is a speed figure, not a learner: game steps of the rollouts per second of
the whole loop, gradient included, which is the number a learner feels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

ROLLOUT_TICKS = 32
HIDDEN = 64
GAMMA = 0.99
AGENTS = 10


class Sim(NamedTuple):
    """One simulator as the learner sees it: stacked arrays [N, 10, ...] throughout."""

    reset: Callable[[jax.Array], tuple[jax.Array, Any]]  # key -> (obs [N, 10, D], state)
    masks: Callable[[Any], jax.Array]  # state -> bool [N, 10, A]
    step: Callable[[jax.Array, Any, jax.Array], tuple[jax.Array, Any, jax.Array]]
    obs_size: int
    num_actions: int


def tdm_sim(num_envs: int) -> Sim:
    """Team Deathmatch on test map 47 with flat actions (198 per agent)."""
    import marl_bgs

    env = marl_bgs.make("tdm", map_id=47, num_envs=num_envs)

    def reset(key: jax.Array) -> tuple[jax.Array, Any]:
        obs, state = env.reset(key)
        return env.stack(obs), state

    def step(key: jax.Array, state: Any, flat: jax.Array) -> tuple[jax.Array, Any, jax.Array]:
        k_step, k_reset = jax.random.split(key)
        _, state, reward, _, _ = env.step(k_step, state, flat)
        obs, state = env.reset_done(k_reset, state)
        return env.stack(obs), state, env.stack(reward)

    masks = lambda state: env.action_masks(state).flat  # noqa: E731
    return Sim(reset, masks, step, env.obs_size, env.spec.num_actions)


def smax_sim(num_envs: int) -> Sim:
    """JaxMARL SMAX smacv2_5_units, vmapped over games; all ten units are agents."""
    import jaxmarl
    from jaxmarl.environments.smax import map_name_to_scenario

    env = jaxmarl.make("SMAX", scenario=map_name_to_scenario("smacv2_5_units"))
    agents = list(env.agents)

    def stacked(d: dict[str, jax.Array]) -> jax.Array:
        return jnp.stack([d[a] for a in agents], axis=1)

    def reset(key: jax.Array) -> tuple[jax.Array, Any]:
        obs, state = jax.vmap(env.reset)(jax.random.split(key, num_envs))
        return stacked(obs), state

    def step(key: jax.Array, state: Any, acts: jax.Array) -> tuple[jax.Array, Any, jax.Array]:
        actions = {a: acts[:, i] for i, a in enumerate(agents)}
        keys = jax.random.split(key, num_envs)
        obs, state, reward, _, _ = jax.vmap(env.step)(keys, state, actions)
        return stacked(obs), state, stacked(reward)

    masks = lambda state: stacked(jax.vmap(env.get_avail_actions)(state)).astype(bool)  # noqa: E731
    size = env.observation_space(agents[0]).shape[0]
    return Sim(reset, masks, step, size, env.action_space(agents[0]).n)


class Policy(nn.Module):
    """Logits over the flat actions from one agent's observation."""

    num_actions: int

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        x = nn.relu(nn.Dense(HIDDEN)(obs))
        x = nn.relu(nn.Dense(HIDDEN)(x))
        return nn.Dense(self.num_actions)(x)


def _masked(logits: jax.Array, mask: jax.Array) -> jax.Array:
    return jnp.where(mask, logits, -1e9)


def learner_rollout(sim: Sim, ticks: int) -> Callable[[jax.Array], jax.Array]:
    """`run(key) -> checksum`: ceil(ticks / 32) updates, each a 32-tick rollout and one step."""
    updates = max(1, -(-ticks // ROLLOUT_TICKS))
    policy = Policy(sim.num_actions)
    optimizer = optax.adam(3e-4)

    def loss(params: Any, obs: jax.Array, mask: jax.Array, act: jax.Array, ret: jax.Array):
        logp = jax.nn.log_softmax(_masked(policy.apply(params, obs), mask))
        chosen = jnp.take_along_axis(logp, act[..., None], axis=-1)[..., 0]
        return -jnp.mean(chosen * ret)

    def update(carry: tuple[Any, ...], _: None) -> tuple[tuple[Any, ...], jax.Array]:
        params, opt_state, obs, state, key = carry

        def tick(c: tuple[Any, ...], k: jax.Array) -> tuple[tuple[Any, ...], tuple[jax.Array, ...]]:
            obs, state = c
            k_act, k_step = jax.random.split(k)
            mask = sim.masks(state)
            act = jax.random.categorical(k_act, _masked(policy.apply(params, obs), mask))
            nxt, state, reward = sim.step(k_step, state, act)
            return (nxt, state), (obs, mask, act, reward)

        key, k_roll = jax.random.split(key)
        (obs, state), (o, m, a, r) = jax.lax.scan(
            tick, (obs, state), jax.random.split(k_roll, ROLLOUT_TICKS)
        )
        ret = jax.lax.scan(lambda g, x: (x + GAMMA * g, x + GAMMA * g), jnp.zeros_like(r[0]),
                           r, reverse=True)[1]  # fmt: skip
        value, grads = jax.value_and_grad(loss)(params, o, m, a, ret)
        steps, opt_state = optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, steps)
        return (params, opt_state, obs, state, key), value

    @jax.jit
    def run(key: jax.Array) -> jax.Array:
        k_init, k_reset, key = jax.random.split(key, 3)
        obs, state = sim.reset(k_reset)
        params = policy.init(k_init, jnp.zeros((1, sim.obs_size)))
        carry = (params, optimizer.init(params), obs, state, key)
        (params, *_), losses = jax.lax.scan(update, carry, None, length=updates)
        leaves = jax.tree.leaves(params)
        return jnp.sum(losses) + sum(jnp.sum(p) for p in leaves)

    return run


def tdm_learner(num_envs: int, ticks: int) -> Callable[[jax.Array], jax.Array]:
    """The learner loop on Team Deathmatch."""
    return learner_rollout(tdm_sim(num_envs), ticks)


def smax_learner(num_envs: int, ticks: int) -> Callable[[jax.Array], jax.Array]:
    """The learner loop on SMAX."""
    return learner_rollout(smax_sim(num_envs), ticks)


def ticks_played(ticks: int) -> int:
    """Ticks a learner figure actually plays for a requested `ticks` (whole rollouts)."""
    return max(1, -(-ticks // ROLLOUT_TICKS)) * ROLLOUT_TICKS
