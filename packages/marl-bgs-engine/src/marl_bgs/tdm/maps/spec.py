"""A validated map (`MapSpec`) and the error a bad map raises (`MapError`): what the registry
builds and the playability checks read, so neither imports the other's module."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import cast

import jax
import numpy as np

from marl_bgs.core.arena import MAX_OBSTACLES, OBSTACLE_PILLAR, OBSTACLE_WALL
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.geometry import Obstacles, rotation

CUSTOM_MAP_ID = -1  # what `GameState.map_id` records for a map loaded from a file or document


class MapError(ConfigError):
    """A map file or map request is invalid; the message names the field and what is allowed.
    A `ConfigError`, so `except marl_bgs.ConfigError` catches every bad setting, maps included."""


@dataclass(frozen=True)
class MapSpec:
    """One validated map: metadata and its obstacles as plain tuples."""

    id: int
    name: str
    split: str
    description: str
    obstacles: tuple[dict[str, float | str], ...]

    @property
    def record_id(self) -> int:
        """The id a game state records: the map's id, or `CUSTOM_MAP_ID` for a custom map."""
        return CUSTOM_MAP_ID if self.split == "custom" else self.id

    @property
    def content_hash(self) -> str:
        """16 hex digits of SHA-256 over the obstacle arrays the engine plays (float32): equal
        for two maps exactly when they play alike, whatever their ids, names or files."""
        obs = self.to_obstacles()
        digest = hashlib.sha256()
        for array in (obs.kind, obs.center, obs.size, obs.theta):
            digest.update(np.ascontiguousarray(array).tobytes())
        return digest.hexdigest()[:16]

    def to_obstacles(self) -> Obstacles:
        """Padded numpy arrays in the engine's obstacle layout."""
        kind = np.zeros(MAX_OBSTACLES, np.int32)
        center = np.zeros((MAX_OBSTACLES, 2), np.float32)
        size = np.zeros((MAX_OBSTACLES, 2), np.float32)
        theta = np.zeros(MAX_OBSTACLES, np.float32)
        for i, o in enumerate(self.obstacles):
            center[i] = (o["x"], o["y"])
            if o["kind"] == "pillar":
                kind[i] = OBSTACLE_PILLAR
                size[i] = (o["radius"], o["radius"])
            else:
                kind[i] = OBSTACLE_WALL
                size[i] = (o["width"], o["height"])
                theta[i] = o.get("theta", 0.0)
        return Obstacles(
            kind=_host_leaf(kind),
            center=_host_leaf(center),
            size=_host_leaf(size),
            theta=_host_leaf(theta),
            active=_host_leaf(kind > 0),
            turn=_host_leaf(np.asarray(rotation(theta))),
        )


def _host_leaf(array: np.ndarray) -> jax.Array:
    """A numpy array as a leaf of a `jax.Array`-typed pytree, unchanged (it stays on the host):
    JAX accepts it wherever it reads a `jax.Array`, though the static type leaves numpy out."""
    return cast(jax.Array, array)
