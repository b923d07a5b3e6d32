"""Recurrent QMIX (paper Table S10) as `make_train(config) -> train`.

Each agent's recurrent Q-network (shared with PQN-VDN: `QLearner`) values its flat actions;
a mixing network turns the agents' values of their chosen actions into the team's value, with
weights from hypernetworks of team A's critic-only global state kept non-negative, so the team
value rises with every agent's value (monotonic: the agents' own greedy choices are the team's).
Experience goes into a replay of whole `rollout`-tick sequences (with the memory each started
from and the tick after it); each update plays one rollout, stores it, and takes
`gradient_steps` steps on sampled sequences towards one-step double-Q targets from target copies
of both networks, copied every `target_every` updates. Exploration is epsilon-greedy over legal
actions (1.0 -> 0.05 over 2M game steps).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, cast

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from jax.sharding import Mesh

from marl_bgs import Policy
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs_train.config import QMIXConfig, validate
from marl_bgs_train.hypers import Hyper, descend
from marl_bgs_train.losses import RewardScale
from marl_bgs_train.networks import init_groups
from marl_bgs_train.opponents import Opponents
from marl_bgs_train.policy import team_forward
from marl_bgs_train.qnet import QLearner


class Mixer(nn.Module):
    """QMIX's mixing network: team value [...] from agent values [..., A] and the team state
    [..., Ds]; its weights on the agent values are absolute values, so it is monotonic in each."""

    embed: int
    hidden: int
    agents: int
    encoder: nn.Module | None = None  # the mode's input encoder, on the state first

    @nn.compact
    def __call__(self, values: jax.Array, state: jax.Array) -> jax.Array:
        if self.encoder is not None:
            state = self.encoder(state, agents=False)
        hyper = lambda n, name: nn.Sequential(  # noqa: E731
            [nn.Dense(self.hidden, name=f"{name}_0"), nn.relu, nn.Dense(n, name=f"{name}_1")]
        )
        w1 = jnp.abs(hyper(self.agents * self.embed, "w1")(state))
        w1 = w1.reshape(*state.shape[:-1], self.agents, self.embed)
        b1 = nn.Dense(self.embed, name="b1")(state)
        h = nn.elu(jnp.einsum("...a,...ae->...e", values, w1) + b1)
        w2 = jnp.abs(hyper(self.embed, "w2")(state))
        b2 = hyper(1, "b2")(state)[..., 0]
        return jnp.sum(h * w2, axis=-1) + b2


@pytree_dataclass
class Replay(PyTree):
    """A ring buffer of `capacity` sequences of T ticks; arrays of T + 1 ticks hold the tick after
    each sequence too (for the bootstrap)."""

    shared: jax.Array  # [S, T + 1, W] the inputs' leading values every agent sees alike
    x: jax.Array  # [S, T + 1, A, D - W] the rest of each agent's scaled inputs
    mask: jax.Array  # [S, T + 1, A, flat] legal actions
    team_state: jax.Array  # [S, T + 1, Ds]
    group: jax.Array  # [S, T + 1, A]
    weight: jax.Array  # [S, T + 1, A]
    start: jax.Array  # [S, T + 1] the tick starts an episode (memory restarts)
    carry: jax.Array  # [S, A, H] the memory the sequence started from
    choice: jax.Array  # [S, T, A]
    reward: jax.Array  # [S, T] the team's reward (mean of its agents')
    done: jax.Array  # [S, T]
    size: jax.Array  # int32: sequences stored
    next: jax.Array  # int32: where the next sequence goes

    def inputs(self) -> jax.Array:
        """Each agent's whole input [S, T + 1, A, D]: the shared values, then its own."""
        shared = jnp.broadcast_to(
            self.shared[..., None, :], (*self.x.shape[:-1], self.shared.shape[-1])
        )
        return jnp.concatenate([shared, self.x], axis=-1)


@pytree_dataclass
class QMIXState(PyTree):
    """Everything a QMIX run needs to go on (the replay included)."""

    actor: Any  # the group-stacked Q-network parameters (they act for team A)
    mixer: Any
    target_actor: Any
    target_mixer: Any
    opt: Any
    env_state: Any
    start: jax.Array
    carry: jax.Array  # [N, A, H]
    opponents: Opponents
    copies: Any
    copies_saved: jax.Array
    replay: Replay
    key: jax.Array
    curriculum: Any  # where new games start (the mode's `Starts`: a curriculum's stage)
    teammate: Any  # the frozen teammate's memory per game (() without one)
    features: Any  # each team's feature memory per game (`TrainParts.remember`; () without)
    reward_scale: RewardScale  # running statistics of returns (`reward_norm`)
    update: jax.Array
    steps: jax.Array


class QMIXTrainer(QLearner):
    """`make_train`'s result for a `QMIXConfig`: `train(key)`, `init`, `update`, `run`."""

    keeps_state = True

    def __init__(
        self, config: QMIXConfig, frozen: Sequence[Policy] = (), teammate: Policy | None = None,
        mesh: Mesh | None = None,
    ) -> None:  # fmt: skip
        super().__init__(validate(config), frozen, teammate, mesh)
        self.config = config
        self.mixer_net = Mixer(
            config.mixer_embed, config.hypernet_hidden, self.team_size, self.actor_spec.encoder()
        )
        self.capacity = config.replay_rows // config.rollout
        self._check_split("replay_rows", self.capacity, "sequences of the replay")
        self._check_split("batch_sequences", config.batch_sequences, "sequences")
        self.tx = optax.chain(
            optax.clip_by_global_norm(config.max_grad_norm),
            optax.scale_by_adam(),  # at `lr`
        )

    def init(self, key: jax.Array, hyper: Hyper | None = None) -> QMIXState:
        """A fresh run: new networks (targets equal), optimiser, empty replay and new games
        (the first from `hyper`'s layouts, default the run's)."""
        cfg, n, t = self.config, self.config.num_envs, self.config.rollout
        k_net, k_mix, key = jax.random.split(key, 3)
        actor = init_groups(self.q_net, k_net, self.groups, self.input_size)
        state_size = self.env.spec.state_size
        mixer = self.mixer_net.init(k_mix, jnp.zeros((self.team_size,)), jnp.zeros((state_size,)))
        s, flat, a = self.capacity, self.actor_spec.action_heads.sizes[0], self.team_size
        zeros = lambda *shape, dtype=jnp.float32: jnp.zeros(shape, dtype)  # noqa: E731
        width = self.parts.shared_inputs
        replay = Replay(
            shared=zeros(s, t + 1, width),
            x=zeros(s, t + 1, a, self.input_size - width),
            mask=zeros(s, t + 1, a, flat, dtype=bool),
            team_state=zeros(s, t + 1, state_size),
            group=zeros(s, t + 1, a, dtype=jnp.int32),
            weight=zeros(s, t + 1, a),
            start=zeros(s, t + 1, dtype=bool),
            carry=zeros(s, a, cfg.hidden),
            choice=zeros(s, t, a, dtype=jnp.int32),
            reward=zeros(s, t),
            done=zeros(s, t, dtype=bool),
            size=jnp.int32(0),
            next=jnp.int32(0),
        )
        return QMIXState(
            mixer=mixer,
            target_actor=actor,
            target_mixer=mixer,
            opt=self.tx.init((actor, mixer)),
            carry=self.split_games(jnp.zeros((n, self.team_size, cfg.hidden))),
            replay=self._split_rows(replay),
            **self._fresh(key, actor, hyper),
        )

    def _store(self, replay: Replay, first: QMIXState, after: QMIXState, traj: Any) -> Replay:
        """The rollout's sequences (game-major, with the tick after them) into the ring."""
        inputs, _ = self._inputs(after.env_state)
        features, _ = self._feature_memory(after, inputs, None)
        (mask,) = self.actor_spec.action_heads.masks(inputs.masks)
        last = {
            "x": self._scale(inputs.obs, features),
            "mask": mask,
            "team_state": self._team_state(after.env_state),
            "group": self._groups(inputs),
            "weight": self._weight(inputs),
            "start": after.start,
        }
        games = lambda a: jnp.swapaxes(a, 0, 1)  # noqa: E731
        extended = {k: games(jnp.concatenate([getattr(traj, k), v[None]])) for k, v in last.items()}
        width = self.parts.shared_inputs  # kept once: the first agent's
        extended |= {"shared": extended["x"][..., 0, :width], "x": extended["x"][..., width:]}
        weight = traj.weight
        team_reward = jnp.sum(traj.reward * weight, -1) / jnp.maximum(jnp.sum(weight, -1), 1.0)
        rows = (replay.next + jnp.arange(self.config.num_envs)) % self.capacity
        put = lambda buffer, value: buffer.at[rows].set(value)  # noqa: E731
        return self._split_rows(
            Replay(
                **{k: put(getattr(replay, k), v) for k, v in extended.items()},
                carry=put(replay.carry, first.carry),
                choice=put(replay.choice, games(traj.choice)),
                reward=put(replay.reward, games(team_reward)),
                done=put(replay.done, games(traj.done)),
                size=jnp.minimum(replay.size + self.config.num_envs, self.capacity),
                next=(replay.next + self.config.num_envs) % self.capacity,
            )
        )

    def _split_rows(self, replay: Replay) -> Replay:
        """A replay (or a sampled batch) with its sequences split over the mesh's devices."""
        return dataclasses.replace(
            replay,
            **{
                f.name: self.split_games(getattr(replay, f.name))
                for f in dataclasses.fields(replay)
                if f.name not in ("size", "next")  # counters, not rows
            },
        )

    def _loss(self, params: tuple[Any, Any], target: tuple[Any, Any], batch: Replay) -> Any:
        """Half the mean squared TD error of the mixed team value of the chosen actions against
        r + gamma * (team value of the target networks at the online networks' best legal
        actions of the next tick), cut where a game ended: (loss, mean team value)."""
        (actor, mixer), (target_actor, target_mixer) = params, target
        x = batch.inputs()
        forward = lambda p: team_forward(  # noqa: E731
            self.q_net, p, batch.carry, x, batch.start, batch.group, False
        )[1][0]
        values, target_values = forward(actor), forward(target_actor)  # [B, T + 1, A, flat]
        weight = batch.weight
        chosen = jnp.take_along_axis(values[:, :-1], batch.choice[..., None], axis=-1)[..., 0]
        # `Module.apply` is typed for `mutable=` too ((out, variables)); without it, it is `out`.
        mix = lambda p, v, s: cast(jax.Array, self.mixer_net.apply(p, v, s))  # noqa: E731
        team = mix(mixer, chosen * weight[:, :-1], batch.team_state[:, :-1])
        best = jnp.argmax(jnp.where(batch.mask[:, 1:], values[:, 1:], -jnp.inf), axis=-1)
        following = jnp.take_along_axis(target_values[:, 1:], best[..., None], axis=-1)[..., 0]
        next_team = mix(target_mixer, following * weight[:, 1:], batch.team_state[:, 1:])
        live = 1.0 - batch.done.astype(jnp.float32)
        targets = jax.lax.stop_gradient(batch.reward + self.config.gamma * live * next_team)
        return 0.5 * jnp.mean(jnp.square(team - targets)), jnp.mean(team)

    def update(
        self, state: QMIXState, hyper: Hyper | None = None
    ) -> tuple[QMIXState, dict[str, jax.Array]]:
        """One update: a rollout into the replay, then gradient steps on sampled sequences
        (once the replay holds `learning_starts` game steps), then the target copy if due
        (`hyper`: the sweepable settings as data, default the config's)."""
        cfg, hyper = self.config, self.hyper() if hyper is None else hyper
        first = state
        state, traj, key, k_learn = self._rollout(state, hyper)
        replay = self._store(state.replay, first, state, traj)
        target = (state.target_actor, state.target_mixer)

        def step(carry: tuple, k: jax.Array) -> tuple[tuple, dict]:
            params, opt = carry
            rows = jax.random.randint(k, (cfg.batch_sequences,), 0, replay.size)
            batch = self._split_rows(jax.tree.map(lambda a: a[rows] if a.ndim else a, replay))
            (loss, team), grads = jax.value_and_grad(self._loss, has_aux=True)(
                params, target, batch
            )
            params, opt = descend(self.tx, hyper["lr"], grads, opt, params)
            return (params, opt), {"loss": loss, "q_team": team}

        start = ((state.actor, state.mixer), state.opt)
        with jax.named_scope("learning"):  # as `_epochs` names it
            keys = jax.random.split(k_learn, cfg.gradient_steps)
            learned, stats = jax.lax.scan(step, start, keys)
        learning = replay.size * cfg.rollout >= cfg.learning_starts
        (actor, mixer), opt = jax.tree_util.tree_map(
            lambda new, old: jnp.where(learning, new, old), learned, start
        )
        copy_now = (state.update + 1) % cfg.target_every == 0
        keep = lambda new, old: jax.tree_util.tree_map(  # noqa: E731
            lambda a, b: jnp.where(copy_now, a, b), new, old
        )
        state, games = self._finish(
            state, traj, key, actor, mixer=mixer, target_actor=keep(actor, state.target_actor),
            target_mixer=keep(mixer, state.target_mixer), opt=opt, replay=replay,
        )  # fmt: skip
        metrics = {
            **games,
            **{k: jnp.where(learning, jnp.mean(v), 0.0) for k, v in stats.items()},
            "epsilon": self.epsilon(first.steps),
            "replay_rows": replay.size * cfg.rollout,
        }
        return state, metrics
