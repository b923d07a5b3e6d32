"""A trained actor as a team policy: the network reads only its team's permitted inputs.

`ActorSpec` is the static description of an actor (its mode and game section, sizes, heads,
sharing, input scale); `team_forward` runs it for one team in many games; `network_policy` wraps
parameters as a `marl_bgs.Policy` (so any System slot, evaluation, opponent pool or the
tournament can use it), with memory (GRU state, first-tick flag) started fresh each game.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

import jax
import jax.numpy as jnp

from marl_bgs import Policy, TeamInputs
from marl_bgs_train import heads
from marl_bgs_train.modes import TrainParts, parts
from marl_bgs_train.networks import Network, Sharing, agent_groups, apply_team


@dataclass(frozen=True)
class ActorSpec:
    """What it takes to run an actor's parameters."""

    mode: str
    game: Any  # the mode's game section (its extra inputs read it)
    team_size: int
    hidden: int
    recurrent: bool
    heads: str  # a head kind of the mode
    sharing: Sharing
    input_scale: float
    q_values: bool = False  # outputs are action values (PQN): norm layers, greedy play

    @property
    def parts(self) -> TrainParts:
        """The mode's training parts."""
        return parts(self.mode)

    @property
    def action_heads(self) -> heads.ActionHeads:
        """The actor's heads."""
        return self.parts.action_heads(self.heads, self.game)

    def network(self) -> Network:
        """The flax module (its outputs are the head logits, or action values)."""
        sizes, encoder = self.action_heads.sizes, self.encoder()
        if self.q_values:
            return Network(
                self.hidden, sizes, self.recurrent, output_scale=1.0, norm=True, encoder=encoder
            )
        return Network(self.hidden, sizes, self.recurrent, encoder=encoder)

    def encoder(self) -> Any:
        """A new instance of the mode's input encoder (None without one)."""
        make = self.parts.encoder
        return None if make is None else make()

    def inputs(self, obs: jax.Array, memory: Any) -> jax.Array:
        """A network's input [n, A, D + extra] from flat observations [n, A, D]: the
        observation times `input_scale`, then the mode's added features (none at width 0),
        which may read the games' feature `memory` (`remember`)."""
        scaled = obs * self.input_scale
        if self.parts.feature_width(self.game) == 0:
            return scaled
        added = self.parts.features(obs, self.game, memory)
        return jnp.concatenate([scaled, added], axis=-1)

    def feature_memory(self) -> Any:
        """One game's empty feature memory for one team."""
        return self.parts.feature_memory(self.game)

    def remember(self, memory: Any, start: jax.Array, obs: jax.Array) -> Any:
        """The games' feature memory [n, ...] worked out where `start` [n] (their first tick)."""
        return self.parts.remember(self.game, memory, start, obs)

    def groups(self, inputs: TeamInputs) -> jax.Array:
        """Each own agent's parameter group [n, A]."""
        return agent_groups(self.sharing, self.parts.slots(inputs))


def team_forward(
    net: Network,
    params: Any,
    carry: jax.Array,
    x: jax.Array,
    start: jax.Array,
    group: jax.Array,
    per_game: bool,
) -> tuple[jax.Array, tuple[jax.Array, ...]]:
    """Many games of one team: carry [n, A, H], x [n, T, A, D], start [n, T], group [n, T, A]
    -> (carry, outputs [n, T, A, k]). `per_game`: `params` has a leading game axis."""
    run = lambda p, c, xi, s, g: apply_team(net, p, c, xi, s, g)  # noqa: E731
    return jax.vmap(run, in_axes=(0 if per_game else None, 0, 0, 0, 0))(
        params, carry, x, start, group
    )


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class ActorMemory:
    """One game's actor memory: the GRU state [A, H], whether the next tick is the first, and
    what its added features keep of the game (`ActorSpec.remember`)."""

    carry: jax.Array
    first: jax.Array
    features: Any = ()


@cache
def network_act(
    spec: ActorSpec, greedy: bool = False
) -> tuple[Callable[..., tuple[jax.Array, Any]], Callable[[Any, jax.Array], ActorMemory]]:
    """The actor of `spec` as a parametric team policy, `(act(params, keys, memory, inputs),
    init(params, key))`: it samples legal actions (or the most likely legal ones when `greedy`;
    always for action values) from the team's observations and masks only. One pair of functions
    per spec, so every checkpoint of a run shares one compiled evaluation program (its weights are
    data)."""
    net = spec.network()
    greedy = greedy or spec.q_values
    action_heads = spec.action_heads

    def init(params: Any, key: jax.Array) -> ActorMemory:
        del params, key
        return ActorMemory(
            jnp.zeros((spec.team_size, spec.hidden)), jnp.bool_(True), spec.feature_memory()
        )

    def act(
        params: Any, keys: jax.Array, memory: ActorMemory, inputs: TeamInputs
    ) -> tuple[jax.Array, Any]:
        group = spec.groups(inputs)
        kept = spec.remember(memory.features, memory.first, inputs.obs)
        x = spec.inputs(inputs.obs, kept)[:, None]
        carry, logits = team_forward(
            net, params, memory.carry, x, memory.first[:, None], group[:, None], per_game=False
        )
        masks = action_heads.masks(inputs.masks)
        logits = tuple(lg[:, 0] for lg in logits)
        picked = jax.vmap(lambda k, lg, m: heads.sample(k, lg, m, greedy))(keys, logits, masks)
        after = ActorMemory(carry, jnp.zeros_like(memory.first), kept)
        return action_heads.to_env(picked.choices), after

    return act, init


def network_policy(spec: ActorSpec, params: Any, name: str, greedy: bool = False) -> Policy:
    """`params` (group-stacked actor parameters) as a team policy (`network_act` with these
    weights)."""
    act, init = network_act(spec, greedy)
    return Policy(name=name, act=partial(act, params), init=partial(init, params))
