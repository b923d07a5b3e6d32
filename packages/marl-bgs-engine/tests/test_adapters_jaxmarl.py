"""The JaxMARL adapter: JaxMARL's own environment API checks, auto-reset, the three faces agree,
and a JaxMARL-style IPPO loop (flax, optax, batchify, masked categorical, GAE) trains on it."""

from __future__ import annotations

import pytest

pytest.importorskip("jaxmarl")

from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.linen.initializers import constant, orthogonal
from flax.training.train_state import TrainState
from jaxmarl.environments import MultiAgentEnv
from jaxmarl.environments.spaces import Box, Discrete, Space

import marl_bgs
from marl_bgs.adapters.jaxmarl import JaxMARLEnv, JaxMARLTeamEnv
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.team import idle_policy

SETTINGS = {"map_id": 5, "tick_limit": 6}


@pytest.fixture(scope="module")
def env() -> JaxMARLEnv:
    return JaxMARLEnv("tdm", **SETTINGS)


def _leaves_equal(a: object, b: object) -> bool:
    return all(
        np.array_equal(np.asarray(x), np.asarray(y))
        for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)
    )


# --- JaxMARL's tests/test_envs_implement_base_api.py, for this env ---------------------------


def test_inherits_base_env(env: JaxMARLEnv) -> None:
    assert isinstance(env, MultiAgentEnv)
    assert env.num_agents == 10
    assert env.agents == list(marl_bgs.AGENTS)


def test_space_definitions(env: JaxMARLEnv) -> None:
    native = marl_bgs.make("tdm", num_envs=1, **SETTINGS)
    assert set(env.observation_spaces) == set(env.agents) == set(env.action_spaces)
    for agent in env.agents:
        obs_space, act_space = env.observation_spaces[agent], env.action_spaces[agent]
        assert obs_space == env.observation_space(agent)
        assert act_space == env.action_space(agent)
        assert isinstance(obs_space, Box)
        assert isinstance(obs_space, Space)
        assert isinstance(act_space, Discrete)
        assert act_space.n == native.flat_action_space(agent).n == 198
        assert obs_space.shape == native.observation_space(agent).shape
        np.testing.assert_array_equal(obs_space.low, native.observation_space(agent).low)
        np.testing.assert_array_equal(obs_space.high, native.observation_space(agent).high)


def test_reset_returns_valid_observation(env: JaxMARLEnv) -> None:
    obs, _ = env.reset(jax.random.PRNGKey(0))
    for agent in env.observation_spaces:
        assert obs[agent].shape == env.observation_space(agent).shape
        assert obs[agent].dtype == jnp.float32
        assert env.observation_spaces[agent].contains(obs[agent])


def test_step_returns_correct_format(env: JaxMARLEnv) -> None:
    rng = jax.random.PRNGKey(0)
    rng, _rng = jax.random.split(rng)
    _, state = env.reset(_rng)
    rng, _rng = jax.random.split(rng)
    actions = {a: env.action_space(a).sample(_rng) for a in env.agents}
    rng, _rng = jax.random.split(rng)
    result = env.step(_rng, state, actions)
    assert isinstance(result, tuple)
    assert len(result) == 5
    obs, _, reward, done, info = result
    for agent in env.observation_spaces:
        assert env.observation_spaces[agent].contains(obs[agent])
    assert isinstance(reward, dict)
    assert set(reward) == set(env.agents)
    assert isinstance(done, dict)
    assert "__all__" in done
    assert set(done) == {*env.agents, "__all__"}
    assert isinstance(info, dict)
    # Per-agent info leaves, so JaxMARL baselines can reshape them to NUM_ACTORS.
    assert all(leaf.shape == (env.num_agents,) for leaf in jax.tree.leaves(info))


def test_what_jaxmarl_baselines_read(env: JaxMARLEnv) -> None:
    """MAPPO's world-state wrapper: `num_allies` = agents, `state_size`, one `world_state` vector
    per game (each team's first slot's global state); info one value per agent (facts="agent")."""
    native = marl_bgs.make("tdm", num_envs=1, **SETTINGS)
    assert env.num_allies == env.num_agents == 10
    assert env.state_size == 2 * native.spec.state_size
    obs, state = env.reset(jax.random.PRNGKey(1))
    assert obs["world_state"].shape == (env.state_size,)
    batch = jax.tree.map(lambda x: x[None], state)
    full = np.asarray(native.global_state(batch)[0])
    np.testing.assert_array_equal(obs["world_state"], np.concatenate([full[0], full[5]]))
    per_agent = JaxMARLEnv("tdm", facts="agent", **SETTINGS)
    actions = dict.fromkeys(env.agents, 0)
    obs, _, _, _, info = per_agent.step(jax.random.PRNGKey(2), state, actions)
    assert obs["world_state"].shape == (env.state_size,)
    assert all(leaf.shape == (10,) for leaf in jax.tree.leaves(info))
    assert {"damage_dealt", "died", "red_zone_death"} <= set(info["agent_facts"])
    full_facts = JaxMARLEnv("tdm", facts="full", **SETTINGS)
    _, _, _, _, info = full_facts.step(jax.random.PRNGKey(2), state, actions)
    assert info["facts"].damage.shape == (10, 10)


def test_avail_actions_are_the_native_masks(env: JaxMARLEnv) -> None:
    native = marl_bgs.make("tdm", num_envs=1, **SETTINGS)
    _, state = env.reset(jax.random.PRNGKey(3))
    avail = env.get_avail_actions(state)
    batch = jax.tree.map(lambda x: x[None], state)
    expected = native.get_avail_actions(batch)
    assert set(avail) == set(env.agents)
    for agent in env.agents:
        assert avail[agent].shape == (198,)
        assert avail[agent].dtype == jnp.bool_
        np.testing.assert_array_equal(avail[agent], expected[agent][0])


# --- JaxMARL's tests/test_jaxmarl_api.py (auto-reset to a given state), for this env ---------


def test_auto_reset_to_specific_state(env: JaxMARLEnv) -> None:
    rng = jax.random.PRNGKey(0)
    rng, rng_reset1, rng_reset2 = jax.random.split(rng, 3)
    _, state1 = env.reset(rng_reset1)
    obs2, state2 = env.reset(rng_reset2)
    actions = {a: jnp.int32(0) for a in env.agents}
    _, next_state, _, dones, _ = env.step(rng, state1, actions, reset_state=state2)
    assert not dones["__all__"]
    assert not _leaves_equal(state2, next_state)
    # One tick before the limit: the step ends the game and returns the given reset state.
    state1 = state1.replace(tick=state1.rules.tick_limit - 1)
    obs, next_state, reward, dones, info = env.step(rng, state1, actions, reset_state=state2)
    assert dones["__all__"]
    assert all(bool(dones[a]) for a in env.agents)
    assert bool(info["truncated"].all())
    assert _leaves_equal(next_state, state2)
    assert _leaves_equal(obs, obs2)
    assert all(float(reward[a]) == 0.0 for a in env.agents)  # a draw pays nothing


def test_decided_game_pays_the_winner(env: JaxMARLEnv) -> None:
    _, state = env.reset(jax.random.PRNGKey(1))
    state = state.replace(score=jnp.array([state.rules.winning_score, 0], jnp.int32))
    actions = {a: jnp.int32(0) for a in env.agents}
    _, nxt, reward, dones, info = env.step(jax.random.PRNGKey(2), state, actions)
    assert dones["__all__"]
    assert not bool(info["truncated"].any())
    assert info["outcome"].tolist() == [1] * 10
    assert [float(reward[a]) for a in env.agents] == [1.0] * 5 + [-1.0] * 5
    assert int(nxt.tick) == 0
    assert int(nxt.episode) == 1  # the next episode of this game


def test_jit_and_vmap_match_single_games(env: JaxMARLEnv) -> None:
    keys = jax.random.split(jax.random.PRNGKey(4), 2)
    obs, state = jax.jit(jax.vmap(env.reset))(keys)
    flat = jnp.array([[0] * 10, [17] * 10], jnp.int32)
    actions = {a: flat[:, i] for i, a in enumerate(env.agents)}
    obs2, state2, reward, done, info = jax.jit(jax.vmap(env.step))(keys, state, actions)
    avail = jax.jit(jax.vmap(env.get_avail_actions))(state2)
    assert obs2["a_0"].shape == (2, *env.observation_space("a_0").shape)
    assert done["__all__"].shape == (2,)
    assert info["truncated"].shape == (2, 10)
    assert avail["b_4"].shape == (2, 198)
    for g in range(2):
        obs_g, state_g = env.reset(keys[g])
        assert _leaves_equal(obs_g, jax.tree.map(lambda x, g=g: x[g], obs))
        out = env.step(keys[g], state_g, {a: flat[g, i] for i, a in enumerate(env.agents)})
        assert _leaves_equal(out[0], jax.tree.map(lambda x, g=g: x[g], obs2))
        assert _leaves_equal(out[1], jax.tree.map(lambda x, g=g: x[g], state2))
        assert _leaves_equal(out[2], jax.tree.map(lambda x, g=g: x[g], reward))
        for agent in env.agents:
            assert env.observation_space(agent).contains(obs2[agent][g])


# --- JaxMARLTeamEnv: one team against a folded-in opponent, read by CTRolloutManager ----------


def _slot_reward(state: object, next_state: object, facts: object) -> jax.Array:
    """A reward that differs per slot (0 for slot a_0, ... 9 for b_4)."""
    del state, next_state, facts
    return jnp.arange(10, dtype=jnp.float32)


def test_team_env_is_the_two_team_game_with_team_b_played() -> None:
    """Against an idle team B, the team env plays exactly the two-team game in which team B
    picks action 0: the same states tick for tick (auto-reset included), team A's observations
    and masks, its world state (team A's part), and the mean of its agents' rewards to each."""
    env = JaxMARLEnv("tdm", reward_fn=_slot_reward, **SETTINGS)
    idle = idle_policy(env.native.mode)
    team = JaxMARLTeamEnv("tdm", opponent=idle, reward_fn=_slot_reward, **SETTINGS)
    assert team.agents == env.agents[:5]
    assert team.num_agents == 5
    assert team.state_size == env.state_size // 2
    key = jax.random.PRNGKey(5)
    obs_t, state_t = team.reset(key)
    obs_b, state_b = env.reset(key)
    assert _leaves_equal(state_t.game, state_b)
    for tick in range(8):  # past the 6-tick limit: one restart
        k = jax.random.fold_in(key, tick)
        avail = team.get_avail_actions(state_t)
        mine = {a: jnp.argmax(avail[a]).astype(jnp.int32) for a in team.agents}
        obs_t, state_t, reward_t, done_t, _ = team.step(k, state_t, mine)
        both = mine | {a: jnp.int32(0) for a in env.agents[5:]}
        obs_b, state_b, _, done_b, _ = env.step(k, state_b, both)
        assert _leaves_equal(state_t.game, state_b)
        assert _leaves_equal({a: obs_t[a] for a in team.agents}, {a: obs_b[a] for a in team.agents})
        np.testing.assert_array_equal(obs_t["world_state"], obs_b["world_state"][: team.state_size])
        assert [float(reward_t[a]) for a in team.agents] == [2.0] * 5  # the mean of 0-4
        assert bool(done_t["__all__"]) == bool(done_b["__all__"])
    assert int(state_t.game.episode) == 1


def test_ctrolloutmanager_reads_the_team_env_as_smax() -> None:
    """JaxMARL's Q-learning wrapper, unchanged, reads the team env right: the global state is
    team A's `world_state` (not every observation concatenated), the legal-action masks are the
    engine's exact ones (about 9% of actions legal, not all ones), the global reward is the team's;
    and the scripted opponent plays (its units move where an idle team B's stay)."""
    from jaxmarl.wrappers.baselines import CTRolloutManager, LogWrapper

    team = JaxMARLTeamEnv("tdm", opponent=marl_bgs.scripted_policy("tdm-alpha"), **SETTINGS)
    wrapped = CTRolloutManager(LogWrapper(team), batch_size=3)
    assert wrapped.obs_size == team.observation_space("a_0").shape[0] + 5
    obs, state = wrapped.batch_reset(jax.random.PRNGKey(0))
    games = state.env_state.game
    native = marl_bgs.make("tdm", num_envs=3, **SETTINGS)
    np.testing.assert_array_equal(obs["__all__"], native.global_state(games)[:, 0])
    valid = wrapped.get_valid_actions(state.env_state)
    legal = native.get_avail_actions(games)
    for agent in team.agents:
        np.testing.assert_array_equal(valid[agent], legal[agent])
    assert 0.0 < float(np.mean([valid[a].mean() for a in team.agents])) < 0.5
    idle = {a: jnp.zeros(3, jnp.int32) for a in team.agents}
    start = np.asarray(games.units.pos)[:, 5:]
    for tick in range(4):
        obs, state, reward, _, _ = wrapped.batch_step(jax.random.PRNGKey(tick), state, idle)
        np.testing.assert_array_equal(reward["__all__"], reward["a_0"])
    assert not np.array_equal(np.asarray(state.env_state.game.units.pos)[:, 5:], start)


def test_team_env_settings_are_validated() -> None:
    with pytest.raises(ConfigError, match=r"opponent: .* two teams"):
        JaxMARLTeamEnv("tdm", **SETTINGS)
    with pytest.raises(ConfigError, match="opponent: expected a Policy"):
        JaxMARLTeamEnv("tdm", opponent="tdm-alpha", **SETTINGS)  # pyright: ignore[reportArgumentType]
    with pytest.raises(ConfigError, match="plays its second team itself"):
        JaxMARLTeamEnv("two-bridge", opponent=marl_bgs.scripted_policy("tdm-alpha"))


def test_settings_are_validated() -> None:
    with pytest.raises(ConfigError, match="num_envs"):
        JaxMARLEnv("tdm", num_envs=4)
    with pytest.raises(ConfigError, match="tick_limit"):
        JaxMARLEnv("tdm", tick_limit=0)
    with pytest.raises(ConfigError, match=r"^facts: expected one of \[None, 'agent', 'full'\]"):
        JaxMARLEnv("tdm", facts=True)
    env = JaxMARLEnv("tdm")
    with pytest.raises(ValueError, match="missing agent"):
        env.step(jax.random.PRNGKey(0), env.reset(jax.random.PRNGKey(0))[1], {"a_0": 0})


# --- A JaxMARL-style IPPO loop (after JaxMARL's baselines/IPPO/ippo_ff_*.py), tiny sizes -------


class ActorCritic(nn.Module):
    action_dim: int
    hidden: int = 32

    @nn.compact
    def __call__(self, x):
        obs, _dones, avail_actions = x
        embedding = nn.Dense(self.hidden, kernel_init=orthogonal(np.sqrt(2)),
                             bias_init=constant(0.0))(obs)  # fmt: skip
        embedding = nn.relu(embedding)
        actor_mean = nn.Dense(self.action_dim, kernel_init=orthogonal(0.01),
                              bias_init=constant(0.0))(embedding)  # fmt: skip
        unavail_actions = 1 - avail_actions
        action_logits = actor_mean - (unavail_actions * 1e10)
        critic = nn.Dense(1, kernel_init=orthogonal(1.0), bias_init=constant(0.0))(embedding)
        return action_logits, jnp.squeeze(critic, axis=-1)


def log_prob(logits: jnp.ndarray, action: jnp.ndarray) -> jnp.ndarray:
    logp = jax.nn.log_softmax(logits)
    return jnp.take_along_axis(logp, action[..., None], axis=-1)[..., 0]


def entropy(logits: jnp.ndarray) -> jnp.ndarray:
    logp = jax.nn.log_softmax(logits)
    return -jnp.sum(jnp.exp(logp) * logp, axis=-1)


class Transition(NamedTuple):
    done: jnp.ndarray
    action: jnp.ndarray
    value: jnp.ndarray
    reward: jnp.ndarray
    log_prob: jnp.ndarray
    obs: jnp.ndarray
    info: dict
    avail_actions: jnp.ndarray


def batchify(x: dict, agent_list: list[str], num_actors: int) -> jnp.ndarray:
    x = jnp.stack([x[a] for a in agent_list])
    return x.reshape((num_actors, -1))


def unbatchify(x: jnp.ndarray, agent_list: list[str], num_envs: int, num_actors: int) -> dict:
    x = x.reshape((num_actors, num_envs, -1))
    return {a: x[i] for i, a in enumerate(agent_list)}


def make_train(config: dict):
    env = JaxMARLEnv("tdm", **config["ENV_KWARGS"])
    config["NUM_ACTORS"] = env.num_agents * config["NUM_ENVS"]
    config["MINIBATCH_SIZE"] = (
        config["NUM_ACTORS"] * config["NUM_STEPS"] // config["NUM_MINIBATCHES"]
    )
    # The baselines wrap the env in jaxmarl.wrappers.baselines.LogWrapper; that module imports
    # gymnax, which imports `six` without declaring it, so it is left out here.

    def train(rng):
        network = ActorCritic(env.action_space(env.agents[0]).n)
        rng, _rng = jax.random.split(rng)
        init_x = (
            jnp.zeros((1, config["NUM_ENVS"], *env.observation_space(env.agents[0]).shape)),
            jnp.zeros((1, config["NUM_ENVS"])),
            jnp.zeros((1, config["NUM_ENVS"], env.action_space(env.agents[0]).n)),
        )
        network_params = network.init(_rng, init_x)
        tx = optax.chain(
            optax.clip_by_global_norm(config["MAX_GRAD_NORM"]),
            optax.adam(config["LR"], eps=1e-5),
        )
        train_state = TrainState.create(apply_fn=network.apply, params=network_params, tx=tx)

        rng, _rng = jax.random.split(rng)
        reset_rng = jax.random.split(_rng, config["NUM_ENVS"])
        obsv, env_state = jax.vmap(env.reset, in_axes=(0,))(reset_rng)

        def _update_step(runner_state, unused):
            def _env_step(runner_state, unused):
                train_state, env_state, last_obs, last_done, rng = runner_state
                rng, _rng = jax.random.split(rng)
                avail_actions = jax.vmap(env.get_avail_actions)(env_state)
                avail_actions = jax.lax.stop_gradient(
                    batchify(avail_actions, env.agents, config["NUM_ACTORS"])
                )
                obs_batch = batchify(last_obs, env.agents, config["NUM_ACTORS"])
                ac_in = (obs_batch[None, :], last_done[None, :], avail_actions[None, :])
                logits, value = network.apply(train_state.params, ac_in)
                action = jax.random.categorical(_rng, logits)
                logp = log_prob(logits, action)
                env_act = unbatchify(action, env.agents, config["NUM_ENVS"], env.num_agents)
                env_act = {k: v.squeeze() for k, v in env_act.items()}

                rng, _rng = jax.random.split(rng)
                rng_step = jax.random.split(_rng, config["NUM_ENVS"])
                obsv, env_state, reward, done, info = jax.vmap(env.step)(
                    rng_step, env_state, env_act
                )
                info = jax.tree.map(lambda x: x.reshape((config["NUM_ACTORS"],)), info)
                done_batch = batchify(done, env.agents, config["NUM_ACTORS"]).squeeze()
                transition = Transition(
                    done_batch, action.squeeze(), value.squeeze(),
                    batchify(reward, env.agents, config["NUM_ACTORS"]).squeeze(),
                    logp.squeeze(), obs_batch, info, avail_actions,
                )  # fmt: skip
                return (train_state, env_state, obsv, done_batch, rng), transition

            runner_state, traj_batch = jax.lax.scan(
                _env_step, runner_state, None, config["NUM_STEPS"]
            )
            train_state, env_state, last_obs, last_done, rng = runner_state
            last_obs_batch = batchify(last_obs, env.agents, config["NUM_ACTORS"])
            avail = jnp.ones((config["NUM_ACTORS"], env.action_space(env.agents[0]).n))
            _, last_val = network.apply(
                train_state.params, (last_obs_batch[None, :], last_done[None, :], avail)
            )
            last_val = last_val.squeeze()

            def _get_advantages(gae_and_next_value, transition):
                gae, next_value = gae_and_next_value
                done, value, reward = transition.done, transition.value, transition.reward
                delta = reward + config["GAMMA"] * next_value * (1 - done) - value
                gae = delta + config["GAMMA"] * config["GAE_LAMBDA"] * (1 - done) * gae
                return (gae, value), gae

            _, advantages = jax.lax.scan(
                _get_advantages, (jnp.zeros_like(last_val), last_val), traj_batch, reverse=True
            )
            targets = advantages + traj_batch.value

            def _update_epoch(update_state, unused):
                def _update_minbatch(train_state, batch_info):
                    traj_batch, advantages, targets = batch_info

                    def _loss_fn(params, traj_batch, gae, targets):
                        logits, value = network.apply(
                            params, (traj_batch.obs, traj_batch.done, traj_batch.avail_actions)
                        )
                        logp = log_prob(logits, traj_batch.action)
                        value_pred_clipped = traj_batch.value + (value - traj_batch.value).clip(
                            -config["CLIP_EPS"], config["CLIP_EPS"]
                        )
                        value_losses = jnp.square(value - targets)
                        value_losses_clipped = jnp.square(value_pred_clipped - targets)
                        value_loss = 0.5 * jnp.maximum(value_losses, value_losses_clipped).mean()
                        ratio = jnp.exp(logp - traj_batch.log_prob)
                        gae = (gae - gae.mean()) / (gae.std() + 1e-8)
                        loss_actor1 = ratio * gae
                        loss_actor2 = (
                            jnp.clip(ratio, 1.0 - config["CLIP_EPS"], 1.0 + config["CLIP_EPS"])
                            * gae
                        )
                        loss_actor = -jnp.minimum(loss_actor1, loss_actor2).mean()
                        ent = entropy(logits).mean()
                        total = (
                            loss_actor + config["VF_COEF"] * value_loss - config["ENT_COEF"] * ent
                        )
                        return total, (value_loss, loss_actor, ent)

                    grad_fn = jax.value_and_grad(_loss_fn, has_aux=True)
                    total_loss, grads = grad_fn(train_state.params, traj_batch, advantages, targets)
                    return train_state.apply_gradients(grads=grads), total_loss

                train_state, traj_batch, advantages, targets, rng = update_state
                rng, _rng = jax.random.split(rng)
                batch = (traj_batch, advantages.squeeze(), targets.squeeze())
                permutation = jax.random.permutation(_rng, config["NUM_ACTORS"])
                shuffled = jax.tree.map(lambda x: jnp.take(x, permutation, axis=1), batch)
                minibatches = jax.tree.map(
                    lambda x: jnp.swapaxes(
                        jnp.reshape(x, [x.shape[0], config["NUM_MINIBATCHES"], -1, *x.shape[2:]]),
                        1, 0,
                    ),
                    shuffled,
                )  # fmt: skip
                train_state, total_loss = jax.lax.scan(_update_minbatch, train_state, minibatches)
                return (train_state, traj_batch, advantages, targets, rng), total_loss

            update_state = (train_state, traj_batch, advantages, targets, rng)
            update_state, loss_info = jax.lax.scan(
                _update_epoch, update_state, None, config["UPDATE_EPOCHS"]
            )
            train_state, rng = update_state[0], update_state[-1]
            runner_state = (train_state, env_state, last_obs, last_done, rng)
            return runner_state, (traj_batch.info, loss_info)

        rng, _rng = jax.random.split(rng)
        done0 = jnp.zeros((config["NUM_ACTORS"],), dtype=bool)
        runner_state = (train_state, env_state, obsv, done0, _rng)
        runner_state, metrics = jax.lax.scan(
            _update_step, runner_state, None, config["NUM_UPDATES"]
        )
        return {"runner_state": runner_state, "metrics": metrics, "init_params": network_params}

    return train


def test_ippo_trains_two_updates() -> None:
    config = {
        "ENV_KWARGS": {"map_id": 0, "tick_limit": 5},
        "NUM_ENVS": 4,
        "NUM_STEPS": 8,
        "NUM_UPDATES": 2,
        "UPDATE_EPOCHS": 1,
        "NUM_MINIBATCHES": 2,
        "LR": 3e-4,
        "MAX_GRAD_NORM": 0.5,
        "GAMMA": 0.99,
        "GAE_LAMBDA": 0.95,
        "CLIP_EPS": 0.2,
        "VF_COEF": 0.5,
        "ENT_COEF": 0.01,
    }
    rng = jax.random.PRNGKey(0)
    # As the baselines: jax.jit(make_train(config))(rng). Compiled here without LLVM's optimisation
    # passes, which halves the compile time of this tiny run and changes nothing it checks.
    lowered = jax.jit(make_train(config)).lower(rng)
    out = lowered.compile({"xla_backend_optimization_level": 0})(rng)
    info, loss_info = out["metrics"]
    total_loss, (_value_loss, _actor_loss, ent) = loss_info
    assert total_loss.shape == (2, 1, 2)
    assert bool(jnp.all(jnp.isfinite(total_loss)))
    assert bool(jnp.all(ent > 0))
    # Games of 5 ticks in 2 x 8 steps: every game ended (a tick-limit draw) and restarted 3 times.
    assert info["truncated"].shape == (2, 8, 40)
    assert info["truncated"].sum(axis=(0, 1)).tolist() == [3] * 40
    assert info["outcome"].max() == 3
    params = out["runner_state"][0].params
    assert not _leaves_equal(params, out["init_params"])
