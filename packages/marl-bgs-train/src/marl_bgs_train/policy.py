"""A trained actor as a team policy: the network reads only its team's permitted inputs.

`ActorSpec` is the static description of an actor (sizes, heads, sharing, input scale);
`team_forward` runs it for one team in many games; `network_policy` wraps parameters as a
`marl_bgs.Policy` (so any System slot, evaluation, opponent pool or the tournament can use it),
with memory (GRU state, first-tick flag) started fresh each game.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp

from marl_bgs import Policy, TeamInputs
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs_train import heads
from marl_bgs_train.features import network_input
from marl_bgs_train.networks import Network, Sharing, agent_groups, apply_team


@dataclass(frozen=True)
class ActorSpec:
    """What it takes to run an actor's parameters."""

    hidden: int
    recurrent: bool
    heads: heads.HeadKind
    sharing: Sharing
    input_scale: float
    q_values: bool = False  # outputs are action values (PQN): norm layers, greedy play
    free_paths: int = 0  # directions of the free-path feature in the input

    def network(self) -> Network:
        """The flax module (its outputs are the head logits, or action values)."""
        if self.q_values:
            sizes = heads.logit_sizes(self.heads)
            return Network(self.hidden, sizes, self.recurrent, output_scale=1.0, norm=True)
        return Network(self.hidden, heads.logit_sizes(self.heads), self.recurrent)


def roster_classes(inputs: TeamInputs) -> jax.Array:
    """Class ids of a team's own roster slots [n, 5] (public, read from agent 0's view)."""
    return inputs.views.public.roster_class[:, 0, :TEAM_SIZE].astype(jnp.int32)


def team_forward(
    net: Network,
    params: Any,
    carry: jax.Array,
    x: jax.Array,
    start: jax.Array,
    group: jax.Array,
    per_game: bool,
) -> tuple[jax.Array, tuple[jax.Array, ...]]:
    """Many games of one team: carry [n, 5, H], x [n, T, 5, D], start [n, T], group [n, T, 5] ->
    (carry, outputs [n, T, 5, k]). `per_game`: `params` has a leading game axis."""
    run = lambda p, c, xi, s, g: apply_team(net, p, c, xi, s, g)  # noqa: E731
    return jax.vmap(run, in_axes=(0 if per_game else None, 0, 0, 0, 0))(
        params, carry, x, start, group
    )


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class ActorMemory:
    """One game's actor memory: the GRU state [5, H] and whether the next tick is the first."""

    carry: jax.Array
    first: jax.Array


def network_policy(spec: ActorSpec, params: Any, name: str, greedy: bool = False) -> Policy:
    """`params` (group-stacked actor parameters) as a team policy: samples legal actions (or the
    most likely legal ones when `greedy`; always for action values) from the team's
    observations and masks only."""
    net = spec.network()
    greedy = greedy or spec.q_values

    def init(key: jax.Array) -> ActorMemory:
        del key
        return ActorMemory(jnp.zeros((TEAM_SIZE, spec.hidden)), jnp.bool_(True))

    def act(keys: jax.Array, memory: ActorMemory, inputs: TeamInputs) -> tuple[jax.Array, Any]:
        group = agent_groups(spec.sharing, roster_classes(inputs))
        x = network_input(inputs.obs, spec.input_scale, spec.free_paths)[:, None]
        carry, logits = team_forward(
            net, params, memory.carry, x, memory.first[:, None], group[:, None], per_game=False
        )
        masks = heads.head_masks(spec.heads, inputs.masks.move, inputs.masks.pair)
        logits = tuple(lg[:, 0] for lg in logits)
        picked = jax.vmap(lambda k, lg, m: heads.sample(k, lg, m, greedy))(keys, logits, masks)
        actions = heads.to_env_actions(spec.heads, picked.choices)
        return actions, ActorMemory(carry, jnp.zeros_like(memory.first))

    return Policy(name=name, act=act, init=init)
