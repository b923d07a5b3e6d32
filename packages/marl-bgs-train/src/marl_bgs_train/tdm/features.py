"""Team Deathmatch's added network inputs: besides the flat observation times `input_scale`,
optionally features worked out from that observation alone (so a policy still reads only its
permitted view).

`free_paths`: how far the agent could walk straight in each of N evenly spaced directions
before its body touches an obstacle or the map border (the engine's exact body sweep over the
obstacles its observation lists), as a fraction of the map's width. A network reading raw
obstacle slots must learn geometry from coordinates; these distances say where the way is open.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.arena import MAP_WIDTH, MAX_OBSTACLES
from marl_bgs.core.geometry import make_obstacles, sweep_reach
from marl_bgs.tdm.views import view_field_names
from marl_bgs_train.tdm.game import TDMGame


def _offsets() -> dict[str, int]:
    """Where each block of the flat observation starts."""
    names = view_field_names()
    starts = np.cumsum([0] + [width for _, width in names])
    return {name: int(start) for (name, _), start in zip(names, starts[:-1], strict=True)}


_AT = _offsets()
UNITS = 10  # unit rows of a view


def _block(obs: jax.Array, name: str, width: int) -> jax.Array:
    return obs[..., _AT[name] : _AT[name] + width]


def free_paths(obs: jax.Array, directions: int) -> jax.Array:
    """float32 [..., directions] from flat observations [..., D]: the share of the map's width
    the agent's body can travel from where it stands in each direction (angle 2 pi k /
    directions in the agent's own frame, k = 0 east, counter-clockwise) before it touches an
    obstacle or the border."""
    me = _block(obs, "units.is_self", UNITS)
    x = jnp.sum(me * _block(obs, "units.x", UNITS), axis=-1)
    y = jnp.sum(me * _block(obs, "units.y", UNITS), axis=-1)
    lead = obs.shape[:-1]
    kind = _block(obs, "public.obstacle_kind", MAX_OBSTACLES).astype(jnp.int32)
    pairs = lambda name: _block(obs, name, 2 * MAX_OBSTACLES).reshape(*lead, MAX_OBSTACLES, 2)  # noqa: E731
    obstacles = make_obstacles(
        kind, pairs("public.obstacle_center"), pairs("public.obstacle_size"),
        _block(obs, "public.obstacle_theta", MAX_OBSTACLES),
    )  # fmt: skip
    angle = 2.0 * jnp.pi * jnp.arange(directions) / directions
    px = jnp.broadcast_to(jnp.cos(angle) * MAP_WIDTH, (*lead, directions))
    py = jnp.broadcast_to(jnp.sin(angle) * MAP_WIDTH, (*lead, directions))
    return sweep_reach(x, y, px, py, obstacles)


def features(obs: jax.Array, game: TDMGame) -> jax.Array:
    """The inputs a network reads besides the scaled observation: the free paths in
    `game.free_paths` directions (`TrainParts.features`)."""
    return free_paths(obs, game.free_paths)
