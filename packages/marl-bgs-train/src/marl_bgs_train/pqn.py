"""Recurrent PQN with VDN mixing (paper Table S10) as `make_train(config) -> train`.

PQN (parallel Q-learning) needs no replay buffer and no target network: many games in parallel
give decorrelated data, a normalisation layer after each hidden layer keeps the bootstrapped
targets stable, and each update learns from its own rollout with TD(lambda) targets. Each agent's
Q-network (recurrent, weights shared as configured) values the 198 flat actions of its own view;
VDN's team value is the sum of the agents' values of their chosen actions, trained towards
TD(lambda) targets on the team's reward (the mean of its agents' rewards) with the greedy team
value (the sum of each agent's best legal value) bootstrapping. The learner explores
epsilon-greedily over legal actions (1.0 -> 0.01 over the first 2.2M game steps); network
opponents play epsilon-greedily at the final epsilon. Opponents, rewards and runs as for PPO.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from marl_bgs import Policy, TeamInputs, team_inputs
from marl_bgs.core.pytree import pytree_dataclass
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs_train import heads
from marl_bgs_train.config import PQNConfig, validate
from marl_bgs_train.losses import td_lambda, vdn
from marl_bgs_train.networks import init_groups, num_groups
from marl_bgs_train.policy import ActorSpec, roster_classes, team_forward
from marl_bgs_train.selfplay import Opponents, SelfPlay


@pytree_dataclass
class PQNState:
    """Everything a PQN run needs to go on: save it and a resumed run repeats exactly."""

    actor: Any  # the group-stacked Q-network parameters (it acts for team A)
    opt: Any
    env_state: Any
    start: jax.Array  # bool [N]: the next tick starts an episode
    carry: jax.Array  # [N, 5, H] the Q-network's memory
    opponents: Opponents
    copies: Any  # Q-network parameters of the newest saved copies [K, ...]
    copies_saved: jax.Array
    key: jax.Array  # uint32 key data
    update: jax.Array
    steps: jax.Array


class QTransition(NamedTuple):
    """One tick of team A's experience, [N, ...] (stacked time-major by the rollout)."""

    x: jax.Array  # [N, 5, D] scaled observations
    choice: jax.Array  # [N, 5] flat action index
    greedy: jax.Array  # [N, 5] each agent's best legal value in this tick's state
    reward: jax.Array  # [N, 5]
    done: jax.Array  # [N]
    start: jax.Array  # [N]
    group: jax.Array  # [N, 5]
    weight: jax.Array  # [N, 5] 1 for a real roster slot
    outcome: jax.Array
    margin: jax.Array
    opponent: jax.Array
    repaired: jax.Array


class PQNTrainer(SelfPlay):
    """`make_train`'s result for a `PQNConfig`: `train(key)`, `init`, `update`, `run`."""

    def __init__(self, config: PQNConfig, frozen: Sequence[Policy] = ()) -> None:
        self.config = config = validate(config)
        super().__init__(config, frozen)
        self.actor_spec = ActorSpec(
            config.hidden, config.recurrent, "flat", config.sharing, config.input_scale,
            q_values=True,
        )  # fmt: skip
        self.q_net = self.actor_spec.network()
        self.groups = num_groups(config.sharing)
        self.tx = optax.chain(
            optax.clip_by_global_norm(config.max_grad_norm), optax.radam(config.lr)
        )

    def epsilon(self, steps: jax.Array) -> jax.Array:
        """The learner's exploration after `steps` game steps (linear, then flat)."""
        cfg = self.config
        left = jnp.clip(1.0 - steps / cfg.epsilon_steps, 0.0, 1.0)
        return cfg.epsilon_finish + (cfg.epsilon_start - cfg.epsilon_finish) * left

    def init(self, key: jax.Array) -> PQNState:
        """A fresh run: a new Q-network, optimiser and games."""
        cfg, n = self.config, self.config.num_envs
        k_net, k_env, k_opp, key = jax.random.split(key, 4)
        params = init_groups(self.q_net, k_net, self.groups, self.env.obs_size)
        _, env_state = self.env.reset(k_env)
        copies = jax.tree_util.tree_map(
            lambda p: jnp.broadcast_to(p, (cfg.opponents.num_copies, *p.shape)), params
        )
        return PQNState(
            actor=params,
            opt=self.tx.init(params),
            env_state=env_state,
            start=jnp.ones((n,), bool),
            carry=jnp.zeros((n, TEAM_SIZE, cfg.hidden)),
            opponents=self.opponents_init(k_opp, cfg.hidden),
            copies=copies,
            copies_saved=jnp.int32(0),
            key=jax.random.key_data(key),
            update=jnp.int32(0),
            steps=jnp.int32(0),
        )

    def _values(
        self, params: Any, carry: jax.Array, inputs: TeamInputs, start: jax.Array, per_game: bool
    ) -> tuple[jax.Array, jax.Array, jax.Array]:
        """One tick of the Q-network for some games: (memory, values [n, 5, 198], mask)."""
        carry, (values,) = team_forward(
            self.q_net, params, carry, self._scale(inputs.obs)[:, None], start[:, None],
            self._groups(inputs)[:, None], per_game,
        )  # fmt: skip
        (mask,) = heads.head_masks("flat", inputs.masks.move, inputs.masks.pair)
        return carry, values[:, 0], mask

    def _network_actions(
        self, params: Any, carry: jax.Array, inputs: TeamInputs, start: jax.Array,
        key: jax.Array, per_game: bool,
    ) -> tuple[jax.Array, jax.Array]:  # fmt: skip
        """A network opponent: epsilon-greedy at the final exploration rate."""
        carry, values, mask = self._values(params, carry, inputs, start, per_game)
        choice = heads.epsilon_greedy(key, values, mask, jnp.float32(self.config.epsilon_finish))
        return carry, heads.to_env_actions("flat", choice[..., None])

    def _tick(self, state: PQNState, key: jax.Array) -> tuple[PQNState, QTransition]:
        """One tick of every game: both teams act, the env steps, finished games restart."""
        k_act, k_opp, k_play = jax.random.split(key, 3)
        inputs_a, inputs_b = team_inputs(self.env, state.env_state)
        carry, values, mask = self._values(state.actor, state.carry, inputs_a, state.start, False)
        choice = heads.epsilon_greedy(k_act, values, mask, self.epsilon(state.steps))
        b_actions, opponents = self._opponent_actions(
            state.actor, state.copies, state.opponents, state.start, inputs_b, k_opp
        )
        a_actions = heads.to_env_actions("flat", choice[..., None])
        played = self._play(
            state.env_state, a_actions, b_actions, opponents, state.copies_saved, k_play
        )
        transition = QTransition(
            x=self._scale(inputs_a.obs),
            choice=choice,
            greedy=heads.greedy_value(values, mask),
            reward=played.reward,
            done=played.done,
            start=state.start,
            group=self._groups(inputs_a),
            weight=(roster_classes(inputs_a) > 0).astype(jnp.float32),
            outcome=played.outcome,
            margin=played.margin,
            opponent=state.opponents.kind,
            repaired=played.repaired,
        )
        state = dataclasses.replace(
            state,
            env_state=played.env_state,
            start=played.done,
            carry=carry,
            opponents=played.opponents,
        )
        return state, transition

    def _loss(self, params: Any, batch: dict[str, Any]) -> tuple[jax.Array, jax.Array]:
        """Half the mean squared error of VDN's team value of the chosen actions against the
        TD(lambda) targets, on game-major sequences [n, T, ...]: (loss, mean team value)."""
        _, (values,) = team_forward(
            self.q_net, params, batch["carry"], batch["x"], batch["start"], batch["group"], False
        )
        chosen = jnp.take_along_axis(values, batch["choice"][..., None], axis=-1)[..., 0]
        team = vdn(chosen, batch["weight"])
        return 0.5 * jnp.mean(jnp.square(team - batch["targets"])), jnp.mean(team)

    def update(self, state: PQNState) -> tuple[PQNState, dict[str, jax.Array]]:
        """One update: a rollout of every game, TD(lambda) targets, then the epochs."""
        cfg, n = self.config, self.config.num_envs
        key = jax.random.wrap_key_data(state.key)
        key, k_roll, k_epochs = jax.random.split(key, 3)
        first = state
        state, traj = jax.lax.scan(self._tick, state, jax.random.split(k_roll, cfg.rollout))
        inputs_a, _ = team_inputs(self.env, state.env_state)
        _, values, mask = self._values(state.actor, state.carry, inputs_a, state.start, False)
        last_weight = (roster_classes(inputs_a) > 0).astype(jnp.float32)
        greedy_team = vdn(traj.greedy, traj.weight)  # [T, N]
        last_team = vdn(heads.greedy_value(values, mask), last_weight)
        next_max = jnp.concatenate([greedy_team[1:], last_team[None]])
        team_reward = jnp.sum(traj.reward * traj.weight, -1) / jnp.maximum(
            jnp.sum(traj.weight, -1), 1.0
        )
        targets = td_lambda(team_reward, traj.done, next_max, cfg.gamma, cfg.td_lambda)
        game_major = lambda a: jnp.swapaxes(a, 0, 1)  # noqa: E731
        batch = {
            "x": game_major(traj.x),
            "choice": game_major(traj.choice),
            "start": game_major(traj.start),
            "group": game_major(traj.group),
            "weight": game_major(traj.weight),
            "targets": game_major(targets),
            "carry": first.carry,
        }

        def minibatch_step(carry: tuple, mb: dict[str, Any]) -> tuple[tuple, dict]:
            params, opt = carry
            (loss, team), grads = jax.value_and_grad(self._loss, has_aux=True)(params, mb)
            updates, opt = self.tx.update(grads, opt, params)
            return (optax.apply_updates(params, updates), opt), {"loss": loss, "q_team": team}

        def epoch(carry: tuple, k: jax.Array) -> tuple[tuple, dict]:
            order = jax.random.permutation(k, n)
            shaped = jax.tree_util.tree_map(
                lambda a: a[order].reshape(cfg.minibatches, n // cfg.minibatches, *a.shape[1:]),
                batch,
            )
            return jax.lax.scan(minibatch_step, carry, shaped)

        (params, opt), stats = jax.lax.scan(
            epoch, (state.actor, state.opt), jax.random.split(k_epochs, cfg.epochs)
        )
        steps = state.steps + cfg.steps_per_update
        copies, copies_saved = self._save_copy(
            state.copies, state.copies_saved, params, state.steps, steps
        )
        metrics = {
            **self._game_metrics(traj, steps),
            **{k: jnp.mean(v) for k, v in stats.items()},
            "epsilon": self.epsilon(first.steps),
            "target_mean": jnp.mean(targets),
        }
        state = dataclasses.replace(
            state,
            actor=params,
            opt=opt,
            copies=copies,
            copies_saved=copies_saved,
            key=jax.random.key_data(key),
            update=state.update + 1,
            steps=steps,
        )
        return state, metrics
