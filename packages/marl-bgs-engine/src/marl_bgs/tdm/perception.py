"""Who sees whom: distances, clear sight lines, own sight and shared (team) sight."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from marl_bgs.core.geometry import Obstacles, segment_blocked
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.tdm.classes import SIGHT
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.state import GameState
from marl_bgs.tdm.tables import SAME_TEAM, lookup


@pytree_dataclass
class Perception(PyTree):
    """Pairwise facts [10, 10] (row: observer, column: observed) at one moment."""

    dist: jnp.ndarray  # float32: centre-to-centre distance
    clear: jnp.ndarray  # bool: no obstacle on the sight line
    own_sight: jnp.ndarray  # bool: the observer sees the unit with its own eyes
    team_sight: jnp.ndarray  # bool: the observer or a living teammate sees the unit


_I, _J = np.triu_indices(10, k=1)


def sight_lines(pos: jnp.ndarray, obstacles: Obstacles) -> jnp.ndarray:
    """[10, 10] bool: no obstacle between the two positions (symmetric; each pair tested once)."""
    blocked = segment_blocked(pos[_I], pos[_J], obstacles)
    clear = jnp.ones((10, 10), bool).at[_I, _J].set(~blocked)
    return clear.at[_J, _I].set(~blocked)


def refresh_sight_lines(state: GameState) -> GameState:
    """The state with its cached sight lines (`state.clear`) recomputed from its positions."""
    return state.replace(clear=sight_lines(state.units.pos, state.obstacles))


def perceive(state: GameState) -> Perception:
    """Sight of every slot: within its radius, clear line, both alive; shielded enemies hidden.

    Sight lines come from the state's cache, kept current by `transition` and the resets.
    """
    u = state.units
    x, y = u.pos[:, 0], u.pos[:, 1]
    dist = jnp.sqrt(jnp.square(x[:, None] - x[None, :]) + jnp.square(y[:, None] - y[None, :]))
    clear = state.clear
    alive = u.alive
    hidden = (u.shield > 0)[None, :] & ~jnp.asarray(SAME_TEAM)
    radius = lookup(SIGHT, u.class_id)[:, None]
    own = alive[:, None] & alive[None, :] & (dist <= radius) & clear & ~hidden
    # A living teammate's sight is shared: whatever one of a team sees, all of it see.
    team = jnp.repeat(jnp.any(own.reshape(2, TEAM_SIZE, 10), axis=1), TEAM_SIZE, axis=0)
    return Perception(dist=dist, clear=clear, own_sight=own, team_sight=team)
