"""The free-path feature: read from the flat observation at the right places, equal to walking
the agent's body along each direction with the engine's own fit test, and added to a network's
input only when asked for."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import marl_bgs
from marl_bgs.core.arena import MAP_WIDTH
from marl_bgs.core.geometry import Obstacles, body_fits, make_obstacles
from marl_bgs_train.policy import ActorSpec
from marl_bgs_train.tdm.features import free_paths
from marl_bgs_train.tdm.game import TDMGame

DIRECTIONS = 8


def _games():
    """Observations [n, 10, D] and views of games on Switchback (five long walls) and Quarry,
    a few ticks in, so the agents stand in different places."""
    env = marl_bgs.make("tdm", map_id=[46, 42], num_envs=4)
    _, state = env.reset(jax.random.key(3))
    step = jax.jit(env.step)
    for t in range(4):
        actions = jnp.full((4, 10, 3), jnp.asarray([1 + t % 4, 0, 0]))
        _, state, *_ = step(jax.random.key(t), state, actions)
    return np.asarray(env.observe(state)), jax.device_get(env.views(state))


def _walked(view_obstacles: Obstacles, x: float, y: float) -> np.ndarray:
    """How far the body walks in small steps along each direction while it still fits (a share
    of the map's width) [DIRECTIONS]."""
    t = np.linspace(0.0, 1.0, 4001)
    angle = 2 * np.pi * np.arange(DIRECTIONS)[:, None] / DIRECTIONS
    points = np.stack([x + t * MAP_WIDTH * np.cos(angle), y + t * MAP_WIDTH * np.sin(angle)], -1)
    fits = np.asarray(_fits(jnp.asarray(points, jnp.float32), view_obstacles))
    stops = np.where(fits.all(-1), len(t) - 1, np.argmin(fits, axis=-1) - 1)
    return t[stops]


_fits = jax.jit(body_fits)


def test_free_paths_equal_walking_the_body_along_each_direction_in_the_agents_frame():
    obs, views = _games()
    paths = np.asarray(jax.jit(free_paths, static_argnums=1)(jnp.asarray(obs), DIRECTIONS))
    assert paths.shape == (4, 10, DIRECTIONS)
    checked = 0
    for game in range(4):
        for agent in (0, 3, 6, 9):  # both teams: each in its own (mirrored) frame
            public, units = views.public, views.units
            me = int(np.argmax(units.is_self[game, agent]))
            x, y = units.x[game, agent, me], units.y[game, agent, me]
            kind = public.obstacle_kind[game, agent].astype(np.int32)
            obstacles = make_obstacles(
                kind,
                public.obstacle_center[game, agent],
                public.obstacle_size[game, agent],
                public.obstacle_theta[game, agent],
            )
            walked = _walked(obstacles, float(x), float(y))
            np.testing.assert_allclose(paths[game, agent], walked, atol=1e-3)
            checked += int((walked < 1.0).sum())
    assert checked > 20  # most directions end at a wall or the border, not at the far side
    assert len(np.unique(np.round(paths, 3))) > 20  # and the distances differ


def _inputs(x: jax.Array, directions: int) -> jax.Array:
    spec = ActorSpec("tdm", TDMGame(free_paths=directions), 5, 8, True, "flat", "all", 0.01)
    return spec.inputs(x)


def test_network_input_adds_the_free_paths_only_when_asked():
    obs, _ = _games()
    x = jnp.asarray(obs)
    np.testing.assert_array_equal(np.asarray(_inputs(x, 0)), obs * np.float32(0.01))
    both = np.asarray(_inputs(x, DIRECTIONS))
    np.testing.assert_array_equal(both[..., : obs.shape[-1]], obs * np.float32(0.01))
    np.testing.assert_array_equal(both[..., obs.shape[-1] :], np.asarray(free_paths(x, DIRECTIONS)))
