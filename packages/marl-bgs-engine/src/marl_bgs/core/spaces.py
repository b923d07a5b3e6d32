"""Minimal spaces (Box, Discrete, MultiDiscrete) with `contains` and `sample`, gymnax-style."""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np


@dataclass(frozen=True)
class Discrete:
    """Integers 0..n-1."""

    n: int
    shape: tuple[int, ...] = ()
    dtype: type = np.int32

    def sample(self, key: jax.Array) -> jnp.ndarray:
        return jax.random.randint(key, self.shape, 0, self.n, dtype=jnp.int32)

    def contains(self, x: jnp.ndarray) -> jnp.ndarray:
        x = jnp.asarray(x)
        return jnp.all((x >= 0) & (x < self.n) & (x == jnp.round(x)))


@dataclass(frozen=True)
class MultiDiscrete:
    """A vector of integers, component k in 0..nvec[k]-1."""

    nvec: tuple[int, ...]
    dtype: type = np.int32

    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self.nvec),)

    def sample(self, key: jax.Array) -> jnp.ndarray:
        u = jax.random.uniform(key, self.shape)
        return jnp.floor(u * jnp.asarray(self.nvec)).astype(jnp.int32)

    def contains(self, x: jnp.ndarray) -> jnp.ndarray:
        x = jnp.asarray(x)
        return jnp.all((x >= 0) & (x < jnp.asarray(self.nvec)))


@dataclass(frozen=True)
class Box:
    """Real vectors with elementwise bounds."""

    low: np.ndarray
    high: np.ndarray
    dtype: type = np.float32

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.low.shape)

    def sample(self, key: jax.Array) -> jnp.ndarray:
        return jax.random.uniform(key, self.shape, minval=self.low, maxval=self.high)

    def contains(self, x: jnp.ndarray) -> jnp.ndarray:
        x = jnp.asarray(x)
        return jnp.all((x >= self.low) & (x <= self.high)) & jnp.all(jnp.isfinite(x))
