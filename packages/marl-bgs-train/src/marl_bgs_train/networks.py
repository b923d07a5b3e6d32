"""The baselines' networks (flax): an MLP trunk, an optional GRU, and output heads.

Every network maps one team of one game: `carry [A, H]`, inputs `[T, A, D]` and episode starts
`[T]` (the GRU's memory restarts where a game restarts) to `(carry, outputs)`, each output
`[T, A, size]` (A: the team's slots). Parameters carry a leading group axis for weight sharing:
one group for all agents (`all`), one per class (`class`, indexed by class id - 1) or one per
roster slot (`none`);
`apply_team` runs each agent on its group's parameters. Vmap it over games with the parameters
shared (the learner) or per game (an opponent drawn from a pool of saved copies).
"""

from __future__ import annotations

from typing import Any, Literal, cast

import flax.linen as nn
import jax
import jax.numpy as jnp

Sharing = Literal["all", "class", "none"]
SHARING: tuple[Sharing, ...] = ("all", "class", "none")


def num_groups(sharing: Sharing, team_size: int, num_classes: int) -> int:
    """Parameter groups per network: 1 (`all`), one per class or one per roster slot."""
    return {"all": 1, "class": num_classes, "none": team_size}[sharing]


def agent_groups(sharing: Sharing, roster_class: jax.Array) -> jax.Array:
    """Each own agent's parameter group int32 [..., A] from its team's class ids [..., A]
    (from 1; 0 for an empty slot, which reads group 0 and is masked out of every loss)."""
    if sharing == "all":
        return jnp.zeros(roster_class.shape, jnp.int32)
    if sharing == "class":
        return jnp.maximum(roster_class.astype(jnp.int32) - 1, 0)
    slots = jnp.arange(roster_class.shape[-1], dtype=jnp.int32)
    return jnp.broadcast_to(slots, roster_class.shape)


def scaled_init(gain: float) -> nn.initializers.Initializer:
    """Truncated-normal weights with variance gain^2 / fan_in: the scale of an orthogonal init of
    that gain, without its QR decomposition. (Orthogonal init calls LAPACK, which on CPU runs on
    OpenBLAS's own threads; inside XLA's thread pools that deadlocked now and then on 2 cores.)"""
    return nn.initializers.variance_scaling(gain * gain, "fan_in", "truncated_normal")


class _Weights(nn.Module):
    """One dense layer's parameters (as `nn.Dense` names them), returned as arrays."""

    features: int
    bias: bool

    @nn.compact
    def __call__(self, fan_in: int) -> tuple[jax.Array, jax.Array]:
        kernel = self.param("kernel", scaled_init(1.0), (fan_in, self.features))
        if not self.bias:
            return kernel, jnp.zeros((self.features,), kernel.dtype)
        return kernel, self.param("bias", nn.initializers.zeros_init(), (self.features,))


class _GRUWeights(nn.Module):
    """The GRU cell's parameters under flax's `GRUCell` names, fused: (input kernel [D, 3H],
    input bias [3H]), (memory kernel [H, 3H], memory bias [3H], zero but for `hn`)."""

    hidden: int

    @nn.compact
    def __call__(self, fan_in: int) -> tuple[tuple[jax.Array, jax.Array], ...]:
        gates = ("r", "z", "n")
        inputs = [_Weights(self.hidden, True, name=f"i{g}")(fan_in) for g in gates]
        memory = [_Weights(self.hidden, g == "n", name=f"h{g}")(self.hidden) for g in gates]
        return _fused(inputs), _fused(memory)


def _fused(parts: list[tuple[jax.Array, jax.Array]]) -> tuple[jax.Array, jax.Array]:
    """Kernels and biases of the three gates side by side: ([fan_in, 3H], [3H])."""
    kernels, biases = zip(*parts, strict=True)
    return jnp.concatenate(kernels, axis=-1), jnp.concatenate(biases, axis=-1)


class _SequenceGRU(nn.Module):
    """A GRU over a whole sequence whose memory restarts from zeros where `reset` is set.

    The same cell as `flax.linen.GRUCell` (same parameter names: `ir`, `iz`, `in` on the input
    with biases, `hr`, `hz` without and `hn` with a bias on the memory), computed the fast way:
    the three input projections of every tick at once before the scan, and one fused matrix
    product of the memory per tick inside it (flax's cell does six products per tick)."""

    hidden: int

    @nn.compact
    def __call__(
        self, carry: jax.Array, x: jax.Array, reset: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """carry [..., H], x [T, ..., D], reset [T, ...] -> (carry, outputs [T, ..., H])."""
        h = self.hidden
        cell = _GRUWeights(h, name="GRUCell_0")
        (w_in, b_in), (w_mem, b_mem) = cell(x.shape[-1])
        projected = x @ w_in + b_in  # [T, ..., 3H]: r, z, n

        def tick(
            memory: jax.Array, step: tuple[jax.Array, jax.Array]
        ) -> tuple[jax.Array, jax.Array]:
            xp, restart = step
            memory = jnp.where(restart[..., None], 0.0, memory)
            mp = memory @ w_mem + b_mem
            r = nn.sigmoid(xp[..., :h] + mp[..., :h])
            z = nn.sigmoid(xp[..., h : 2 * h] + mp[..., h : 2 * h])
            n = jnp.tanh(xp[..., 2 * h :] + r * mp[..., 2 * h :])
            memory = (1.0 - z) * n + z * memory
            return memory, memory

        return jax.lax.scan(tick, carry, (projected, reset))


class Network(nn.Module):
    """Dense-relu x2, [GRU], Dense-relu, then one linear output per entry of `outputs`; with
    `norm`, a LayerNorm before each hidden relu (PQN's normalisation layers); with `encoder`
    (a mode's, `TrainParts.encoder`), the input [T, A, D] passes through it first, called with
    `agents=True` (axis -2 is the team's agents)."""

    hidden: int
    outputs: tuple[int, ...]
    recurrent: bool
    output_scale: float = 0.01
    norm: bool = False
    encoder: nn.Module | None = None

    @nn.compact
    def __call__(
        self, carry: jax.Array, x: jax.Array, reset: jax.Array
    ) -> tuple[jax.Array, tuple[jax.Array, ...]]:
        dense = lambda n, s: nn.Dense(n, kernel_init=scaled_init(s))  # noqa: E731

        def layer(h: jax.Array) -> jax.Array:
            h = dense(self.hidden, 2**0.5)(h)
            return nn.relu(nn.LayerNorm()(h) if self.norm else h)

        if self.encoder is not None:
            x = self.encoder(x, agents=True)
        h = layer(layer(x))
        if self.recurrent:
            # the name an earlier `nn.scan` of the cell gave it: saved runs keep loading
            carry, h = _SequenceGRU(self.hidden, name="Scan_ResetGRU_0")(carry, h, reset)
        h = layer(h)
        return carry, tuple(dense(n, self.output_scale)(h) for n in self.outputs)


def init_groups(net: Network, key: jax.Array, groups: int, input_size: int) -> Any:
    """Parameters for `groups` groups, stacked on a leading axis (one agent's shapes: the
    parameters are the same for any number of agents)."""
    carry = jnp.zeros((1, net.hidden))
    x = jnp.zeros((1, 1, input_size))
    reset = jnp.zeros((1, 1), bool)
    init = jax.jit(jax.vmap(lambda k: net.init(k, carry, x, reset)))
    return init(jax.random.split(key, groups))


def apply_team(
    net: Network,
    params: Any,
    carry: jax.Array,
    x: jax.Array,
    start: jax.Array,
    group: jax.Array,
) -> tuple[jax.Array, tuple[jax.Array, ...]]:
    """One game's team: carry [A, H], x [T, A, D], start [T] (episode starts), group [T, A] ->
    (carry [A, H], outputs [T, A, size] each), every agent on its group's parameters. A group
    changes only where an episode starts (a new roster), where the memory restarts too, so each
    group's own memory chain is exact from there on."""
    reset = jnp.broadcast_to(start[:, None], x.shape[:2])
    groups = jax.tree_util.tree_leaves(params)[0].shape[0]

    def run(p: Any) -> tuple[jax.Array, tuple[jax.Array, ...]]:
        # `Module.apply` is typed for `mutable=` too ((out, variables)); without it, it is `out`.
        return cast(tuple[jax.Array, tuple[jax.Array, ...]], net.apply(p, carry, x, reset))

    if groups == 1:
        return run(jax.tree_util.tree_map(lambda p: p[0], params))
    carries, outs = jax.vmap(run)(params)
    last = carries[group[-1], jnp.arange(group.shape[-1])]  # [G, A, H] -> [A, H]
    index = group[None, :, :, None]  # [1, T, A, 1] into [G, T, A, k]
    return last, tuple(jnp.take_along_axis(o, index, axis=0)[0] for o in outs)
