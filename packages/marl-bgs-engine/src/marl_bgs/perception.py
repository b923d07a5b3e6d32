"""Who sees whom: distances, clear sight lines, own sight and shared (team) sight."""

from __future__ import annotations

import jax.numpy as jnp

from marl_bgs.classes import SIGHT
from marl_bgs.geometry import segment_blocked
from marl_bgs.pytree import pytree_dataclass
from marl_bgs.state import GameState
from marl_bgs.tables import SAME_TEAM, lookup


@pytree_dataclass
class Perception:
    """Pairwise facts [10, 10] (row: observer, column: observed) at one moment."""

    dist: jnp.ndarray  # float32: centre-to-centre distance
    clear: jnp.ndarray  # bool: no obstacle on the sight line
    own_sight: jnp.ndarray  # bool: the observer sees the unit with its own eyes
    team_sight: jnp.ndarray  # bool: the observer or a living teammate sees the unit


def perceive(state: GameState) -> Perception:
    """Sight of every slot: within its radius, clear line, both alive; shielded enemies hidden."""
    u = state.units
    pos = u.pos
    diff = pos[:, None, :] - pos[None, :, :]
    dist = jnp.sqrt(jnp.sum(diff * diff, axis=-1))
    clear = ~segment_blocked(pos[:, None, :], pos[None, :, :], state.obstacles)
    clear = clear | jnp.eye(pos.shape[0], dtype=bool)
    alive = u.alive
    hidden = (u.shield > 0)[None, :] & ~jnp.asarray(SAME_TEAM)
    radius = lookup(SIGHT, u.class_id)[:, None]
    own = alive[:, None] & alive[None, :] & (dist <= radius) & clear & ~hidden
    # A living teammate's sight is shared: team_sight[i, j] = any_k same(i, k) & own[k, j].
    team = jnp.any(jnp.asarray(SAME_TEAM)[:, :, None] & own[None, :, :], axis=1)
    return Perception(dist=dist, clear=clear, own_sight=own, team_sight=team)
