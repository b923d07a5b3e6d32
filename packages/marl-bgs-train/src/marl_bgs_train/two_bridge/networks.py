"""The paper's Two-Bridge networks (flax): the minimap encoder, MaskPPO's centralised
controller, MAPPO's shared actor and centralised critic, QMIX's agent network and mixer.

Inputs are split from the engine's flat vectors: the first 2 x 32 x 32 values are the minimap,
the rest the status vector (actors) or the status vector and coordinates (the global state).
"""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from marl_bgs.two_bridge.layout import GRID, NUM_FRIENDS
from marl_bgs.two_bridge.views import MINIMAP_SIZE

EMBED = 64  # the minimap embedding's width


def split(flat: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Flat [..., D] -> (minimap [..., 32, 32, 2] channels last, the rest [..., D - 2048])."""
    minimap = flat[..., :MINIMAP_SIZE].reshape(*flat.shape[:-1], 2, GRID, GRID)
    return jnp.moveaxis(minimap, -3, -1), flat[..., MINIMAP_SIZE:]


class MinimapEncoder(nn.Module):
    """Conv(2,16,k5,s2,p2) -> ReLU -> Conv(16,32,k3,s2,p1) -> ReLU -> Conv(32,32,k3,s2,p1) -> ReLU
    -> Linear(64), as in the paper's MAPPO and QMIX. The player-relative channel is scaled to
    [0, 1] first."""

    @nn.compact
    def __call__(self, minimap: jax.Array) -> jax.Array:
        x = minimap * jnp.asarray([1.0, 1.0 / 3.0])
        for features, kernel, pad in ((16, 5, 2), (32, 3, 1), (32, 3, 1)):
            x = nn.relu(nn.Conv(features, (kernel, kernel), strides=2, padding=pad)(x))
        return nn.Dense(EMBED)(x.reshape(*x.shape[:-3], -1))


def mlp(x: jax.Array, sizes: Sequence[int], activation: str) -> jax.Array:
    act = nn.tanh if activation == "tanh" else nn.relu
    for size in sizes:
        x = act(nn.Dense(size)(x))
    return x


class CentralController(nn.Module):
    """MaskPPO: one policy for the whole team from the shared observation: logits [5, A] (one
    branch per Marine) and a value."""

    num_actions: int
    hidden: Sequence[int] = (64, 64)

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        minimap, status = split(obs)
        x = jnp.concatenate([MinimapEncoder()(minimap), status], axis=-1)
        pi = nn.Dense(NUM_FRIENDS * self.num_actions)(mlp(x, self.hidden, "tanh"))
        value = nn.Dense(1)(mlp(x, self.hidden, "tanh"))[..., 0]
        return pi.reshape(*pi.shape[:-1], NUM_FRIENDS, self.num_actions), value


def with_ids(x: jax.Array) -> jax.Array:
    """Per-Marine inputs [..., 5, D + 5]: the shared input and a one-hot id."""
    ids = jnp.broadcast_to(jnp.eye(NUM_FRIENDS), (*x.shape[:-1], NUM_FRIENDS, NUM_FRIENDS))
    shared = jnp.broadcast_to(x[..., None, :], (*x.shape[:-1], NUM_FRIENDS, x.shape[-1]))
    return jnp.concatenate([shared, ids], axis=-1)


class SharedActor(nn.Module):
    """MAPPO's actor, shared by the Marines: the observation, the minimap embedding and a
    one-hot id -> logits [5, A]."""

    num_actions: int
    hidden: int = 128

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        minimap, status = split(obs)
        x = with_ids(jnp.concatenate([MinimapEncoder()(minimap), status], axis=-1))
        return nn.Dense(self.num_actions)(mlp(x, (self.hidden, self.hidden), "relu"))


class CentralCritic(nn.Module):
    """MAPPO's critic: the global state with its minimap embedding -> the team's value."""

    hidden: int = 128

    @nn.compact
    def __call__(self, state: jax.Array) -> jax.Array:
        minimap, rest = split(state)
        x = jnp.concatenate([MinimapEncoder()(minimap), rest], axis=-1)
        return nn.Dense(1)(mlp(x, (self.hidden, self.hidden), "relu"))[..., 0]


class AgentQ(nn.Module):
    """QMIX's shared agent network: status vector, one-hot id, minimap embedding -> Q [5, A]."""

    num_actions: int
    hidden: int = 64

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        minimap, status = split(obs)
        x = with_ids(jnp.concatenate([MinimapEncoder()(minimap), status], axis=-1))
        return nn.Dense(self.num_actions)(mlp(x, (self.hidden,), "relu"))


class Mixer(nn.Module):
    """QMIX's monotonic mixer: hypernetworks (2 layers, 64 hidden) on the global state and its
    minimap embedding give non-negative weights; the team's Q from the Marines' [..., 5]."""

    embed: int = 32
    hyper: int = 64

    @nn.compact
    def __call__(self, agent_q: jax.Array, state: jax.Array) -> jax.Array:
        minimap, rest = split(state)
        s = jnp.concatenate([MinimapEncoder()(minimap), rest], axis=-1)

        def hyper(out: int) -> jax.Array:
            return nn.Dense(out)(nn.relu(nn.Dense(self.hyper)(s)))

        w1 = jnp.abs(hyper(NUM_FRIENDS * self.embed)).reshape(
            *s.shape[:-1], NUM_FRIENDS, self.embed
        )
        b1 = nn.Dense(self.embed)(s)
        hidden = nn.elu(jnp.einsum("...a,...ae->...e", agent_q, w1) + b1)
        w2 = jnp.abs(hyper(self.embed))
        b2 = nn.Dense(1)(nn.relu(nn.Dense(self.embed)(s)))[..., 0]
        return jnp.sum(hidden * w2, axis=-1) + b2
