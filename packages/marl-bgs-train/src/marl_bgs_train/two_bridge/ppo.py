"""MaskPPO (a centralised controller: one policy over the joint action, its log-probability the
sum of the five branches') and MAPPO (a shared actor acting per Marine, a centralised critic on
the global state, one clipped ratio per Marine), on Two-Bridge's shared team reward."""

from __future__ import annotations

from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
import optax

from marl_bgs import Policy
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.core.team import restart_finished
from marl_bgs.two_bridge import layout as lay
from marl_bgs_train.losses import gae, ppo_actor_loss, ppo_value_loss
from marl_bgs_train.masking import masked_logits
from marl_bgs_train.two_bridge import networks as nets
from marl_bgs_train.two_bridge.common import RewardScale, greedy_policy, make_env, optimizer
from marl_bgs_train.two_bridge.config import BridgeConfig


@pytree_dataclass
class PPOState(PyTree):
    params: Any
    opt_state: Any
    game: Any  # the batched games being played
    scale: RewardScale
    key: jax.Array
    steps: jax.Array  # environment steps so far


class Batch(NamedTuple):
    obs: jax.Array  # [T, n, D]
    world: jax.Array  # [T, n, S]
    mask: jax.Array  # [T, n, 5, A]
    action: jax.Array  # [T, n, 5]
    log_prob: jax.Array  # [T, n, 5]
    value: jax.Array  # [T, n]
    reward: jax.Array  # [T, n] (standardised when configured)
    done: jax.Array  # [T, n]
    outcome: jax.Array  # [T, n]: the outcome code of games that ended at that step (0 else)


def _log_probs(logits: jax.Array, mask: jax.Array, action: jax.Array) -> tuple[jax.Array, ...]:
    logp = jax.nn.log_softmax(masked_logits(logits, mask))
    chosen = jnp.take_along_axis(logp, action[..., None], axis=-1)[..., 0]
    entropy = -jnp.sum(jnp.where(mask, jnp.exp(logp) * logp, 0.0), axis=-1)
    return chosen, entropy


class PPOTrainer:
    """`trainer.init(key)`, then `trainer.update(state)`: one rollout and its epochs."""

    def __init__(self, config: BridgeConfig) -> None:
        self.config = config
        self.env = make_env(config, config.num_envs)
        actions = self.env.spec.action_heads[0]
        self.central = config.algo == "maskppo"
        if self.central:
            self.net = nets.CentralController(actions)
        else:
            self.actor, self.critic = nets.SharedActor(actions), nets.CentralCritic()
        self.tx = optimizer(config)
        self._prepare_jit, self._learn_jit = jax.jit(self._prepare), jax.jit(self._learn)

    def logits(self, params: Any, obs: jax.Array) -> jax.Array:
        """Logits [..., 5, A] from shared observations [..., D] (the actor alone)."""
        if self.central:
            return self.heads(params, obs, obs)[0]
        return cast(jax.Array, self.actor.apply(params["actor"], obs))

    def heads(self, params: Any, obs: jax.Array, world: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Logits [..., 5, A] and values [...] in one pass: MaskPPO's controller computes both
        from one trunk; MAPPO's critic reads the global state `world`."""
        if self.central:
            return cast(tuple[jax.Array, jax.Array], self.net.apply(params, obs))
        return self.logits(params, obs), cast(jax.Array, self.critic.apply(params["critic"], world))

    def init(self, key: jax.Array) -> PPOState:
        k_net, k_env, key = jax.random.split(key, 3)
        _, game = self.env.reset(k_env)
        obs = self.env.observe(game)[:, 0]
        if self.central:
            params = self.net.init(k_net, obs)
        else:
            k_a, k_c = jax.random.split(k_net)
            world = self.env.global_state(game)[:, 0]
            params = {"actor": self.actor.init(k_a, obs), "critic": self.critic.init(k_c, world)}
        return PPOState(params, self.tx.init(params), game, RewardScale.create(self.env.num_envs),
                        key, jnp.int32(0))  # fmt: skip

    def greedy(self, params: Any) -> Policy:
        """The deterministic policy of `params` (the paper's evaluation)."""
        return greedy_policy(self.config.algo, lambda obs: self.logits(params, obs))

    def _rollout(self, state: PPOState) -> tuple[PPOState, Batch, jax.Array]:
        env, cfg = self.env, self.config

        def step(carry: tuple, x: None) -> tuple:
            game, scale, key = carry
            key, k_act, k_reset = jax.random.split(key, 3)
            obs, world = env.observe(game)[:, 0], env.global_state(game)[:, 0]
            mask = env.action_masks(game).flat
            logits, value = self.heads(state.params, obs, world)
            logits = masked_logits(logits, mask)
            action = jax.random.categorical(k_act, logits)
            log_prob = _log_probs(logits, mask, action)[0]
            _, nxt, reward, done, info = env.step(k_act, game, action[..., None])
            r, d = reward[env.agents[0]], done["__all__"]
            scale = scale.update(r, d, cfg.gamma)
            r = scale.scale(r) if cfg.reward_standardization else r
            nxt, _ = restart_finished(env, k_reset, nxt)
            row = Batch(obs, world, mask, action, log_prob, value, r, d, info["outcome"])
            return (nxt, scale, key), row

        (game, scale, key), batch = jax.lax.scan(
            step, (state.game, state.scale, state.key), None, length=cfg.rollout
        )
        obs, world = env.observe(game)[:, 0], env.global_state(game)[:, 0]
        last = self.heads(state.params, obs, world)[1]
        steps = state.steps + cfg.rollout * env.num_envs
        return state.replace(game=game, scale=scale, key=key, steps=steps), batch, last

    def _loss(self, params: Any, mb: Batch, adv: jax.Array, ret: jax.Array) -> tuple:
        cfg = self.config
        logits, value = self.heads(params, mb.obs, mb.world)
        log_prob, entropy = _log_probs(logits, mb.mask, mb.action)
        if self.central:  # one ratio for the joint action
            ones = jnp.ones_like(adv)
            actor, stats = ppo_actor_loss(
                log_prob.sum(-1), mb.log_prob.sum(-1), adv, entropy.sum(-1), ones, cfg.clip,
                cfg.entropy_coef,
            )  # fmt: skip
        else:  # one ratio per Marine, the team's advantage for each
            wide = jnp.broadcast_to(adv[:, None], log_prob.shape)
            ones = jnp.ones_like(wide)
            actor, stats = ppo_actor_loss(
                log_prob, mb.log_prob, wide, entropy, ones, cfg.clip, cfg.entropy_coef
            )
        critic = ppo_value_loss(value, mb.value, ret, jnp.ones_like(ret), cfg.clip)
        return actor + cfg.value_coef * critic, {**stats, "value_loss": critic}

    def _prepare(self, state: PPOState) -> tuple[PPOState, tuple, dict[str, jax.Array]]:
        """A rollout, its advantages and returns, and the epochs' shuffled minibatches
        [epochs * count, minibatch, ...]."""
        cfg = self.config
        state, batch, last = self._rollout(state)
        adv, ret = gae(batch.reward, batch.value, batch.done, last, cfg.gamma, cfg.gae_lambda)
        flat = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), (batch, adv, ret))
        size = flat[1].shape[0]
        key, k_epochs = jax.random.split(state.key)
        order = jax.vmap(lambda k: jax.random.permutation(k, size))(
            jax.random.split(k_epochs, cfg.epochs)
        ).reshape(-1, cfg.minibatch)
        minibatches = jax.tree.map(lambda x: x[order], flat)
        ended = batch.outcome > lay.RUNNING
        wins = ended & ((batch.outcome == lay.NAVIGATION_WIN) | (batch.outcome == lay.COMBAT_WIN))
        stats = {"episodes": ended.sum(), "win_rate": wins.sum() / jnp.maximum(ended.sum(), 1)}
        return state.replace(key=key), minibatches, stats

    def _learn(self, params: Any, opt_state: Any, mb: tuple) -> tuple[Any, Any, dict]:
        grads, stats = jax.grad(self._loss, has_aux=True)(params, *mb)
        updates, opt_state = self.tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, stats

    def update(self, state: PPOState) -> tuple[PPOState, dict[str, jax.Array]]:
        """One rollout of every game, then `epochs` passes over it in minibatches.

        The minibatch loop runs on the host, one compiled step per minibatch: XLA's CPU backend
        computes convolution gradients inside a compiled loop about 80 times slower."""
        state, minibatches, stats = self._prepare_jit(state)
        params, opt_state = state.params, state.opt_state
        history = []
        for i in range(minibatches[1].shape[0]):
            mb = jax.tree.map(lambda x, i=i: x[i], minibatches)
            params, opt_state, learned = self._learn_jit(params, opt_state, mb)
            history.append(learned)
        metrics = {k: jnp.mean(jnp.stack([h[k] for h in history])) for k in history[0]}
        return state.replace(params=params, opt_state=opt_state), {**metrics, **stats}
