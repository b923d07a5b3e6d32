"""The PettingZoo adapter: PettingZoo's own API and seed tests, spaces and masks, terminations vs
truncations, bad input, one compiled program for all instances; and the three faces (native env,
JaxMARL, PettingZoo) playing the same game give the same trajectory, exactly."""

from __future__ import annotations

import pytest

pytest.importorskip("pettingzoo")

import warnings

import jax
import jax.numpy as jnp
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.test import parallel_api_test, parallel_seed_test

import marl_bgs
from marl_bgs.adapters import game
from marl_bgs.adapters.pettingzoo import PettingZooEnv
from marl_bgs.core.errors import ConfigError
from marl_bgs.tdm.maps import MapError

SETTINGS = {"map_id": 11, "tick_limit": 8, "rosters": ("MWHRP", "WRPH")}


def test_parallel_api_test() -> None:
    env = PettingZooEnv("tdm", map_id=0, tick_limit=10)
    assert isinstance(env, ParallelEnv)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # PettingZoo reports its findings as warnings
        parallel_api_test(env, num_cycles=15)


def test_parallel_seed_test() -> None:
    parallel_seed_test(lambda: PettingZooEnv("tdm", **SETTINGS), num_cycles=10)


def test_spaces_masks_and_game_end() -> None:
    env = PettingZooEnv("tdm", **SETTINGS)
    assert env.possible_agents == list(marl_bgs.AGENTS)
    assert env.agents == []
    for agent in env.possible_agents:
        obs_space, act_space = env.observation_space(agent), env.action_space(agent)
        assert obs_space is env.observation_space(agent)
        assert act_space is env.action_space(agent)
        assert isinstance(obs_space, spaces.Dict)
        assert set(obs_space.spaces) == {"observation", "action_mask"}
        assert act_space == spaces.Discrete(198)
    assert env.observation_space("a_0") is not env.observation_space("a_1")
    obs, infos = env.reset(seed=3, options={"unused": 1})
    assert set(obs) == set(infos) == set(env.agents) == set(env.possible_agents)
    ticks = 0
    while env.agents:
        for agent in env.agents:
            assert env.observation_space(agent).contains(obs[agent])
            assert obs[agent]["action_mask"].dtype == np.int8
            assert obs[agent]["action_mask"][0] == 1  # stay with no target is always legal
        actions = {a: env.action_space(a).sample(obs[a]["action_mask"]) for a in env.agents}
        obs, rewards, terminations, truncations, _ = env.step(actions)
        ticks += 1
        assert not any(env.last_facts.move_rejected)
        assert not any(env.last_facts.combat_rejected)
    assert ticks == 8
    assert all(truncations.values())
    assert not any(terminations.values())
    assert set(rewards.values()) == {0.0}
    with pytest.raises(RuntimeError, match="reset"):
        env.step(dict.fromkeys(env.possible_agents, 0))


def test_decided_game_terminates() -> None:
    env = PettingZooEnv("tdm", **SETTINGS)
    env.reset(seed=1)
    state = env.game_state
    env.game_state = state.replace(score=jnp.array([0, state.rules.winning_score], jnp.int32))
    _, rewards, terminations, truncations, _ = env.step(dict.fromkeys(env.agents, 0))
    assert all(terminations.values())
    assert not any(truncations.values())
    # Team B wins; its roster has 4 agents, so the padded slot b_4 gets nothing.
    assert [rewards[a] for a in env.possible_agents] == [-1.0] * 5 + [1.0] * 4 + [0.0]
    assert env.agents == []


def test_bad_input_is_rejected() -> None:
    with pytest.raises(ConfigError, match="render_mode"):
        PettingZooEnv("tdm", render_mode="human")
    with pytest.raises(ConfigError, match="num_envs"):
        PettingZooEnv("tdm", num_envs=2)
    with pytest.raises(MapError, match="map_id"):
        PettingZooEnv("tdm", map_id=999)
    env = PettingZooEnv("tdm", **SETTINGS)
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})
    env.reset(seed=0)
    ok = dict.fromkeys(env.agents, 0)
    for bad, match in [
        (ok | {"a_0": 198}, "a_0"),
        (ok | {"b_1": -1}, "b_1"),
        (ok | {"a_2": 1.5}, "a_2"),
        (ok | {"c_0": 0}, "unknown"),
        ({a: 0 for a in env.agents if a != "a_3"}, "missing"),
    ]:
        with pytest.raises(ConfigError, match=match):
            env.step(bad)
    with pytest.raises(ConfigError, match="agent"):
        env.action_space("c_0")
    env.close()
    assert env.agents == []


def test_instances_share_one_compiled_program() -> None:
    a = PettingZooEnv("tdm", map_id=0)
    a.reset(seed=0)
    a.step(dict.fromkeys(a.agents, 0))
    programs = game.step_game._cache_size(), game.reset_game._cache_size()
    # Another map, rosters and rule values: data, not a new program (as long as the numbers of
    # maps and roster pairs to draw from, which are shapes, stay the same).
    b = PettingZooEnv(
        "tdm", map_id=30, rosters=("PPP", "MWH"), tick_limit=50, winning_score=5, spawn_swap="half"
    )
    b.reset(seed=1)
    b.step(dict.fromkeys(b.agents, 5))
    assert (game.step_game._cache_size(), game.reset_game._cache_size()) == programs


def _stacked(obs: dict, agents: list[str]) -> np.ndarray:
    return np.stack([np.asarray(obs[a]) for a in agents])


@pytest.mark.default_compile  # three separately compiled steps, bit for bit
def test_three_faces_play_the_same_game() -> None:
    pytest.importorskip("jaxmarl")
    from marl_bgs.adapters.jaxmarl import JaxMARLEnv

    seed, step_key = 7, jax.random.PRNGKey(99)
    native = marl_bgs.make("tdm", num_envs=1, **SETTINGS)
    jm = JaxMARLEnv("tdm", **SETTINGS)
    pz = PettingZooEnv("tdm", **SETTINGS)
    agents = list(native.agents)
    assert agents == jm.agents == pz.possible_agents

    # The native trajectory, with legal random actions drawn once from its masks.
    rng = np.random.default_rng(0)
    obs, state = native.reset(jax.random.key(seed))
    n_obs, n_masks, n_actions, n_rewards, n_dones = [native.observe(state)[0]], [], [], [], []
    done = False
    while not done:
        mask = np.asarray(native.action_masks(state).flat[0])
        flat = np.array([rng.choice(np.flatnonzero(m)) for m in mask], np.int32)
        obs, state, reward, dones, _ = native.step(step_key, state, jnp.asarray(flat)[None])
        done = bool(dones["__all__"][0])
        n_masks.append(mask)
        n_actions.append(flat)
        n_obs.append(np.asarray(native.observe(state)[0]))
        n_rewards.append(np.stack([np.asarray(reward[a][0]) for a in agents]))
        n_dones.append(done)
    assert len(n_actions) == 8  # the tick-limit draw

    # JaxMARL: same observations, masks, rewards, dones; at the end the next episode's start.
    obs, s = jm.reset(jax.random.PRNGKey(seed))
    np.testing.assert_array_equal(_stacked(obs, agents), n_obs[0])
    for t, flat in enumerate(n_actions):
        avail = jm.get_avail_actions(s)
        np.testing.assert_array_equal(_stacked(avail, agents), n_masks[t])
        obs, s, reward, dones, info = jm.step(step_key, s, dict(zip(agents, flat, strict=True)))
        np.testing.assert_array_equal(_stacked(reward, agents), n_rewards[t])
        assert bool(dones["__all__"]) == n_dones[t]
        assert all(bool(dones[a]) == n_dones[t] for a in agents)
        if not n_dones[t]:
            np.testing.assert_array_equal(_stacked(obs, agents), n_obs[t + 1])
    assert bool(info["truncated"].all())
    _, restart = native.reset_done(jax.random.split(step_key)[1], state)
    np.testing.assert_array_equal(_stacked(obs, agents), np.asarray(native.observe(restart)[0]))
    assert all(
        np.array_equal(x, y[0])
        for x, y in zip(jax.tree.leaves(s), jax.tree.leaves(restart), strict=True)
    )

    # PettingZoo: the same, numpy on the host, terminal observation included.
    obs, _ = pz.reset(seed=seed)
    for t, flat in enumerate(n_actions):
        np.testing.assert_array_equal(_stacked({a: obs[a]["observation"] for a in agents}, agents),
                                      n_obs[t])  # fmt: skip
        np.testing.assert_array_equal(
            _stacked({a: obs[a]["action_mask"] for a in agents}, agents), n_masks[t].astype(np.int8)
        )
        obs, rewards, terms, truncs, _ = pz.step(dict(zip(agents, flat.tolist(), strict=True)))
        np.testing.assert_array_equal(np.array([rewards[a] for a in agents]), n_rewards[t])
        assert all((terms[a] or truncs[a]) == n_dones[t] for a in agents)
    np.testing.assert_array_equal(_stacked({a: obs[a]["observation"] for a in agents}, agents),
                                  n_obs[-1])  # fmt: skip
    assert all(truncs.values())
    # A reset without a seed starts the stream's next episode, as the native reset_done draws it.
    obs, _ = pz.reset()
    _, restart = native.reset_done(jax.random.key(seed), state)
    np.testing.assert_array_equal(
        _stacked({a: obs[a]["observation"] for a in agents}, agents),
        np.asarray(native.observe(restart)[0]),
    )
