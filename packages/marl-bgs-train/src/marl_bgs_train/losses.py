"""Returns and losses of the baselines: GAE, the clipped PPO objectives, value normalisation,
TD(lambda) targets and VDN's team values. Pure functions on arrays; each is checked against a
numpy reference in the tests."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from marl_bgs.core.pytree import PyTree, pytree_dataclass


def gae(
    rewards: jax.Array,
    values: jax.Array,
    dones: jax.Array,
    last_value: jax.Array,
    gamma: float,
    lam: float | jax.Array,
) -> tuple[jax.Array, jax.Array]:
    """Generalised advantage estimates and returns, time-major.

    `rewards`, `values`, `dones` are [T, ...]: the reward of step t, the value of the state step
    t acted in, and whether the game ended at step t (then nothing after it is bootstrapped).
    `last_value` [...] is the value of the state after step T - 1. Returns (advantages, returns),
    both [T, ...], with returns = advantages + values.
    """

    def back(carry: tuple[jax.Array, jax.Array], step: tuple[jax.Array, ...]) -> tuple:
        advantage, next_value = carry
        reward, value, done = step
        live = 1.0 - done.astype(jnp.float32)
        delta = reward + gamma * next_value * live - value
        advantage = delta + gamma * lam * live * advantage
        return (advantage, value), advantage

    start = (jnp.zeros_like(last_value), last_value)
    _, advantages = jax.lax.scan(back, start, (rewards, values, dones), reverse=True)
    return advantages, advantages + values


def td_lambda(
    rewards: jax.Array, dones: jax.Array, next_max: jax.Array, gamma: float, lam: float | jax.Array
) -> jax.Array:
    """TD(lambda) targets (Peng's Q(lambda), as PQN uses them), time-major [T, ...].

    `next_max[t]` is the greedy value of the state after step t; `dones[t]` says the game ended
    at step t (nothing after it is bootstrapped). G[T-1] = r + gamma * next_max[T-1]; before it
    G[t] = r[t] + gamma * (lam * G[t+1] + (1 - lam) * next_max[t]), both cut at a game's end.
    """

    def back(after: jax.Array, step: tuple[jax.Array, ...]) -> tuple[jax.Array, jax.Array]:
        reward, done, value = step
        live = 1.0 - done.astype(jnp.float32)
        target = reward + gamma * live * (lam * after + (1.0 - lam) * value)
        return target, target

    _, targets = jax.lax.scan(back, next_max[-1], (rewards, dones, next_max), reverse=True)
    return targets


def vdn(agent_values: jax.Array, weight: jax.Array) -> jax.Array:
    """VDN's team value: the sum of the agents' values [..., 5] over real roster slots."""
    return jnp.sum(agent_values * weight, axis=-1)


def ppo_actor_loss(
    log_prob: jax.Array,
    old_log_prob: jax.Array,
    advantages: jax.Array,
    entropy: jax.Array,
    weight: jax.Array,
    clip: float | jax.Array,
    entropy_coef: float | jax.Array,
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """The clipped surrogate minus the entropy bonus, averaged over entries with `weight` 1
    (empty roster slots weigh 0). Advantages are normalised over the weighted entries."""
    total = jnp.maximum(jnp.sum(weight), 1.0)
    mean = jnp.sum(advantages * weight) / total
    std = jnp.sqrt(jnp.sum(jnp.square(advantages - mean) * weight) / total)
    adv = (advantages - mean) / (std + 1e-8)
    ratio = jnp.exp(log_prob - old_log_prob)
    surrogate = jnp.minimum(ratio * adv, jnp.clip(ratio, 1.0 - clip, 1.0 + clip) * adv)
    policy = -jnp.sum(surrogate * weight) / total
    ent = jnp.sum(entropy * weight) / total
    stats = {
        "policy_loss": policy,
        "entropy": ent,
        "approx_kl": jnp.sum(((ratio - 1.0) - (log_prob - old_log_prob)) * weight) / total,
        "clip_fraction": jnp.sum((jnp.abs(ratio - 1.0) > clip) * weight) / total,
    }
    return policy - entropy_coef * ent, stats


def ppo_value_loss(
    values: jax.Array,
    old_values: jax.Array,
    targets: jax.Array,
    weight: jax.Array,
    clip: float | jax.Array,
) -> jax.Array:
    """The clipped value loss (the larger of the plain and the clipped squared error, halved),
    averaged over entries with `weight` 1; all three in the same (normalised) units."""
    clipped = old_values + jnp.clip(values - old_values, -clip, clip)
    err = jnp.maximum(jnp.square(values - targets), jnp.square(clipped - targets))
    return 0.5 * jnp.sum(err * weight) / jnp.maximum(jnp.sum(weight), 1.0)


@pytree_dataclass
class ValueNorm(PyTree):
    """Running mean and mean square of value targets with bias correction (as in MAPPO): the
    critic predicts normalised values, `denormalize` turns them into returns."""

    mean: jax.Array
    mean_sq: jax.Array
    debias: jax.Array

    @staticmethod
    def create() -> ValueNorm:
        """Empty statistics (normalising is the identity until the first update)."""
        return ValueNorm(jnp.float32(0.0), jnp.float32(0.0), jnp.float32(0.0))

    def stats(self) -> tuple[jax.Array, jax.Array]:
        """(mean, std) after bias correction; (0, 1) before any update."""
        debias = jnp.maximum(self.debias, 1e-5)
        mean = self.mean / debias
        var = jnp.maximum(self.mean_sq / debias - jnp.square(mean), 1e-2)
        seen = self.debias > 0
        return jnp.where(seen, mean, 0.0), jnp.where(seen, jnp.sqrt(var), 1.0)

    def update(self, x: jax.Array, weight: jax.Array, beta: float) -> ValueNorm:
        """Fold the weighted batch `x` in with decay `beta`."""
        total = jnp.maximum(jnp.sum(weight), 1.0)
        batch_mean = jnp.sum(x * weight) / total
        batch_sq = jnp.sum(jnp.square(x) * weight) / total
        return ValueNorm(
            beta * self.mean + (1 - beta) * batch_mean,
            beta * self.mean_sq + (1 - beta) * batch_sq,
            beta * self.debias + (1 - beta),
        )

    def normalize(self, x: jax.Array) -> jax.Array:
        """Returns -> the critic's units."""
        mean, std = self.stats()
        return (x - mean) / std

    def denormalize(self, x: jax.Array) -> jax.Array:
        """The critic's units -> returns."""
        mean, std = self.stats()
        return x * std + mean


@pytree_dataclass
class RewardScale(PyTree):
    """Reward standardisation (`reward_norm`): rewards divided by the running standard deviation
    of the discounted return, as SB3's VecNormalize and epymarl's standardisation do. Each entry
    (a game, or a game's agent) keeps its own return so far; their statistics are pooled
    (Chan et al.'s parallel mean and variance)."""

    returns: jax.Array  # float32 [...]: each entry's discounted return so far
    count: jax.Array
    mean: jax.Array
    m2: jax.Array

    @staticmethod
    def create(shape: tuple[int, ...]) -> RewardScale:
        """No returns seen yet (a tiny count, so the first batch sets the statistics)."""
        zero = jnp.float32(0.0)
        return RewardScale(jnp.zeros(shape), jnp.float32(1e-4), zero, zero)

    def update(self, reward: jax.Array, done: jax.Array, gamma: float) -> RewardScale:
        """Fold one step's rewards in; the returns of entries whose game ended restart."""
        returns = self.returns * gamma + reward
        k = returns.size
        batch_mean, batch_var = returns.mean(), returns.var()
        total = self.count + k
        delta = batch_mean - self.mean
        mean = self.mean + delta * k / total
        m2 = self.m2 + batch_var * k + jnp.square(delta) * self.count * k / total
        return RewardScale(jnp.where(done, 0.0, returns), total, mean, m2)

    def scale(self, reward: jax.Array) -> jax.Array:
        """`reward` divided by the returns' standard deviation so far."""
        return reward / jnp.sqrt(self.m2 / self.count + 1e-8)
