"""What the value-based baselines (PQN-VDN, QMIX) share: a Q-network per agent over the mode's
flat actions (198 in Team Deathmatch; recurrent, LayerNorm, weights shared as configured) that
acts epsilon-greedily over legal actions, with exploration falling linearly over the first game
steps; network opponents play at the final epsilon, and a run's System plays greedily."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.sharding import Mesh

from marl_bgs import Policy, TeamInputs
from marl_bgs_train import masking
from marl_bgs_train.hypers import Hyper
from marl_bgs_train.networks import num_groups
from marl_bgs_train.policy import team_forward
from marl_bgs_train.selfplay import SelfPlay


class QTransition(NamedTuple):
    """One tick of team A's experience, [N, ...] (stacked time-major by the rollout)."""

    x: jax.Array  # [N, A, D] scaled observations
    mask: jax.Array  # [N, A, flat] legal actions (kept for QMIX's next-tick maximum; else [N, 0])
    team_state: jax.Array  # [N, Ds] team A's critic-only state (QMIX's mixer; else [N, 0])
    choice: jax.Array  # [N, A] flat action index
    greedy: jax.Array  # [N, A] each agent's best legal value in this tick's state
    reward: jax.Array  # [N, A]
    paid: jax.Array  # [N] the env's reward to the played slots, summed (metrics)
    done: jax.Array  # [N]
    start: jax.Array  # [N]
    group: jax.Array  # [N, A]
    weight: jax.Array  # [N, A] 1 for a real roster slot
    outcome: jax.Array
    margin: jax.Array
    opponent: jax.Array
    repaired: jax.Array


class QLearner(SelfPlay):
    """A `SelfPlay` whose acting network is a Q-network (`config` has `hidden`, `recurrent`,
    `sharing`, `input_scale`, `epsilon_start`, `epsilon_finish`, `epsilon_steps`)."""

    def __init__(
        self, config: Any, frozen: Sequence[Policy], teammate: Policy | None, mesh: Mesh | None
    ) -> None:
        super().__init__(config, frozen, teammate, mesh)
        self.actor_spec = self._actor_spec("flat", q_values=True)
        self.q_net = self.actor_spec.network()
        self.groups = num_groups(config.sharing, self.team_size, self.parts.num_classes)

    keeps_state = False  # QMIX keeps masks and the team state in its transitions

    def _team_state(self, env_state: Any) -> jax.Array:
        """Team A's critic-only global state [N, Ds] (agent 0's row: the team's frame, all
        visible), or [N, 0] when the learner does not keep it."""
        full = self.env.global_state(env_state)[:, self.env.spec.teams[0][0]]
        # the mixer reads the scaled state alone (the added features are per agent)
        return full * self._config.input_scale if self.keeps_state else full[:, :0]

    def epsilon(self, steps: jax.Array) -> jax.Array:
        """The learner's exploration after `steps` game steps (linear, then flat)."""
        cfg = self._config
        left = jnp.clip(1.0 - steps / cfg.epsilon_steps, 0.0, 1.0)
        return cfg.epsilon_finish + (cfg.epsilon_start - cfg.epsilon_finish) * left

    def _values(
        self, params: Any, carry: jax.Array, inputs: TeamInputs, start: jax.Array,
        per_game: bool, features: Any,
    ) -> tuple[jax.Array, jax.Array, jax.Array]:  # fmt: skip
        """One tick of the Q-network for some games: (memory, values [n, A, flat], mask)."""
        x = self._scale(inputs.obs, features)
        carry, (values,) = team_forward(
            self.q_net, params, carry, x[:, None], start[:, None],
            self._groups(inputs)[:, None], per_game,
        )  # fmt: skip
        (mask,) = self.actor_spec.action_heads.masks(inputs.masks)
        return carry, values[:, 0], mask

    def _network_actions(
        self, params: Any, carry: jax.Array, inputs: TeamInputs, start: jax.Array,
        key: jax.Array, per_game: bool, features: Any,
    ) -> tuple[jax.Array, jax.Array]:  # fmt: skip
        """A network opponent: epsilon-greedy at the final exploration rate."""
        carry, values, mask = self._values(params, carry, inputs, start, per_game, features)
        choice = masking.epsilon_greedy(key, values, mask, jnp.float32(self._config.epsilon_finish))
        return carry, self.actor_spec.action_heads.to_env(choice[..., None])

    def _tick(self, state: Any, key: jax.Array, hyper: Hyper) -> tuple[Any, QTransition]:
        """One tick of every game: team A epsilon-greedy, team B from the mix, the env steps,
        finished games restart (`state` has the fields PQN's and QMIX's states share)."""
        k_act, k_opp, k_play, k_mate, k_fresh = jax.random.split(key, 5)
        inputs_a, inputs_b = self._inputs(state.env_state)
        features = self._feature_memory(state, inputs_a, inputs_b)
        carry, values, mask = self._values(
            state.actor, state.carry, inputs_a, state.start, False, features[0]
        )
        choice = masking.epsilon_greedy(k_act, values, mask, self.epsilon(state.steps))
        b_actions, opponents = self._opponent_actions(
            state.actor, state.copies, state.opponents, state.start, inputs_b, k_opp, features[1]
        )
        a_actions, teammate = self._with_teammate(
            self.actor_spec.action_heads.to_env(choice[..., None]), state.teammate, inputs_a, k_mate
        )
        played = self._play(
            state, a_actions, b_actions, opponents, teammate, k_play, k_fresh, hyper
        )
        transition = QTransition(
            x=self._scale(inputs_a.obs, features[0]),
            mask=mask if self.keeps_state else mask[..., :0],
            team_state=self._team_state(state.env_state),
            choice=choice,
            greedy=masking.greedy_value(values, mask),
            **self._record(state, inputs_a, played),
        )
        state = dataclasses.replace(
            state,
            env_state=played.env_state,
            start=played.done,
            carry=carry,
            opponents=played.opponents,
            teammate=played.teammate,
            features=features,
            reward_scale=played.reward_scale,
        )
        return state, transition
