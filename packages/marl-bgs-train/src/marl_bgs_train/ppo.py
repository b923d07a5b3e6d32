"""The PPO baselines: recurrent and feedforward IPPO (a local critic per agent), MAPPO (a
centralised critic on the critic-only global state) and MaskPPO (`joint_ratio`: one clipped ratio
for the team's joint action, as a centralised controller has), as `make_train(config) -> train`.

The learner plays team A of `num_envs` games; team B comes from the opponent mix (`SelfPlay`), or
from the env itself in a single-team mode (Two-Bridge).
One update plays `rollout` ticks of every game (finished games restart in place) inside
`lax.scan`, computes GAE on the (normalised) critic, and takes `epochs x minibatches` clipped PPO
steps over whole game sequences. Everything from `init` to the last update is one pure function
of a key; `train.run(state, k)` continues any saved state for `k` more updates, so a resumed run
repeats exactly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from jax.sharding import Mesh

from marl_bgs import Policy, TeamInputs
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs_train import heads
from marl_bgs_train.config import PPOConfig, validate
from marl_bgs_train.hypers import Hyper, descend
from marl_bgs_train.losses import RewardScale, ValueNorm, gae, ppo_actor_loss, ppo_value_loss
from marl_bgs_train.networks import Network, init_groups, num_groups
from marl_bgs_train.opponents import Opponents
from marl_bgs_train.policy import team_forward
from marl_bgs_train.selfplay import SelfPlay


@pytree_dataclass
class RunnerState(PyTree):
    """Everything a run needs to go on: save it and a resumed run repeats exactly."""

    actor: Any  # group-stacked actor parameters
    critic: Any
    actor_opt: Any
    critic_opt: Any
    value_norm: ValueNorm
    env_state: Any
    start: jax.Array  # bool [N]: the next tick starts an episode (memories restart)
    actor_carry: jax.Array  # [N, A, H]
    critic_carry: jax.Array
    opponents: Opponents
    copies: Any  # actor parameters of the newest saved copies [K, ...]
    copies_saved: jax.Array  # int32: copies saved so far
    key: jax.Array  # uint32 key data (typed keys do not serialise)
    curriculum: Any  # where new games start (the mode's `Starts`: a curriculum's stage)
    teammate: Any  # the frozen teammate's memory per game (() without one)
    features: Any  # each team's feature memory per game (`TrainParts.remember`; () without)
    reward_scale: RewardScale  # running statistics of returns (`reward_norm`)
    update: jax.Array  # int32: updates done
    steps: jax.Array  # int32: game steps done


class Transition(NamedTuple):
    """One tick of team A's experience, [N, ...] (stacked time-major by the rollout)."""

    x: jax.Array  # [N, A, D] scaled observations
    critic_x: jax.Array  # [N, A, Dc] the critic's input
    masks: tuple[jax.Array, ...]  # head masks [N, A, k]
    choices: jax.Array  # [N, A, heads]
    log_prob: jax.Array  # [N, A]
    value: jax.Array  # [N, A] critic output (normalised units)
    reward: jax.Array  # [N, A]
    paid: jax.Array  # [N] the env's reward to the played slots, summed (metrics)
    done: jax.Array  # [N]
    start: jax.Array  # [N] this tick started an episode
    group: jax.Array  # [N, A]
    weight: jax.Array  # [N, A] 1 for a real roster slot
    outcome: jax.Array  # [N] 0 running, 1 A won, 2 B won, 3 draw
    margin: jax.Array  # [N] A's points minus B's at the end of a finished game
    opponent: jax.Array  # [N] kind of team B's player
    repaired: jax.Array  # [N] team A's actions the engine had to repair (masks make it 0)


def joint(
    log_prob: jax.Array, old: jax.Array, advantages: jax.Array, entropy: jax.Array,
    weight: jax.Array,
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array, jax.Array]:  # fmt: skip
    """The team's joint action as one (MaskPPO's centralised controller): [..., A] pieces become
    [...]: log-probabilities and entropies summed over the played agents, the advantage their
    mean, weight 1 where any agent plays."""
    total = jnp.sum(weight, -1)
    mean = jnp.sum(advantages * weight, -1) / jnp.maximum(total, 1.0)
    summed = (jnp.sum(x * weight, -1) for x in (log_prob, old, entropy))
    lp, old_lp, ent = summed
    return lp, old_lp, mean, ent, (total > 0).astype(jnp.float32)


class PPOTrainer(SelfPlay):
    """`make_train`'s result: `train(key)` runs the whole configured training; `init`,
    `update` and `run` expose the pieces (all pure, jittable, vmappable over keys)."""

    def __init__(
        self, config: PPOConfig, frozen: Sequence[Policy] = (), teammate: Policy | None = None,
        mesh: Mesh | None = None,
    ) -> None:  # fmt: skip
        self.config = config = validate(config)
        super().__init__(config, frozen, teammate, mesh)
        self.actor_spec = self._actor_spec(config.heads)
        self.actor_net = self.actor_spec.network()
        self.critic_net = Network(
            config.hidden, (1,), config.recurrent, output_scale=1.0,
            encoder=self.actor_spec.encoder(),
        )  # fmt: skip
        self.groups = num_groups(config.sharing, self.team_size, self.parts.num_classes)
        clip = optax.clip_by_global_norm(config.max_grad_norm)
        self.actor_tx = optax.chain(clip, optax.scale_by_adam(eps=1e-5))  # at `actor_lr`
        self.critic_tx = optax.chain(clip, optax.scale_by_adam(eps=1e-5))  # at `critic_lr`

    # ----------------------------------------------------------------------------- start
    def init(self, key: jax.Array, hyper: Hyper | None = None) -> RunnerState:
        """A fresh run: new networks, optimisers and games (the first from
        `hyper`'s layouts, default the run's)."""
        cfg = self.config
        k_actor, k_critic, key = jax.random.split(key, 3)
        actor = init_groups(self.actor_net, k_actor, self.groups, self.input_size)
        critic = init_groups(self.critic_net, k_critic, self.groups, self.critic_input_size)
        zeros = self.split_games(jnp.zeros((cfg.num_envs, self.team_size, cfg.hidden)))
        return RunnerState(
            critic=critic,
            actor_opt=self.actor_tx.init(actor),
            critic_opt=self.critic_tx.init(critic),
            value_norm=ValueNorm.create(),
            actor_carry=zeros,
            critic_carry=zeros,
            **self._fresh(key, actor, hyper),
        )

    # ---------------------------------------------------------------------------- acting
    def _network_actions(
        self, params: Any, carry: jax.Array, inputs: TeamInputs, start: jax.Array,
        key: jax.Array, per_game: bool, features: Any,
    ) -> tuple[jax.Array, jax.Array]:  # fmt: skip
        """The actor samples legal actions for some games of one team (an opponent)."""
        x = self._scale(inputs.obs, features)
        carry, logits = team_forward(
            self.actor_net, params, carry, x[:, None], start[:, None],
            self._groups(inputs)[:, None], per_game,
        )  # fmt: skip
        masks = self.actor_spec.action_heads.masks(inputs.masks)
        n = inputs.obs.shape[0]
        picked = jax.vmap(heads.sample)(
            jax.random.split(key, n), tuple(lg[:, 0] for lg in logits), masks
        )
        return carry, self.actor_spec.action_heads.to_env(picked.choices)

    @property
    def critic_input_size(self) -> int:
        """The critic's input width: the global state's (MAPPO) or the actor's, and the mode's
        added features."""
        if not self.config.centralised_critic:
            return self.input_size
        return self.env.spec.state_size + self.parts.feature_width(self.config.game)

    def _critic_input(self, env_state: Any, inputs: TeamInputs, features: Any) -> jax.Array:
        if self.config.centralised_critic:
            rows = self.env.spec.team_slice(self.env.global_state(env_state), 0)
            return self._scale(rows, features)
        return self._scale(inputs.obs, features)

    def _tick(
        self, state: RunnerState, key: jax.Array, hyper: Hyper
    ) -> tuple[RunnerState, Transition]:
        """One tick of every game: both teams act, the env steps, finished games restart."""
        n = self.config.num_envs
        k_act, k_opp, k_play, k_mate, k_fresh = jax.random.split(key, 5)
        inputs_a, inputs_b = self._inputs(state.env_state)
        features = self._feature_memory(state, inputs_a, inputs_b)
        group = self._groups(inputs_a)
        x = self._scale(inputs_a.obs, features[0])
        critic_x = self._critic_input(state.env_state, inputs_a, features[0])
        start = state.start[:, None]
        actor_carry, logits = team_forward(
            self.actor_net, state.actor, state.actor_carry, x[:, None], start, group[:, None], False
        )
        critic_carry, value = self._values(state, critic_x, group)
        masks = self.actor_spec.action_heads.masks(inputs_a.masks)
        keys = jax.random.split(k_act, n)
        picked = jax.vmap(heads.sample)(keys, tuple(lg[:, 0] for lg in logits), masks)
        b_actions, opponents = self._opponent_actions(
            state.actor, state.copies, state.opponents, state.start, inputs_b, k_opp, features[1]
        )
        a_actions, teammate = self._with_teammate(
            self.actor_spec.action_heads.to_env(picked.choices), state.teammate, inputs_a, k_mate
        )
        played = self._play(
            state, a_actions, b_actions, opponents, teammate, k_play, k_fresh, hyper
        )
        transition = Transition(
            x=x,
            critic_x=critic_x,
            masks=masks,
            choices=picked.choices,
            log_prob=picked.log_prob,
            value=value,
            **self._record(state, inputs_a, played),
        )
        state = dataclasses.replace(
            state,
            env_state=played.env_state,
            start=played.done,
            actor_carry=actor_carry,
            critic_carry=critic_carry,
            opponents=played.opponents,
            teammate=played.teammate,
            features=features,
            reward_scale=played.reward_scale,
        )
        return state, transition

    # --------------------------------------------------------------------------- learning
    def _values(
        self, state: RunnerState, critic_x: jax.Array, group: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """One tick of the critic on team A: (its memory [N, A, H], values [N, A])."""
        carry, (value,) = team_forward(
            self.critic_net, state.critic, state.critic_carry, critic_x[:, None],
            state.start[:, None], group[:, None], False,
        )  # fmt: skip
        return carry, value[:, 0, :, 0]

    def _last_value(self, state: RunnerState) -> jax.Array:
        """The critic's value of the state after a rollout (the GAE bootstrap)."""
        inputs_a, _ = self._inputs(state.env_state)
        features, _ = self._feature_memory(state, inputs_a, None)
        group = self._groups(inputs_a)
        critic_x = self._critic_input(state.env_state, inputs_a, features)
        return self._values(state, critic_x, group)[1]

    def _losses(
        self, actor: Any, critic: Any, batch: dict[str, Any], hyper: Hyper
    ) -> tuple[jax.Array, jax.Array, dict[str, jax.Array]]:
        """Actor and critic losses on game-major sequences [n, T, ...]."""
        _, logits = team_forward(
            self.actor_net, actor, batch["actor_carry"], batch["x"], batch["start"],
            batch["group"], False,
        )  # fmt: skip
        log_prob, entropy = heads.evaluate(logits, batch["masks"], batch["choices"])
        lp, old, adv, ent, weight = (
            log_prob, batch["log_prob"], batch["advantages"], entropy, batch["weight"],
        )  # fmt: skip
        if self.config.joint_ratio:
            lp, old, adv, ent, weight = joint(lp, old, adv, ent, weight)
        actor_loss, stats = ppo_actor_loss(
            lp, old, adv, ent, weight, hyper["clip"], hyper["entropy_coef"]
        )
        _, (value,) = team_forward(
            self.critic_net, critic, batch["critic_carry"], batch["critic_x"], batch["start"],
            batch["group"], False,
        )  # fmt: skip
        value_loss = ppo_value_loss(
            value[..., 0], batch["value"], batch["targets"], batch["weight"], hyper["clip"]
        )
        return actor_loss, value_loss, {**stats, "value_loss": value_loss}

    def targets(
        self, traj: Transition, last_value: jax.Array, norm: ValueNorm,
        gae_lambda: float | jax.Array | None = None,
    ) -> tuple[jax.Array, jax.Array, ValueNorm]:  # fmt: skip
        """GAE on a time-major trajectory, cut where a game ended. The critic's values
        (`traj.value`, and `last_value` [N, A] of the state after the rollout) are in its own
        units: with value normalisation they are denormalised by `norm`, the returns folded into
        it, and the critic's targets normalised by the result; lambda is `gae_lambda` (default
        the config's). Returns (advantages [T, N, A], critic targets [T, N, A], the new
        `norm`)."""
        cfg = self.config
        lam = cfg.gae_lambda if gae_lambda is None else gae_lambda
        denorm = norm.denormalize if cfg.value_norm else (lambda v: v)
        done = jnp.broadcast_to(traj.done[..., None], traj.reward.shape)
        advantages, returns = gae(
            traj.reward, denorm(traj.value), done, denorm(last_value), cfg.gamma, lam
        )
        if cfg.value_norm:
            norm = norm.update(returns, traj.weight, cfg.value_norm_beta)
            targets = norm.normalize(returns)
        else:
            targets = returns
        return advantages, targets, norm

    def update(
        self, state: RunnerState, hyper: Hyper | None = None
    ) -> tuple[RunnerState, dict[str, jax.Array]]:
        """One update: a rollout of every game, GAE, then the PPO epochs (`hyper`: the sweepable
        settings as data, default the config's)."""
        cfg, hyper = self.config, self.hyper() if hyper is None else hyper
        first = state
        state, traj, key, k_epochs = self._rollout(state, hyper)
        advantages, targets, norm = self.targets(
            traj, self._last_value(state), state.value_norm, hyper["gae_lambda"]
        )
        game_major = lambda a: jnp.swapaxes(a, 0, 1)  # noqa: E731
        batch = {
            "x": game_major(traj.x),
            "critic_x": game_major(traj.critic_x),
            "masks": tuple(game_major(m) for m in traj.masks),
            "choices": game_major(traj.choices),
            "log_prob": game_major(traj.log_prob),
            "value": game_major(traj.value),
            "advantages": game_major(advantages),
            "targets": game_major(targets),
            "start": game_major(traj.start),
            "group": game_major(traj.group),
            "weight": game_major(traj.weight),
            "actor_carry": first.actor_carry,
            "critic_carry": first.critic_carry,
        }

        def minibatch_step(carry: tuple, mb: dict[str, Any]) -> tuple[tuple, dict]:
            actor, critic, actor_opt, critic_opt = carry

            def total(a: Any, c: Any) -> tuple[jax.Array, dict[str, jax.Array]]:
                actor_loss, value_loss, stats = self._losses(a, c, mb, hyper)
                return actor_loss + value_loss, stats  # disjoint parameters: separate gradients

            (_, stats), grads = jax.value_and_grad(total, argnums=(0, 1), has_aux=True)(
                actor, critic
            )
            actor, actor_opt = descend(self.actor_tx, hyper["actor_lr"], grads[0], actor_opt, actor)
            critic, critic_opt = descend(
                self.critic_tx, hyper["critic_lr"], grads[1], critic_opt, critic
            )
            return (actor, critic, actor_opt, critic_opt), stats

        params = (state.actor, state.critic, state.actor_opt, state.critic_opt)
        params, stats = self._epochs(
            params, batch, minibatch_step, k_epochs, cfg.epochs, cfg.minibatches
        )
        actor, critic, actor_opt, critic_opt = params
        state, games = self._finish(
            state, traj, key, actor, critic=critic, actor_opt=actor_opt, critic_opt=critic_opt,
            value_norm=norm,
        )  # fmt: skip
        return state, {**games, **{k: jnp.mean(v) for k, v in stats.items()}}
