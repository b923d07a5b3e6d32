"""The added network inputs. The free-path feature: read from the flat observation at the right
places, equal to walking the agent's body along each direction with the engine's own fit test,
and added to a network's input only when asked for. The route inputs: on every shipped map,
following the move they call nearest leads a body from each spawn pad to the enemy's side;
worked out once a game, for the games that start only."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs.core import movement
from marl_bgs.core.arena import MAP_WIDTH
from marl_bgs.core.geometry import Obstacles, body_fits, make_obstacles
from marl_bgs_train.learners import make_train
from marl_bgs_train.policy import ActorSpec
from marl_bgs_train.tdm import features
from marl_bgs_train.tdm.features import free_paths
from marl_bgs_train.tdm.game import TDMGame
from marl_bgs_train.testing import assert_resumes_exactly, tiny_config

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
    return spec.inputs(x, ())


def test_network_input_adds_the_free_paths_only_when_asked():
    obs, _ = _games()
    x = jnp.asarray(obs)
    np.testing.assert_array_equal(np.asarray(_inputs(x, 0)), obs * np.float32(0.01))
    both = np.asarray(_inputs(x, DIRECTIONS))
    np.testing.assert_array_equal(both[..., : obs.shape[-1]], obs * np.float32(0.01))
    np.testing.assert_array_equal(both[..., obs.shape[-1] :], np.asarray(free_paths(x, DIRECTIONS)))


def _route(maps: list[int], num_envs: int):
    """Both teams' (observations [n, 5, D], route memory worked out for every game) of fresh
    games on `maps`, and each game's map id."""
    env = marl_bgs.make("tdm", map_id=maps, num_envs=num_envs)
    state = env.start_entries(np.arange(num_envs) % len(maps), np.arange(num_envs) % 2)
    empty = jax.tree.map(
        lambda a: jnp.broadcast_to(a, (num_envs, *a.shape)), features.route_memory()
    )
    start = jnp.ones((num_envs,), bool)
    teams = [(t.obs, _remember(empty, start, t.obs)) for t in marl_bgs.team_inputs(env, state)]
    return teams, np.asarray(state.map_id)


_remember = jax.jit(features.remember_route)
_read = jax.jit(features.route_features)


@jax.jit
def _moved(at: jax.Array, move: jax.Array, speed: jax.Array, obstacles: Obstacles) -> jax.Array:
    """Every game's bodies [n, A, 2] after one tick of the engine's movement (own-frame moves
    [n, A] at `speed` past the obstacles of the team's frame; bodies do not block each other)."""

    def one(at, move, speed, obstacles):
        free = jnp.zeros(move.shape, bool)
        return movement.move(at, move, speed, ~free, free, obstacles)

    return jax.vmap(one)(at, move, speed, obstacles)


def _with_position(obs: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Observations [n, A, D] with each agent's own position set to `at` [n, A, 2]."""
    rows = obs.copy()
    at_self = features._AT["units.is_self"]
    me = np.argmax(rows[..., at_self : at_self + 10], axis=-1)
    n, a = np.indices(me.shape)
    for k, name in enumerate(("units.x", "units.y")):
        rows[n, a, features._AT[name] + me] = at[..., k]
    return rows


def test_following_the_route_inputs_walks_from_every_pad_to_the_enemys_side_on_every_map():
    # Bodies at every pad of both teams of all 52 maps take, every tick, the move the inputs say
    # brings them nearest, moved by the engine's own movement (`movement.move`: past obstacles,
    # straight or sliding, at each agent's speed), and must reach the last column within the
    # route's length and a margin (nearly all do): the field is finite where bodies spawn and
    # each tick's best move makes progress round every map's obstacles (a wrong seed, a gap the
    # grid closes, moves read in the other team's frame or at the wrong speed leave most bodies
    # stuck).
    teams, map_ids = _route(list(range(52)), 52)
    assert sorted(map_ids.tolist()) == list(range(52))
    for obs, memory in teams:
        obs = np.asarray(obs)
        length = np.asarray(_read(jnp.asarray(obs), memory))[..., 0] * MAP_WIDTH
        assert np.all((length > 15.0) & (length < 60.0)), map_ids[np.any(length <= 15.0, -1)]
        obstacles = jax.vmap(features._obstacles)(jnp.asarray(obs[:, 0]))
        at = np.asarray(features._position(jnp.asarray(obs)))
        speed = features._own(jnp.asarray(obs), "units.speed")
        for _ in range(int(length.max() * 1.5)):
            read = np.asarray(_read(jnp.asarray(_with_position(obs, at)), memory))
            move = jnp.asarray(1 + np.argmin(read[..., 1:], axis=-1), jnp.int32)
            arrived = at[..., 0] >= MAP_WIDTH - 1.0
            at = np.where(arrived[..., None], at, np.asarray(_moved(at, move, speed, obstacles)))
        stuck = at[..., 0] < MAP_WIDTH - 1.0
        # A few bodies stop where every move's end loses sight of the grid's points (a corner
        # behind a thin wall: maps 18, 25, 39, 51 in 16 of 520 bodies, both teams alike).
        assert stuck.mean() <= 0.04, sorted(set(map_ids[np.any(stuck, -1)].tolist()))
        assert (stuck.sum(-1) <= 4).all(), sorted(set(map_ids[stuck.sum(-1) > 4].tolist()))


def test_the_route_memory_is_worked_out_for_starting_games_only():
    ((obs, worked), _), _ = _route([42], 3)
    empty = jax.tree.map(lambda a: jnp.broadcast_to(a, (3, *a.shape)), features.route_memory())
    some = _remember(empty, jnp.asarray([False, True, False]), obs)
    for kept, full, fresh in zip(some, worked, empty, strict=True):
        np.testing.assert_array_equal(np.asarray(kept[1]), np.asarray(full[1]))
        np.testing.assert_array_equal(np.asarray(kept[::2]), np.asarray(fresh[::2]))
    none = _remember(worked, jnp.zeros(3, bool), jnp.zeros_like(obs))  # nothing read
    for a, b in zip(none, worked, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # before its field is worked out a game reads zeros (no route), after it a finite one
    assert not np.any(np.asarray(_read(obs, empty)))
    assert np.all(np.asarray(_read(obs, worked))[..., 0] > 0.5)


@pytest.mark.slow  # the tier before a release: compiling the route into both programs is slow
@pytest.mark.parametrize("preset", ["qmix", "pqn-vdn"])
def test_value_learners_keep_the_route_memory_and_resume_exactly(preset, tmp_path):
    # QMIX's replay rows and bootstrap row, PQN's bootstrap value: each reads the route memory
    # of the games that start; a saved run restores it (recurrent IPPO's and MAPPO's runs with
    # the route inputs are in the fast tier: test_runs, test_ppo).
    trainer = make_train(tiny_config(preset, route_field=True))
    state = jax.jit(trainer.init)(jax.random.key(4))
    for _ in range(3):
        state, metrics = trainer.run(state, 1)
    metrics = jax.device_get(metrics)
    assert int(metrics["repaired_actions"][0]) == 0
    assert_resumes_exactly(trainer, jax.random.key(4), 2, tmp_path / "run", state, metrics)
