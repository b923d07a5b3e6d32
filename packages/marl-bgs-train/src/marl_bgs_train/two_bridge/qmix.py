"""QMIX on Two-Bridge: a shared agent Q-network (status vector, one-hot id, minimap embedding),
a monotonic mixer on the global state, double Q-learning with a target network, epsilon-greedy
exploration, and a replay of recent transitions.

The replay is time-major per game ([L, n]): a transition's next state is the row after it (a
game that ended is cut there, so the restarted game after it is never bootstrapped). Minimaps
are stored as bytes (their values are small integers).
"""

from __future__ import annotations

from typing import Any, cast

import jax
import jax.numpy as jnp
import optax

from marl_bgs import Policy
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.core.team import restart_finished
from marl_bgs.two_bridge import layout as lay
from marl_bgs.two_bridge.views import MINIMAP_SIZE
from marl_bgs_train.masking import masked_logits
from marl_bgs_train.two_bridge import networks as nets
from marl_bgs_train.two_bridge.common import RewardScale, greedy_policy, make_env, optimizer
from marl_bgs_train.two_bridge.config import BridgeConfig


@pytree_dataclass
class Replay(PyTree):
    """The last L steps of every game [L, n, ...]."""

    obs_map: jax.Array  # uint8 [L, n, 2048]
    obs_rest: jax.Array  # float32 [L, n, status]
    world_map: jax.Array  # uint8 [L, n, 2048]
    world_rest: jax.Array  # float32 [L, n, state_size - 2048]
    mask: jax.Array  # bool [L, n, 5, A]
    action: jax.Array  # int32 [L, n, 5]
    reward: jax.Array  # float32 [L, n]
    done: jax.Array  # bool [L, n]
    filled: jax.Array  # int32 []: rows written so far (all of them once it wraps)
    cursor: jax.Array  # int32 []: the next row to write


@pytree_dataclass
class QMIXState(PyTree):
    params: Any
    target: Any
    opt_state: Any
    game: Any
    scale: RewardScale
    replay: Replay
    key: jax.Array
    steps: jax.Array  # environment steps so far
    updates: jax.Array  # gradient steps so far


def _join(byte_map: jax.Array, rest: jax.Array) -> jax.Array:
    return jnp.concatenate([byte_map.astype(jnp.float32), rest], axis=-1)


class QMIXTrainer:
    """`trainer.init(key)`, then `trainer.update(state)`: `train_every` steps of every game,
    then one gradient step once the replay holds `learning_starts` transitions."""

    def __init__(self, config: BridgeConfig) -> None:
        self.config = config
        self.env = make_env(config, config.num_envs)
        self.rows = max(2, config.buffer_size // config.num_envs)
        self.agent = nets.AgentQ(self.env.spec.action_heads[0])
        self.mixer = nets.Mixer()
        self.tx = optimizer(config)
        self._collect_jit = jax.jit(self._collect, donate_argnums=0)
        self._learn_jit = jax.jit(self._learn, donate_argnums=0)

    def q_values(self, params: Any, obs: jax.Array) -> jax.Array:
        """Q [..., 5, A] from shared observations [..., D]."""
        return cast(jax.Array, self.agent.apply(params["agent"], obs))

    def greedy(self, params: Any) -> Policy:
        """The greedy policy of `params` (the paper's evaluation)."""
        return greedy_policy("qmix", lambda obs: self.q_values(params, obs))

    def init(self, key: jax.Array) -> QMIXState:
        k_agent, k_mixer, k_env, key = jax.random.split(key, 4)
        _, game = self.env.reset(k_env)
        obs, world = self.env.observe(game)[:, 0], self.env.global_state(game)[:, 0]
        q = self.agent.init(k_agent, obs)
        agent_q = jnp.zeros((self.env.num_envs, lay.NUM_FRIENDS))
        params = {"agent": q, "mixer": self.mixer.init(k_mixer, agent_q, world)}
        n, rows, width = self.env.num_envs, self.rows, self.env.spec.action_heads[0]
        replay = Replay(
            obs_map=jnp.zeros((rows, n, MINIMAP_SIZE), jnp.uint8),
            obs_rest=jnp.zeros((rows, n, obs.shape[-1] - MINIMAP_SIZE)),
            world_map=jnp.zeros((rows, n, MINIMAP_SIZE), jnp.uint8),
            world_rest=jnp.zeros((rows, n, world.shape[-1] - MINIMAP_SIZE)),
            mask=jnp.zeros((rows, n, lay.NUM_FRIENDS, width), bool),
            action=jnp.zeros((rows, n, lay.NUM_FRIENDS), jnp.int32),
            reward=jnp.zeros((rows, n)), done=jnp.zeros((rows, n), bool),
            filled=jnp.int32(0), cursor=jnp.int32(0),
        )  # fmt: skip
        target = jax.tree.map(jnp.copy, params)  # its own buffers (the state is donated)
        return QMIXState(params, target, self.tx.init(params), game, RewardScale.create(n),
                         replay, key, jnp.int32(0), jnp.int32(0))  # fmt: skip

    def epsilon(self, steps: jax.Array) -> jax.Array:
        cfg = self.config
        frac = jnp.minimum(steps / cfg.epsilon_steps, 1.0)
        return cfg.epsilon_start + frac * (cfg.epsilon_end - cfg.epsilon_start)

    def _collect(self, state: QMIXState) -> tuple[QMIXState, dict[str, jax.Array]]:
        env, cfg = self.env, self.config

        def step(carry: QMIXState, x: None) -> tuple:
            s = carry
            key, k_explore, k_random, k_reset = jax.random.split(s.key, 4)
            obs, world = env.observe(s.game)[:, 0], env.global_state(s.game)[:, 0]
            mask = env.action_masks(s.game).flat
            q = self.q_values(s.params, obs)
            greedy = jnp.argmax(jnp.where(mask, q, -jnp.inf), -1)
            random = jax.random.categorical(k_random, masked_logits(jnp.zeros_like(q), mask))
            explore = jax.random.uniform(k_explore, greedy.shape) < self.epsilon(s.steps)
            action = jnp.where(explore, random, greedy).astype(jnp.int32)
            _, nxt, reward, done, info = env.step(key, s.game, action[..., None])
            r, d = reward[env.agents[0]], done["__all__"]
            scale = s.scale.update(r, d, cfg.gamma)
            r = scale.scale(r) if cfg.reward_standardization else r
            nxt, _ = restart_finished(env, k_reset, nxt)
            rp, row = s.replay, s.replay.cursor
            rp = rp.replace(
                obs_map=rp.obs_map.at[row].set(obs[:, :MINIMAP_SIZE].astype(jnp.uint8)),
                obs_rest=rp.obs_rest.at[row].set(obs[:, MINIMAP_SIZE:]),
                world_map=rp.world_map.at[row].set(world[:, :MINIMAP_SIZE].astype(jnp.uint8)),
                world_rest=rp.world_rest.at[row].set(world[:, MINIMAP_SIZE:]),
                mask=rp.mask.at[row].set(mask), action=rp.action.at[row].set(action),
                reward=rp.reward.at[row].set(r), done=rp.done.at[row].set(d),
                filled=jnp.minimum(rp.filled + 1, self.rows), cursor=(row + 1) % self.rows,
            )  # fmt: skip
            ended = info["outcome"]
            s = s.replace(game=nxt, scale=scale, replay=rp, key=key,
                          steps=s.steps + env.num_envs)  # fmt: skip
            return s, ended

        state, outcomes = jax.lax.scan(step, state, None, length=cfg.train_every)
        ended = outcomes > lay.RUNNING
        wins = ended & ((outcomes == lay.NAVIGATION_WIN) | (outcomes == lay.COMBAT_WIN))
        return state, {"episodes": ended.sum(), "wins": wins.sum()}

    def _loss(self, params: Any, target: Any, batch: tuple) -> tuple[jax.Array, dict]:
        obs, world, action, reward, done, nobs, nworld, nmask = batch
        q = jnp.take_along_axis(self.q_values(params, obs), action[..., None], -1)[..., 0]
        q_tot = cast(jax.Array, self.mixer.apply(params["mixer"], q, world))
        # Double Q: the online network picks the next actions, the target network values them.
        pick = jnp.argmax(jnp.where(nmask, self.q_values(params, nobs), -jnp.inf), -1)
        next_q = jnp.take_along_axis(self.q_values(target, nobs), pick[..., None], -1)[..., 0]
        next_tot = cast(jax.Array, self.mixer.apply(target["mixer"], next_q, nworld))
        goal = reward + self.config.gamma * (1.0 - done) * jax.lax.stop_gradient(next_tot)
        loss = jnp.mean(jnp.square(q_tot - goal))
        return loss, {"td_loss": loss, "q_mean": q_tot.mean()}

    def _learn(self, state: QMIXState) -> tuple[QMIXState, dict[str, jax.Array]]:
        cfg, rp = self.config, state.replay
        key, k_rows, k_games = jax.random.split(state.key, 3)
        # Rows whose next row is written: any but the newest (cursor - 1).
        offset = jax.random.randint(k_rows, (cfg.batch_size,), 0, rp.filled - 1)
        rows = (rp.cursor - rp.filled + offset) % self.rows
        games = jax.random.randint(k_games, (cfg.batch_size,), 0, self.env.num_envs)
        nrows = (rows + 1) % self.rows

        def at(r: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
            obs = _join(rp.obs_map[r, games], rp.obs_rest[r, games])
            return obs, _join(rp.world_map[r, games], rp.world_rest[r, games]), rp.mask[r, games]

        obs, world, _ = at(rows)
        nobs, nworld, nmask = at(nrows)
        done = rp.done[rows, games].astype(jnp.float32)
        batch = (obs, world, rp.action[rows, games], rp.reward[rows, games], done, nobs, nworld,
                 nmask)  # fmt: skip
        grads, stats = jax.grad(self._loss, has_aux=True)(state.params, state.target, batch)
        updates, opt_state = self.tx.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        count = state.updates + 1
        target = jax.tree.map(
            lambda t, p: jnp.where(count % cfg.target_update == 0, p, t), state.target, params
        )
        return state.replace(params=params, target=target, opt_state=opt_state, key=key,
                             updates=count), stats  # fmt: skip

    def update(self, state: QMIXState) -> tuple[QMIXState, dict[str, jax.Array]]:
        """`train_every` steps of every game, then a gradient step (once the replay holds
        `learning_starts` transitions)."""
        state, played = self._collect_jit(state)
        episodes = played["episodes"]
        stats = {"episodes": episodes, "win_rate": played["wins"] / jnp.maximum(episodes, 1)}
        if int(state.replay.filled) * self.env.num_envs >= self.config.learning_starts:
            state, learned = self._learn_jit(state)
            stats |= learned
        return state, stats
