"""The four PPO baselines: recurrent and feedforward IPPO (a local critic per agent) and MAPPO
(a centralised critic on the critic-only global state), as `make_train(config) -> train`.

The learner plays team A of `num_envs` games; team B comes from the opponent mix (current weights,
saved copies, a frozen pool, scripted teams): the games are split once into slices in proportion
to the mix (`opponent_slices`), and each slice's next game draws its player within the category
(which saved copy, which fixed policy). Each player runs only on its own slice: one shared matrix
product for the current weights, per-game parameters only for the copy games, each fixed policy
only on the fixed games. One update plays `rollout` ticks
of every game (finished games restart in place) inside `lax.scan`, computes GAE on the
(normalised) critic, and takes `epochs x minibatches` clipped PPO steps over whole game sequences.
Everything from `init` to the last update is one pure function of a key; `train.run(state, k)`
continues any saved state for `k` more updates, so a resumed run repeats exactly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import cache, partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

import marl_bgs
from marl_bgs import Policy, TeamInputs, scripted_policy, team_inputs
from marl_bgs.core.pytree import pytree_dataclass, where_games
from marl_bgs.core.team import act_team
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.lifecycle import terminal_reward
from marl_bgs_train import heads, rewards
from marl_bgs_train.config import PPOConfig, RewardSettings, validate
from marl_bgs_train.losses import ValueNorm, gae, ppo_actor_loss, ppo_value_loss
from marl_bgs_train.networks import Network, agent_groups, init_groups, num_groups
from marl_bgs_train.policy import ActorSpec, roster_classes, team_forward


@cache
def _scripted(name: str) -> Policy:
    """One policy object per scripted team, so equal configs share compiled programs."""
    return scripted_policy(name)


def reward_function(settings: RewardSettings, gamma: float) -> Any:
    """The env's `reward_fn` for these settings (cached: equal settings, one compiled step)."""
    base = rewards.combat_reward(form=settings.form) if settings.combat else terminal_reward
    shapers = []
    if settings.score_shaping:
        shapers.append(rewards.score_shaping(settings.score_shaping))
    if settings.health_potential:
        potential = rewards.health_potential(settings.health_potential)
        shapers.append(rewards.potential_shaping(potential, gamma))
    return rewards.shaped(base, *shapers) if shapers else base


def opponent_slices(num_envs: int, weights: Sequence[float]) -> tuple[int, int, int]:
    """How many of `num_envs` games play the current weights, saved copies and fixed policies,
    in proportion to `weights` (largest remainders; ties to the earlier category)."""
    total = sum(weights)
    quotas = [num_envs * w / total for w in weights]
    counts = [int(q) for q in quotas]
    by_remainder = sorted(range(3), key=lambda i: (counts[i] - quotas[i], i))
    for i in by_remainder[: num_envs - sum(counts)]:
        counts[i] += 1
    return counts[0], counts[1], counts[2]


@pytree_dataclass
class Opponents:
    """Team B of every game: who plays it and that player's memory. Games are ordered by slice:
    current weights, then saved copies, then fixed policies (`PPOTrainer.slices`)."""

    kind: jax.Array  # int32 [N]: 0 a network from the pool, j >= 1 fixed policy j - 1
    pool_index: jax.Array  # int32 [N]: 0 the current weights, 1 + i saved copy i
    carry: jax.Array  # float32 [current + copy games, 5, H]: the network's memory
    memories: tuple[Any, ...]  # one per fixed policy, [fixed games, ...]


@pytree_dataclass
class RunnerState:
    """Everything a run needs to go on: save it and a resumed run repeats exactly."""

    actor: Any  # group-stacked actor parameters
    critic: Any
    actor_opt: Any
    critic_opt: Any
    value_norm: ValueNorm
    env_state: Any
    start: jax.Array  # bool [N]: the next tick starts an episode (memories restart)
    actor_carry: jax.Array  # [N, 5, H]
    critic_carry: jax.Array
    opponents: Opponents
    copies: Any  # actor parameters of the newest saved copies [K, ...]
    copies_saved: jax.Array  # int32: copies saved so far
    key: jax.Array  # uint32 key data (typed keys do not serialise)
    update: jax.Array  # int32: updates done
    steps: jax.Array  # int32: game steps done


class Transition(NamedTuple):
    """One tick of team A's experience, [N, ...] (stacked time-major by the rollout)."""

    x: jax.Array  # [N, 5, D] scaled observations
    critic_x: jax.Array  # [N, 5, Dc] the critic's input
    masks: tuple[jax.Array, ...]  # head masks [N, 5, k]
    choices: jax.Array  # [N, 5, heads]
    log_prob: jax.Array  # [N, 5]
    value: jax.Array  # [N, 5] critic output (normalised units)
    reward: jax.Array  # [N, 5]
    done: jax.Array  # [N]
    start: jax.Array  # [N] this tick started an episode
    group: jax.Array  # [N, 5]
    weight: jax.Array  # [N, 5] 1 for a real roster slot
    outcome: jax.Array  # [N] 0 running, 1 A won, 2 B won, 3 draw
    margin: jax.Array  # [N] A's points minus B's at the end of a finished game
    opponent: jax.Array  # [N] kind of team B's player
    repaired: jax.Array  # [N] team A's actions the engine had to repair (masks make it 0)


class PPOTrainer:
    """`make_train`'s result: `train(key)` runs the whole configured training; `init`,
    `update` and `run` expose the pieces (all pure, jittable, vmappable over keys)."""

    def __init__(self, config: PPOConfig, frozen: Sequence[Policy] = ()) -> None:
        self.config = config = validate(config)
        self.env = marl_bgs.make(
            "tdm",
            map_id=list(config.maps),
            num_envs=config.num_envs,
            rosters=config.rosters,
            winning_score=config.winning_score,
            tick_limit=config.tick_limit,
            reward_fn=reward_function(config.reward, config.gamma),
        )
        self.actor_spec = ActorSpec(
            config.hidden, config.recurrent, config.heads, config.sharing, config.input_scale
        )
        self.actor_net = self.actor_spec.network()
        self.critic_net = Network(config.hidden, (1,), config.recurrent, output_scale=1.0)
        self.groups = num_groups(config.sharing)
        mix = config.opponents
        scripted = tuple(_scripted(n) for n in mix.scripted_teams)
        self.fixed: tuple[Policy, ...] = (*frozen, *scripted)
        share = lambda w, k: [w / k] * k if k else []  # noqa: E731
        self.fixed_weights = (*share(mix.frozen, len(frozen)), *share(mix.scripted, len(scripted)))
        empty = (0.0 if frozen else mix.frozen) + (0.0 if scripted else mix.scripted)
        self.slices = opponent_slices(
            config.num_envs, (mix.current + empty, mix.copies, sum(self.fixed_weights))
        )
        clip = optax.clip_by_global_norm(config.max_grad_norm)
        self.actor_tx = optax.chain(clip, optax.adam(config.actor_lr, eps=1e-5))
        self.critic_tx = optax.chain(clip, optax.adam(config.critic_lr, eps=1e-5))

    def __hash__(self) -> int:
        return hash((self.config, tuple(id(p) for p in self.fixed)))

    def __eq__(self, other: object) -> bool:
        """Trainers of equal configs and the same opponent policies build the same programs, so
        they share compiled code (`run` is compiled per trainer, keyed on this)."""
        return (
            isinstance(other, PPOTrainer)
            and self.config == other.config
            and len(self.fixed) == len(other.fixed)
            and all(a is b for a, b in zip(self.fixed, other.fixed, strict=True))
        )

    # ----------------------------------------------------------------------------- start
    def init(self, key: jax.Array) -> RunnerState:
        """A fresh run: new networks, optimisers and games."""
        cfg, n = self.config, self.config.num_envs
        k_actor, k_critic, k_env, k_opp, key = jax.random.split(key, 5)
        obs_size = self.env.obs_size
        actor = init_groups(self.actor_net, k_actor, self.groups, obs_size)
        critic = init_groups(self.critic_net, k_critic, self.groups, obs_size)
        _, env_state = self.env.reset(k_env)
        zeros = jnp.zeros((n, TEAM_SIZE, cfg.hidden))
        copies = jax.tree_util.tree_map(
            lambda p: jnp.broadcast_to(p, (cfg.opponents.num_copies, *p.shape)), actor
        )
        kind, pool_index = self._draw(k_opp, jnp.int32(0))
        opponents = Opponents(
            kind, pool_index, zeros[: n - self.slices[2]], self._fixed_memories(k_opp)
        )
        return RunnerState(
            actor=actor,
            critic=critic,
            actor_opt=self.actor_tx.init(actor),
            critic_opt=self.critic_tx.init(critic),
            value_norm=ValueNorm.create(),
            env_state=env_state,
            start=jnp.ones((n,), bool),
            actor_carry=zeros,
            critic_carry=zeros,
            opponents=opponents,
            copies=copies,
            copies_saved=jnp.int32(0),
            key=jax.random.key_data(key),
            update=jnp.int32(0),
            steps=jnp.int32(0),
        )

    def _draw(self, key: jax.Array, copies_saved: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Each game's team B as (kind, pool index), drawn within its slice's category: a copy
        game plays one of the saved copies uniformly (the current weights until one is saved), a
        fixed game one of the fixed policies at its weight."""
        n_current, n_copies, n_fixed = self.slices
        k_copy, k_fixed = jax.random.split(key)
        held = jnp.clip(copies_saved, 1, self.config.opponents.num_copies)
        copy = jax.random.randint(k_copy, (n_copies,), 0, held)
        copy = jnp.where(copies_saved > 0, 1 + copy, 0)
        fixed = (
            jax.random.categorical(
                k_fixed, jnp.log(jnp.asarray(self.fixed_weights)), shape=(n_fixed,)
            )
            if n_fixed
            else jnp.zeros((0,), jnp.int32)
        )
        zeros = lambda k: jnp.zeros((k,), jnp.int32)  # noqa: E731
        kind = jnp.concatenate([zeros(n_current + n_copies), 1 + fixed])
        pool_index = jnp.concatenate([zeros(n_current), copy, zeros(n_fixed)])
        return kind.astype(jnp.int32), pool_index.astype(jnp.int32)

    def _fixed_memories(self, key: jax.Array) -> tuple[Any, ...]:
        """Fresh memories of every fixed policy for the fixed games."""
        n_fixed = self.slices[2]
        return tuple(
            jax.vmap(p.init)(jax.random.split(jax.random.fold_in(key, j), n_fixed))
            for j, p in enumerate(self.fixed)
        )

    # ---------------------------------------------------------------------------- acting
    def _scale(self, x: jax.Array) -> jax.Array:
        return x * self.config.input_scale

    def _opponent_actions(
        self, state: RunnerState, inputs: TeamInputs, key: jax.Array
    ) -> tuple[jax.Array, Opponents]:
        """Team B's actions [N, 5, 3], each slice of games from its own player."""
        n_current, n_copies, n_fixed = self.slices
        n_net, opp, spec = n_current + n_copies, state.opponents, self.env.spec
        k_current, k_copies, k_fixed = jax.random.split(key, 3)
        part = lambda tree, lo, hi: jax.tree_util.tree_map(lambda a: a[lo:hi], tree)  # noqa: E731
        actions, carries, memories = [], [], []

        def network(params: Any, lo: int, hi: int, k: jax.Array, per_game: bool) -> None:
            mine = part(inputs, lo, hi)
            group = agent_groups(self.config.sharing, roster_classes(mine))[:, None]
            carry, logits = team_forward(
                self.actor_net, params, opp.carry[lo:hi], self._scale(mine.obs)[:, None],
                state.start[lo:hi, None], group, per_game,
            )  # fmt: skip
            masks = heads.head_masks(self.config.heads, mine.masks.move, mine.masks.pair)
            picked = jax.vmap(heads.sample)(
                jax.random.split(k, hi - lo), tuple(lg[:, 0] for lg in logits), masks
            )
            actions.append(heads.to_env_actions(self.config.heads, picked.choices))
            carries.append(carry)

        if n_current:  # one matrix product for every game of the current weights
            network(state.actor, 0, n_current, k_current, False)
        if n_copies:  # each copy game reads its own saved parameters
            pool = jax.tree_util.tree_map(
                lambda cur, cp: jnp.concatenate([cur[None], cp]), state.actor, state.copies
            )
            params = jax.tree_util.tree_map(lambda p: p[opp.pool_index[n_current:n_net]], pool)
            network(params, n_current, n_net, k_copies, True)
        if n_fixed:  # every fixed policy on the fixed games, selected where it plays
            mine = part(inputs, n_net, None)
            fixed_actions = jnp.zeros((n_fixed, TEAM_SIZE, len(spec.action_heads)), jnp.int32)
            for j, policy in enumerate(self.fixed):
                keys = jax.random.split(jax.random.fold_in(k_fixed, j), n_fixed)
                acted, memory = act_team(spec, policy, keys, opp.memories[j], mine)
                plays = opp.kind[n_net:, None, None] == j + 1
                fixed_actions = jnp.where(plays, acted, fixed_actions)
                memories.append(memory)
            actions.append(fixed_actions)
        carry = jnp.concatenate(carries) if carries else opp.carry
        opponents = dataclasses.replace(opp, carry=carry, memories=tuple(memories))
        return jnp.concatenate(actions), opponents

    def _critic_input(self, env_state: Any, inputs: TeamInputs) -> jax.Array:
        if self.config.centralised_critic:
            return self._scale(self.env.global_state(env_state)[:, :TEAM_SIZE])
        return self._scale(inputs.obs)

    def _tick(self, state: RunnerState, key: jax.Array) -> tuple[RunnerState, Transition]:
        """One tick of every game: both teams act, the env steps, finished games restart."""
        cfg, n = self.config, self.config.num_envs
        k_act, k_opp, k_step, k_reset, k_draw, k_mem = jax.random.split(key, 6)
        inputs_a, inputs_b = team_inputs(self.env, state.env_state)
        group = agent_groups(cfg.sharing, roster_classes(inputs_a))
        x = self._scale(inputs_a.obs)
        critic_x = self._critic_input(state.env_state, inputs_a)
        start = state.start[:, None]
        actor_carry, logits = team_forward(
            self.actor_net, state.actor, state.actor_carry, x[:, None], start, group[:, None], False
        )
        critic_carry, value = self._values(state, critic_x, group)
        masks = heads.head_masks(cfg.heads, inputs_a.masks.move, inputs_a.masks.pair)
        keys = jax.random.split(k_act, n)
        picked = jax.vmap(heads.sample)(keys, tuple(lg[:, 0] for lg in logits), masks)
        b_actions, opponents = self._opponent_actions(state, inputs_b, k_opp)
        a_actions = heads.to_env_actions(cfg.heads, picked.choices)
        actions = jnp.concatenate([a_actions, b_actions], axis=1)
        _, ended, reward, done, info = self.env.step(k_step, state.env_state, actions)
        finished = done["__all__"]
        score = ended.score
        _, env_state = self.env.reset_done(k_reset, ended)
        kind, pool_index = self._draw(k_draw, state.copies_saved)
        n_net = n - self.slices[2]
        opponents = Opponents(  # a finished game's next player and fresh memory (the GRU's
            # memory restarts through `start`)
            kind=jnp.where(finished, kind, opponents.kind),
            pool_index=jnp.where(finished, pool_index, opponents.pool_index),
            carry=opponents.carry,
            memories=where_games(finished[n_net:], self._fixed_memories(k_mem), opponents.memories),
        )
        transition = Transition(
            x=x,
            critic_x=critic_x,
            masks=masks,
            choices=picked.choices,
            log_prob=picked.log_prob,
            value=value,
            reward=self.env.stack(reward)[:, :TEAM_SIZE],
            done=finished,
            start=state.start,
            group=group,
            weight=(roster_classes(inputs_a) > 0).astype(jnp.float32),
            outcome=jnp.where(finished, info["outcome"], 0),
            margin=jnp.where(finished, score[:, 0] - score[:, 1], 0),
            opponent=state.opponents.kind,
            repaired=jnp.sum(
                (info["facts"].move_rejected | info["facts"].combat_rejected)[:, :TEAM_SIZE], axis=1
            ),
        )
        state = dataclasses.replace(
            state,
            env_state=env_state,
            start=finished,
            actor_carry=actor_carry,
            critic_carry=critic_carry,
            opponents=opponents,
        )
        return state, transition

    # --------------------------------------------------------------------------- learning
    def _values(
        self, state: RunnerState, critic_x: jax.Array, group: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """One tick of the critic on team A: (its memory [N, 5, H], values [N, 5])."""
        carry, (value,) = team_forward(
            self.critic_net, state.critic, state.critic_carry, critic_x[:, None],
            state.start[:, None], group[:, None], False,
        )  # fmt: skip
        return carry, value[:, 0, :, 0]

    def _last_value(self, state: RunnerState) -> jax.Array:
        """The critic's value of the state after a rollout (the GAE bootstrap)."""
        inputs_a, _ = team_inputs(self.env, state.env_state)
        group = agent_groups(self.config.sharing, roster_classes(inputs_a))
        return self._values(state, self._critic_input(state.env_state, inputs_a), group)[1]

    def _losses(
        self, actor: Any, critic: Any, batch: dict[str, Any]
    ) -> tuple[jax.Array, jax.Array, dict[str, jax.Array]]:
        """Actor and critic losses on game-major sequences [n, T, ...]."""
        cfg = self.config
        _, logits = team_forward(
            self.actor_net, actor, batch["actor_carry"], batch["x"], batch["start"],
            batch["group"], False,
        )  # fmt: skip
        log_prob, entropy = heads.evaluate(logits, batch["masks"], batch["choices"])
        actor_loss, stats = ppo_actor_loss(
            log_prob, batch["log_prob"], batch["advantages"], entropy, batch["weight"],
            cfg.clip, cfg.entropy_coef,
        )  # fmt: skip
        _, (value,) = team_forward(
            self.critic_net, critic, batch["critic_carry"], batch["critic_x"], batch["start"],
            batch["group"], False,
        )  # fmt: skip
        value_loss = ppo_value_loss(
            value[..., 0], batch["value"], batch["targets"], batch["weight"], cfg.clip
        )
        return actor_loss, value_loss, {**stats, "value_loss": value_loss}

    def update(self, state: RunnerState) -> tuple[RunnerState, dict[str, jax.Array]]:
        """One update: a rollout of every game, GAE, then the PPO epochs."""
        cfg, n = self.config, self.config.num_envs
        key = jax.random.wrap_key_data(state.key)
        key, k_roll, k_epochs = jax.random.split(key, 3)
        first = state
        state, traj = jax.lax.scan(self._tick, state, jax.random.split(k_roll, cfg.rollout))
        norm = state.value_norm
        denorm = norm.denormalize if cfg.value_norm else (lambda v: v)
        done = jnp.broadcast_to(traj.done[..., None], traj.reward.shape)
        advantages, returns = gae(
            traj.reward, denorm(traj.value), done, denorm(self._last_value(state)),
            cfg.gamma, cfg.gae_lambda,
        )  # fmt: skip
        if cfg.value_norm:
            norm = norm.update(returns, traj.weight, cfg.value_norm_beta)
            targets = norm.normalize(returns)
        else:
            targets = returns
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
                actor_loss, value_loss, stats = self._losses(a, c, mb)
                return actor_loss + value_loss, stats  # disjoint parameters: separate gradients

            (_, stats), grads = jax.value_and_grad(total, argnums=(0, 1), has_aux=True)(
                actor, critic
            )
            a_updates, actor_opt = self.actor_tx.update(grads[0], actor_opt, actor)
            c_updates, critic_opt = self.critic_tx.update(grads[1], critic_opt, critic)
            actor = optax.apply_updates(actor, a_updates)
            critic = optax.apply_updates(critic, c_updates)
            return (actor, critic, actor_opt, critic_opt), stats

        def epoch(carry: tuple, k: jax.Array) -> tuple[tuple, dict]:
            order = jax.random.permutation(k, n)
            shaped = jax.tree_util.tree_map(
                lambda a: a[order].reshape(cfg.minibatches, n // cfg.minibatches, *a.shape[1:]),
                batch,
            )
            return jax.lax.scan(minibatch_step, carry, shaped)

        params = (state.actor, state.critic, state.actor_opt, state.critic_opt)
        params, stats = jax.lax.scan(epoch, params, jax.random.split(k_epochs, cfg.epochs))
        actor, critic, actor_opt, critic_opt = params
        steps = state.steps + cfg.steps_per_update
        every = cfg.opponents.copy_every
        due = steps // every > state.steps // every
        slot = state.copies_saved % cfg.opponents.num_copies
        copies = jax.tree_util.tree_map(
            lambda c, p: jnp.where(due, c.at[slot].set(p), c), state.copies, actor
        )
        state = dataclasses.replace(
            state,
            actor=actor,
            critic=critic,
            actor_opt=actor_opt,
            critic_opt=critic_opt,
            value_norm=norm,
            copies=copies,
            copies_saved=state.copies_saved + due.astype(jnp.int32),
            key=jax.random.key_data(key),
            update=state.update + 1,
            steps=steps,
        )
        return state, self._metrics(traj, stats, steps)

    def _metrics(
        self, traj: Transition, stats: dict[str, jax.Array], steps: jax.Array
    ) -> dict[str, jax.Array]:
        """Scalars of one update (counts over its finished games; losses averaged)."""
        done = traj.done
        total = lambda m: jnp.sum(done & m)  # noqa: E731
        scripted_kind = 1 + len(self.fixed) - len(self.config.opponents.scripted_teams)
        vs_scripted = traj.opponent >= scripted_kind
        weight = traj.weight
        return {
            "steps": steps,
            "games": jnp.sum(done),
            "wins": total(traj.outcome == 1),
            "draws": total(traj.outcome == 3),
            "losses": total(traj.outcome == 2),
            "margin_sum": jnp.sum(jnp.where(done, traj.margin, 0)),
            "scripted_games": total(vs_scripted),
            "scripted_wins": total(vs_scripted & (traj.outcome == 1)),
            "repaired_actions": jnp.sum(traj.repaired),
            "reward_per_tick": jnp.sum(traj.reward * weight) / jnp.maximum(jnp.sum(weight), 1),
            **{k: jnp.mean(v) for k, v in stats.items()},
        }

    @partial(jax.jit, static_argnums=(0, 2))
    def run(self, state: RunnerState, num_updates: int) -> tuple[RunnerState, dict]:
        """`num_updates` more updates from `state`: (state, metrics stacked per update)."""
        return jax.lax.scan(lambda s, _: self.update(s), state, None, length=num_updates)

    def __call__(self, key: jax.Array) -> tuple[RunnerState, dict]:
        """The whole configured run from `key` (purejaxrl's `train(key)`)."""
        return self.run(self.init(key), self.config.num_updates)


def make_train(config: PPOConfig, frozen: Sequence[Policy] = ()) -> PPOTrainer:
    """`train = make_train(config); state, metrics = train(key)`: one PPO baseline. `frozen`
    holds fixed team policies for the opponent pool (any `marl_bgs.Policy`)."""
    return PPOTrainer(config, frozen)
