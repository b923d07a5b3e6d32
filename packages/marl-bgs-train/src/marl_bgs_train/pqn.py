"""Recurrent PQN with VDN mixing (paper Table S10) as `make_train(config) -> train`.

PQN (parallel Q-learning) needs no replay buffer and no target network: many games in parallel
give decorrelated data, a normalisation layer after each hidden layer keeps the bootstrapped
targets stable, and each update learns from its own rollout with TD(lambda) targets. Each agent's
Q-network (recurrent, weights shared as configured) values the flat actions of its own view;
VDN's team value is the sum of the agents' values of their chosen actions, trained towards
TD(lambda) targets on the team's reward (the mean of its agents' rewards) with the greedy team
value (the sum of each agent's best legal value) bootstrapping. The learner explores
epsilon-greedily over legal actions (1.0 -> 0.01 over the first 2.2M game steps); network
opponents play epsilon-greedily at the final epsilon. Opponents, rewards and runs as for PPO.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import optax
from jax.sharding import Mesh

from marl_bgs import Policy
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs_train import masking
from marl_bgs_train.config import PQNConfig, validate
from marl_bgs_train.hypers import Hyper, descend
from marl_bgs_train.losses import RewardScale, td_lambda, vdn
from marl_bgs_train.networks import init_groups
from marl_bgs_train.opponents import Opponents
from marl_bgs_train.policy import team_forward
from marl_bgs_train.qnet import QLearner, QTransition


@pytree_dataclass
class PQNState(PyTree):
    """Everything a PQN run needs to go on: save it and a resumed run repeats exactly."""

    actor: Any  # the group-stacked Q-network parameters (it acts for team A)
    opt: Any
    env_state: Any
    start: jax.Array  # bool [N]: the next tick starts an episode
    carry: jax.Array  # [N, A, H] the Q-network's memory
    opponents: Opponents
    copies: Any  # Q-network parameters of the newest saved copies [K, ...]
    copies_saved: jax.Array
    key: jax.Array  # uint32 key data
    curriculum: Any  # where new games start (the mode's `Starts`: a curriculum's stage)
    teammate: Any  # the frozen teammate's memory per game (() without one)
    features: Any  # each team's feature memory per game (`TrainParts.remember`; () without)
    reward_scale: RewardScale  # running statistics of returns (`reward_norm`)
    update: jax.Array
    steps: jax.Array


class PQNTrainer(QLearner):
    """`make_train`'s result for a `PQNConfig`: `train(key)`, `init`, `update`, `run`."""

    def __init__(
        self, config: PQNConfig, frozen: Sequence[Policy] = (), teammate: Policy | None = None,
        mesh: Mesh | None = None,
    ) -> None:  # fmt: skip
        super().__init__(validate(config), frozen, teammate, mesh)
        self.config = config
        self.tx = optax.chain(
            optax.clip_by_global_norm(config.max_grad_norm),
            optax.scale_by_radam(),  # at `lr`
        )

    def init(self, key: jax.Array, hyper: Hyper | None = None) -> PQNState:
        """A fresh run: a new Q-network, optimiser and games (the first from
        `hyper`'s layouts, default the run's)."""
        cfg = self.config
        k_net, key = jax.random.split(key)
        params = init_groups(self.q_net, k_net, self.groups, self.input_size)
        return PQNState(
            opt=self.tx.init(params),
            carry=self.split_games(jnp.zeros((cfg.num_envs, self.team_size, cfg.hidden))),
            **self._fresh(key, params, hyper),
        )

    def _loss(self, params: Any, batch: dict[str, Any]) -> tuple[jax.Array, jax.Array]:
        """Half the mean squared error of VDN's team value of the chosen actions against the
        TD(lambda) targets, on game-major sequences [n, T, ...]: (loss, mean team value)."""
        _, (values,) = team_forward(
            self.q_net, params, batch["carry"], batch["x"], batch["start"], batch["group"], False
        )
        chosen = jnp.take_along_axis(values, batch["choice"][..., None], axis=-1)[..., 0]
        team = vdn(chosen, batch["weight"])
        return 0.5 * jnp.mean(jnp.square(team - batch["targets"])), jnp.mean(team)

    def targets(
        self, traj: QTransition, last_team: jax.Array, td_lambda_: float | jax.Array | None = None
    ) -> jax.Array:
        """The TD(lambda) targets [T, N] of a time-major trajectory: the team's reward (the mean
        over its real slots) bootstrapped by the greedy team value of the NEXT tick's state
        (`last_team` [N] for the state after the rollout), cut where a game ended; lambda is
        `td_lambda_` (default the config's)."""
        cfg = self.config
        lam = cfg.td_lambda if td_lambda_ is None else td_lambda_
        greedy_team = vdn(traj.greedy, traj.weight)  # [T, N]
        next_max = jnp.concatenate([greedy_team[1:], last_team[None]])
        team_reward = jnp.sum(traj.reward * traj.weight, -1) / jnp.maximum(
            jnp.sum(traj.weight, -1), 1.0
        )
        return td_lambda(team_reward, traj.done, next_max, cfg.gamma, lam)

    def update(
        self, state: PQNState, hyper: Hyper | None = None
    ) -> tuple[PQNState, dict[str, jax.Array]]:
        """One update: a rollout of every game, TD(lambda) targets, then the epochs (`hyper`:
        the sweepable settings as data, default the config's)."""
        cfg, hyper = self.config, self.hyper() if hyper is None else hyper
        first = state
        state, traj, key, k_epochs = self._rollout(state, hyper)
        inputs_a, _ = self._inputs(state.env_state)
        features, _ = self._feature_memory(state, inputs_a, None)
        _, values, mask = self._values(
            state.actor, state.carry, inputs_a, state.start, False, features
        )
        last_weight = self._weight(inputs_a)
        last_team = vdn(masking.greedy_value(values, mask), last_weight)
        targets = self.targets(traj, last_team, hyper["td_lambda"])
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
            params, opt = descend(self.tx, hyper["lr"], grads, opt, params)
            return (params, opt), {"loss": loss, "q_team": team}

        (params, opt), stats = self._epochs(
            (state.actor, state.opt), batch, minibatch_step, k_epochs, cfg.epochs,
            cfg.minibatches,
        )  # fmt: skip
        state, games = self._finish(state, traj, key, params, opt=opt)
        metrics = {
            **games,
            **{k: jnp.mean(v) for k, v in stats.items()},
            "epsilon": self.epsilon(first.steps),
            "target_mean": jnp.mean(targets),
        }
        return state, metrics
