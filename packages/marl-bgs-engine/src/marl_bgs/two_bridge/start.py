"""Start states: a pool entry per layout (as data), and the per-episode draw of regions and
spawn points (`start`), as the paper's map triggers draw them."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.pool import StartPool, make_pool
from marl_bgs.core.pytree import batch_states
from marl_bgs.two_bridge import layout as lay
from marl_bgs.two_bridge.state import BridgeState

_LEFT, _RIGHT = np.asarray(lay.LEFT), np.asarray(lay.RIGHT)
_REGIONS = np.asarray(lay.REGIONS)  # numpy: importing the engine starts no JAX backend
# For each layout, the entity (index into lay.ENTITIES) alone on the left.
_ALONE = np.asarray([lay.ENTITIES.index(lay.LAYOUTS[name]) for name in lay.LAYOUTS], np.int32)


def template(layout: int, num_enemies: int, tick_limit: int, mirrored: bool) -> BridgeState:
    """The pool entry of a layout: full health, no positions yet (`start` draws them)."""
    return BridgeState(
        friend_pos=jnp.zeros((lay.NUM_FRIENDS, 2), jnp.float32),
        friend_health=jnp.full((lay.NUM_FRIENDS,), lay.MARINE_HEALTH, jnp.float32),
        enemy_pos=jnp.zeros((num_enemies, 2), jnp.float32),
        enemy_health=jnp.full((num_enemies,), lay.MARINE_HEALTH, jnp.float32),
        beacon=jnp.zeros(2, jnp.float32),
        regions=jnp.zeros(3, jnp.int32),
        layout=jnp.int32(layout),
        mirrored=jnp.bool_(mirrored),
        tick_limit=jnp.int32(tick_limit),
        tick=jnp.int32(0),
        outcome=jnp.int32(lay.RUNNING),
        episode=jnp.int32(0),
    )


def variant_pool(
    layouts: list[int], num_enemies: int, tick_limit: int, weights: np.ndarray
) -> StartPool:
    """One entry per layout; side 1 of each is its mirror image (left and right swapped)."""
    sides = [
        batch_states([template(i, num_enemies, tick_limit, m) for i in layouts])
        for m in (False, True)
    ]
    return make_pool(sides[0], sides[1], weights)


def draw_regions(key: jax.Array, layout: jax.Array) -> jax.Array:
    """int32 [3]: regions of (friends, enemies, beacon). The lone entity takes a uniform left
    region; the other two take two different uniform right regions."""
    k_alone, k_pair = jax.random.split(key)
    alone = jax.random.choice(k_alone, _LEFT)
    pair = jax.random.permutation(k_pair, _RIGHT)[:2]
    lone = jnp.asarray(_ALONE)[layout]
    others = jnp.asarray([[1, 2], [0, 2], [0, 1]], jnp.int32)[lone]
    return jnp.zeros(3, jnp.int32).at[lone].set(alone).at[others].set(pair)


def points_in(key: jax.Array, region: jax.Array, count: int) -> jax.Array:
    """float32 [count, 2]: uniform points of a region."""
    x0, x1, y0, y1 = jnp.asarray(_REGIONS)[region]
    u = jax.random.uniform(key, (count, 2))
    return jnp.stack([x0 + u[:, 0] * (x1 - x0), y0 + u[:, 1] * (y1 - y0)], axis=-1)


def mirror_x(pos: jax.Array) -> jax.Array:
    """Positions [..., 2] with left and right swapped."""
    return pos.at[..., 0].set(lay.FIELD - pos[..., 0])


def start(key: jax.Array, state: BridgeState) -> BridgeState:
    """Draw the episode's regions and spawn points for the entry's layout (mirrored on side 1)."""
    k_regions, k_friends, k_enemies, k_beacon = jax.random.split(key, 4)
    regions = draw_regions(k_regions, state.layout)
    friends = points_in(k_friends, regions[0], lay.NUM_FRIENDS)
    enemies = points_in(k_enemies, regions[1], state.enemy_pos.shape[0])
    beacon = points_in(k_beacon, regions[2], 1)[0]
    flip = lambda p: jnp.where(state.mirrored, mirror_x(p), p)  # noqa: E731
    regions = jnp.where(state.mirrored, (regions + 3) % 6, regions)  # R1 <-> R4, ...
    return state.replace(
        friend_pos=flip(friends), enemy_pos=flip(enemies), beacon=flip(beacon), regions=regions
    )
