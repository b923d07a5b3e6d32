"""What the Two-Bridge learners share: the env, reward standardisation, greedy evaluation
Policies and the optimiser."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax

import marl_bgs
from marl_bgs import Policy, TeamInputs
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.two_bridge import TwoBridgeEnv
from marl_bgs_train.two_bridge.config import BridgeConfig


def make_env(config: BridgeConfig, num_envs: int) -> TwoBridgeEnv:
    return marl_bgs.make("two-bridge", variant=config.variant, num_envs=num_envs)


def optimizer(config: BridgeConfig) -> optax.GradientTransformation:
    return optax.chain(optax.clip_by_global_norm(config.max_grad_norm), optax.adam(config.lr))


@pytree_dataclass
class RewardScale(PyTree):
    """Reward standardisation: rewards are divided by the running standard deviation of each
    game's discounted return (as SB3's VecNormalize and epymarl's standardisation do)."""

    returns: jax.Array  # float32 [n]: each game's discounted return so far
    count: jax.Array
    mean: jax.Array
    m2: jax.Array

    @staticmethod
    def create(n: int) -> RewardScale:
        return RewardScale(jnp.zeros(n), jnp.float32(1e-4), jnp.float32(0.0), jnp.float32(0.0))

    def update(self, reward: jax.Array, done: jax.Array, gamma: float) -> RewardScale:
        returns = self.returns * gamma + reward
        batch_mean, batch_var, k = returns.mean(), returns.var(), returns.shape[0]
        total = self.count + k
        delta = batch_mean - self.mean
        mean = self.mean + delta * k / total
        m2 = self.m2 + batch_var * k + jnp.square(delta) * self.count * k / total
        return RewardScale(jnp.where(done, 0.0, returns), total, mean, m2)

    def scale(self, reward: jax.Array) -> jax.Array:
        return reward / jnp.sqrt(self.m2 / self.count + 1e-8)


def greedy_policy(name: str, scores: Callable[[jax.Array], jax.Array]) -> Policy:
    """A deterministic team Policy: each Marine takes its highest legal score. `scores(obs)`
    maps shared observations [n, D] to scores [n, 5, A] (logits or Q-values)."""

    def act(keys: jax.Array, memory: Any, inputs: TeamInputs) -> tuple[jax.Array, Any]:
        del keys
        values = jnp.where(inputs.masks.flat, scores(inputs.obs[:, 0]), -jnp.inf)
        return jnp.argmax(values, axis=-1)[..., None].astype(jnp.int32), memory

    return Policy(name=name, act=act)
