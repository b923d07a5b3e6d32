"""The public environment: modes, agents, spaces, JaxMARL call shapes, the paper's Listing S1,
compiled-program reuse, determinism, and the env checked against the engine (vmap, lax.scan,
`transition` per game), plus the conformance suite on every shipped map and uneven rosters.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs.core import env as env_module
from marl_bgs.core.spaces import Box, Discrete, MultiDiscrete
from marl_bgs.tdm.testing import tick_with_reward
from marl_bgs.testing import check_env

AGENTS = ("a_0", "a_1", "a_2", "a_3", "a_4", "b_0", "b_1", "b_2", "b_3", "b_4")


def leaves_equal(a, b, what: str = "") -> None:
    la, lb = jax.tree.leaves_with_path(a), jax.tree.leaves_with_path(b)
    assert len(la) == len(lb)
    for (path, x), (_, y) in zip(la, lb, strict=True):
        np.testing.assert_array_equal(
            np.asarray(x), np.asarray(y), err_msg=what + jax.tree_util.keystr(path)
        )


def stacked(env, per_agent):
    return jnp.stack([per_agent[a] for a in env.agents], axis=1)


# --- modes, agents, spaces -----------------------------------------------------------------------
def test_make_by_mode_id_and_alias():
    for mode in ("tdm", "tdm-v2"):
        env = marl_bgs.make(mode, map_id=47, num_envs=4)
        assert isinstance(env, marl_bgs.BatchedEnv)
        assert isinstance(env.mode, marl_bgs.TeamDeathmatch)
        assert env.spec.id == "tdm-v2"
    assert "tdm-v2" in marl_bgs.MODES
    with pytest.raises(marl_bgs.ConfigError, match="mode"):
        marl_bgs.make("ctf")


def test_agents_and_spaces(env47):
    assert tuple(env47.agents) == AGENTS == marl_bgs.AGENTS
    assert env47.num_agents == 10
    for agent in env47.agents:
        obs_space = env47.observation_space(agent)
        assert isinstance(obs_space, Box)
        assert obs_space.shape == (env47.obs_size,)
        act = env47.action_space(agent)
        assert isinstance(act, MultiDiscrete)
        assert tuple(act.nvec) == (9, 11, 2)
        flat = env47.flat_action_space(agent)
        assert isinstance(flat, Discrete)
        assert flat.n == 198
    assert bool(act.contains(jnp.array([8, 10, 1])))
    assert not bool(act.contains(jnp.array([9, 0, 0])))
    assert bool(flat.contains(jnp.int32(197)))
    assert not bool(flat.contains(jnp.int32(198)))
    for bad in ("agent_0", "c_0"):
        with pytest.raises(marl_bgs.ConfigError, match="agent"):
            env47.observation_space(bad)
        with pytest.raises(marl_bgs.ConfigError, match="agent"):
            env47.action_space(bad)


def test_reset_and_step_follow_jaxmarl(env47):
    n = env47.num_envs
    key = jax.random.key(0)
    obs, state = env47.reset(key)
    assert isinstance(state, marl_bgs.GameState)
    assert state.tick.shape == (n,)
    assert set(obs) == set(AGENTS)
    for agent in AGENTS:
        assert obs[agent].shape == (n, env47.obs_size)
        assert obs[agent].dtype == jnp.float32
    actions = env47.sample_actions(key, state)
    assert set(actions) == set(AGENTS)
    assert actions["a_0"].shape == (n, 3)
    out = env47.step(key, state, actions)
    assert len(out) == 5
    obs2, state2, reward, done, info = out
    assert set(obs2) == set(AGENTS)
    assert isinstance(state2, marl_bgs.GameState)
    assert set(reward) == set(AGENTS)
    assert reward["b_4"].shape == (n,)
    assert set(done) == {*AGENTS, "__all__"}
    assert all(d.shape == (n,) and d.dtype == jnp.bool_ for d in done.values())
    np.testing.assert_array_equal(done["__all__"], np.asarray(state2.outcome) != 0)
    assert {"facts", "outcome", "episode", "tick"} <= set(info)
    assert isinstance(info["facts"], marl_bgs.Facts)
    np.testing.assert_array_equal(info["tick"], np.ones(n))
    # Dict, stacked heads and flat indices are the same actions.
    heads = stacked(env47, actions)
    for same in (heads, env47.flatten_actions(heads)):
        _, s, r, _, _ = env47.step(key, state, same)
        leaves_equal(s, state2)
        leaves_equal(r, reward)
    with pytest.raises(marl_bgs.ConfigError, match="actions"):
        env47.step(key, state, heads[:, :9])
    with pytest.raises(marl_bgs.ConfigError, match="missing"):
        env47.step(key, state, {a: actions[a] for a in AGENTS[:9]})


def test_team_views_are_the_team_slice_of_views(env47, played):
    views = env47.views(played[-1])
    for team in (0, 1):
        leaves_equal(
            env47.team_views(played[-1], team),
            jax.tree.map(lambda a, t=team: a[:, 5 * t : 5 * t + 5], views),
        )
    with pytest.raises(marl_bgs.ConfigError, match="team"):
        env47.team_views(played[-1], 2)


# --- the paper's Listing S1 ----------------------------------------------------------------------
def test_listing_s1_runs_as_written():
    # The paper's Listing S1, verbatim (lint waivers only: it imports inside and keeps names).
    import jax  # noqa: I001
    import marl_battlegrounds as marl_bgs

    env = marl_bgs.make("tdm", map_id=0, num_envs=1024)
    obs, state = env.reset(jax.random.key(0))  # noqa: RUF059

    def step(carry, _):
        state, key = carry
        key, k_act, k_step, k_reset = jax.random.split(key, 4)
        # random legal actions; swap in your method
        actions = env.sample_actions(k_act, state)
        obs, state, reward, done, info = env.step(k_step, state, actions)  # noqa: RUF059
        obs, state = env.reset_done(k_reset, state)  # restart finished games only  # noqa: RUF059
        return (state, key), reward

    run = jax.jit(lambda s, k: jax.lax.scan(step, (s, k), None, length=128))
    (state, key), rewards = run(state, jax.random.key(1))  # noqa: RUF059

    # 1,024 live games: each has played 128 ticks since its last (re)start.
    assert state.tick.shape == (1024,)
    assert set(rewards) == set(env.agents)
    assert rewards["a_0"].shape == (128, 1024)
    restarted = np.asarray(state.episode) > 0
    assert np.all(np.asarray(state.outcome) == 0)
    assert np.all(np.asarray(state.tick)[~restarted] == 128)
    assert np.asarray(state.score).sum() > 0  # random play does kill
    r = np.stack([np.asarray(rewards[a]) for a in env.agents], -1)
    assert np.isin(r, (-1.0, 0.0, 1.0)).all()


# --- compiled programs ---------------------------------------------------------------------------
def _exercise(env) -> None:
    key = jax.random.key(0)
    _, state = env.reset(key)
    _, nxt, _, _, _ = env.step(key, state, env.sample_actions(key, state))
    env.action_masks(nxt)
    env.views(nxt)
    env.global_state(nxt)
    env.reset_done(key, nxt)


PROGRAMS = ("_step", "_observe", "_views", "_masks", "_sample", "_reset", "_reset_done")


def test_new_maps_rosters_and_values_reuse_the_compiled_programs(env47):
    _exercise(env47)
    before = {name: getattr(env_module, name)._cache_size() for name in PROGRAMS}
    variants = [
        {"map_id": 0},
        {"map_id": 34, "rosters": ("P", "WWWWW")},
        {"map_id": 45, "rosters": ("MW", "HRP")},
        {"winning_score": 3, "tick_limit": 50, "red_zone_depth": 0.0},
        {"wave_period": 2, "shield_ticks": 0, "shield_speed": 1.0, "map_id": "Infinity"},
    ]
    for kwargs in variants:
        _exercise(marl_bgs.make("tdm", num_envs=env47.num_envs, **{"map_id": 47, **kwargs}))
    after = {name: getattr(env_module, name)._cache_size() for name in PROGRAMS}
    assert after == before
    # Other spawn ends are data for everything after the reset.
    swapped = marl_bgs.make("tdm", map_id=47, num_envs=env47.num_envs, spawn_swap="all")
    _, state = swapped.reset(jax.random.key(0))
    assert np.asarray(state.swap).all()
    key = jax.random.key(1)
    _, nxt, _, _, _ = swapped.step(key, state, swapped.sample_actions(key, state))
    swapped.views(nxt)
    for name in ("_step", "_observe", "_views", "_masks", "_sample"):
        assert getattr(env_module, name)._cache_size() == before[name], name


# --- determinism and agreement with the engine ---------------------------------------------------
def _play(env, key, ticks):
    obs, state = env.reset(key)
    trail = [(obs, state)]
    for _ in range(ticks):
        key, k_act, k_step, k_reset = jax.random.split(key, 4)
        obs, state, reward, _done, info = env.step(k_step, state, env.sample_actions(k_act, state))
        obs, state = env.reset_done(k_reset, state)
        trail.append((obs, state, reward, info["facts"]))
    return trail


def test_same_key_same_games(env47):
    a = _play(env47, jax.random.key(3), 6)
    b = _play(env47, jax.random.key(3), 6)
    leaves_equal(a, b)
    c = _play(env47, jax.random.key(4), 1)
    with pytest.raises(AssertionError):
        leaves_equal(a[1][1].units.pos, c[1][1].units.pos)


def test_batched_env_equals_vmapped_transition(env47, played):
    vstep = jax.jit(jax.vmap(tick_with_reward))
    key = jax.random.key(9)
    for batch in played[::4]:
        key, k = jax.random.split(key)
        actions = stacked(env47, env47.sample_actions(k, batch))
        _, nxt, reward, _, info = env47.step(key, batch, actions)
        nxt2, reward2, facts2 = vstep(batch, actions)
        leaves_equal(nxt, nxt2, "state")
        leaves_equal(stacked(env47, reward), reward2, "reward")
        leaves_equal(info["facts"], facts2, "facts")


def test_public_env_equals_the_engine_on_each_game(env47, played, step):
    key = jax.random.key(10)
    for batch in played[::3]:
        key, k = jax.random.split(key)
        actions = stacked(env47, env47.sample_actions(k, batch))
        _, nxt, reward, done, info = env47.step(key, batch, actions)
        for g in range(env47.num_envs):
            one = jax.tree.map(lambda a, g=g: a[g], batch)
            nxt1, reward1, facts1 = step(one, actions[g])
            leaves_equal(jax.tree.map(lambda a, g=g: a[g], nxt), nxt1, f"game {g} state")
            leaves_equal(stacked(env47, reward)[g], reward1)
            leaves_equal(jax.tree.map(lambda a, g=g: a[g], info["facts"]), facts1, "facts")
            assert bool(done["__all__"][g]) == bool(nxt1.done)


def test_scan_equals_explicit_steps():
    # Short games, so that `reset_done` restarts some inside the loop.
    env = marl_bgs.make("tdm", map_id=47, num_envs=4, tick_limit=4, spawn_swap="half")

    def body(carry, _):
        state, key = carry
        key, k_act, k_step, k_reset = jax.random.split(key, 4)
        actions = env.sample_actions(k_act, state)
        _, state, reward, done, _ = env.step(k_step, state, actions)
        _, state = env.reset_done(k_reset, state)
        return (state, key), (reward, done["__all__"])

    _, start = env.reset(jax.random.key(0))
    (scanned, _), (rewards, dones) = jax.jit(
        lambda s, k: jax.lax.scan(body, (s, k), None, length=10)
    )(start, jax.random.key(1))
    carry, outs = (start, jax.random.key(1)), []
    for _ in range(10):
        carry, out = body(carry, None)
        outs.append(out)
    leaves_equal(scanned, carry[0], "state")
    leaves_equal(rewards, jax.tree.map(lambda *x: jnp.stack(x), *[o[0] for o in outs]))
    leaves_equal(dones, jnp.stack([o[1] for o in outs]))
    # Every game ended at tick 4 and 8 and was restarted in place (with the spawn ends swapped).
    assert np.asarray(dones).sum(0).tolist() == [2, 2, 2, 2]
    assert np.asarray(scanned.episode).tolist() == [2, 2, 2, 2]
    assert np.asarray(scanned.tick).tolist() == [2, 2, 2, 2]
    assert np.asarray(scanned.swap).tolist() == [False, True, False, True]  # (game + episode) % 2


def test_reset_done_restarts_only_finished_games(env47, played):
    batch = played[-1]
    finished = batch.replace(outcome=jnp.asarray([0, 1, 3, 0], jnp.int32))
    _, fresh = env47.reset_done(jax.random.key(0), finished)
    for g in (0, 3):  # still running: untouched
        leaves_equal(jax.tree.map(lambda a, g=g: a[g], fresh),
                     jax.tree.map(lambda a, g=g: a[g], finished))  # fmt: skip
    for g in (1, 2):  # restarted: episode + 1, tick 0, on the pads at full health
        assert int(fresh.episode[g]) == int(batch.episode[g]) + 1
        assert int(fresh.tick[g]) == 0
        assert int(fresh.outcome[g]) == 0
        assert np.asarray(fresh.score[g]).tolist() == [0, 0]
        assert np.asarray(fresh.units.alive[g]).all()
        assert (
            np.asarray(fresh.units.pos[g, :5, 0]).tolist() == [19.5 if fresh.swap[g] else 0.5] * 5
        )


@pytest.mark.parametrize("pattern", ["none", "some", "all"])
def test_reset_done_in_place_equals_the_select(pattern):
    """The in-place restart (a few finished games a pass, over several passes here) writes
    exactly the states the select over every game gives, on a pool of several maps."""
    env = marl_bgs.make("tdm", map_id=[0, 13, 47], num_envs=11, spawn_swap="random")
    _, state = env.reset(jax.random.key(3))
    ended = {"none": np.zeros(11, bool), "all": np.ones(11, bool),
             "some": np.random.default_rng(1).random(11) < 0.5}[pattern]  # fmt: skip
    state = state.replace(outcome=jnp.asarray(np.where(ended, 1, 0), jnp.int32),
                          episode=jnp.arange(11, dtype=jnp.int32))  # fmt: skip
    args = (env.mode, jax.random.key(4), state, env.pool, env.spawn_swap)
    selected = env_module._reset_done(*args, chunk=None)
    leaves_equal(env_module._reset_done(*args, chunk=4), selected)
    assert (np.asarray(selected.episode) == np.arange(11) + ended).all()


# --- the conformance suite -----------------------------------------------------------------------
# `jit=False`: env.step and env.reset_done are already compiled inside (and shared by every map
# and roster); Listing S1 and the scan test above show that they compose under jax.jit.
@pytest.mark.parametrize("map_id", marl_bgs.maps.all_ids())
def test_conformance_on_every_shipped_map(map_id):
    check_env(marl_bgs.make("tdm", map_id=map_id, num_envs=4), ticks=6, seed=map_id, jit=False)


@pytest.mark.parametrize(
    "rosters", [("MW", "HRP"), ("P", "WWWWW"), [("MWHRP", "MWHRP"), ("R", "PP")]]
)
@pytest.mark.parametrize("map_id", [0, 47])
def test_conformance_with_uneven_rosters(map_id, rosters):
    # Short games so that games end, pay out and restart (with another roster from a pool).
    env = marl_bgs.make("tdm", map_id=map_id, num_envs=4, rosters=rosters, tick_limit=5)
    check_env(env, ticks=12, jit=False)
