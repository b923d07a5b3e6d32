"""Team B's players from the opponent mix: the learner's current weights, its saved copies, a
frozen pool and scripted teams.

The games are split once into slices in proportion to the mix (`opponent_slices`), and each
slice's next game draws its player within the category (which saved copy, which fixed policy).
Each player runs only on its own slice: one shared matrix product for the current weights,
per-game parameters only for the copy games, each fixed policy only on the fixed games.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import jax
import jax.numpy as jnp

from marl_bgs import Policy, TeamInputs
from marl_bgs.core.env import BatchedEnv
from marl_bgs.core.pytree import PyTree, pytree_dataclass, where_games
from marl_bgs.core.team import act_team
from marl_bgs_train.players import named_policy


@cache
def _scripted(name: str) -> Policy:
    """One policy object per scripted team, so equal configs share compiled programs."""
    return named_policy(name, "opponents.scripted_teams")


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


def mix_of(
    mix: Any, frozen: Sequence[Policy], num_envs: int, self_play: bool
) -> tuple[tuple[Policy, ...], tuple[float, ...], tuple[int, int, int]]:
    """The opponent mix `mix` (config `opponents`) with the `frozen` pool over `num_envs` games:
    (the fixed policies, each one's weight, the slices). An empty category's weight goes to the
    current weights; without a team B to play (`self_play` false) every slice is empty."""
    scripted = tuple(_scripted(n) for n in mix.scripted_teams)
    share = lambda w, k: [w / k] * k if k else []  # noqa: E731
    weights = (*share(mix.frozen, len(frozen)), *share(mix.scripted, len(scripted)))
    empty = (0.0 if frozen else mix.frozen) + (0.0 if scripted else mix.scripted)
    slices = (
        opponent_slices(num_envs, (mix.current + empty, mix.copies, sum(weights)))
        if self_play
        else (0, 0, 0)
    )
    return (*frozen, *scripted), weights, slices


@pytree_dataclass
class Opponents(PyTree):
    """Team B of every game: who plays it and that player's memory. Games are ordered by slice:
    current weights, then saved copies, then fixed policies (`OpponentPlayers.slices`)."""

    kind: jax.Array  # int32 [N]: 0 a network from the pool, j >= 1 fixed policy j - 1
    pool_index: jax.Array  # int32 [N]: 0 the current weights, 1 + i saved copy i
    carry: jax.Array  # float32 [current + copy games, A, H]: the network's memory
    memories: tuple[Any, ...]  # one per fixed policy, [fixed games, ...]


class OpponentPlayers:
    """Team B's players for a learner (`SelfPlay` sets the attributes below and says how its
    network acts, `_network_actions`)."""

    env: BatchedEnv
    team_size: int
    self_play: bool  # two teams to control (else the env plays team B)
    fixed: tuple[Policy, ...]  # the frozen pool, then the scripted teams
    fixed_weights: tuple[float, ...]  # each fixed policy's share of the mix
    slices: tuple[int, int, int]  # games of the current weights, saved copies, fixed policies
    _config: Any
    split_games: Callable[..., Any]  # a tree's games axis over the devices
    # a network's (memory, actions) for one team of some games (`SelfPlay._network_actions`)
    _network_actions: Callable[..., tuple[jax.Array, jax.Array]]

    def opponents_init(self, key: jax.Array, hidden: int) -> Opponents:
        """Team B's players for the first games."""
        if not self.self_play:  # the env plays team B: nothing to draw
            zeros = jnp.zeros((self._config.num_envs,), jnp.int32)
            return Opponents(zeros, zeros, jnp.zeros((0, self.team_size, hidden)), ())
        kind, pool_index = self.split_games(self._draw(key, jnp.int32(0)))
        carry = jnp.zeros((self._config.num_envs - self.slices[2], self.team_size, hidden))
        return Opponents(kind, pool_index, carry, self._fixed_memories(key))

    def _draw(self, key: jax.Array, copies_saved: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Each game's team B as (kind, pool index), drawn within its slice's category: a copy
        game plays one of the saved copies uniformly (the current weights until one is saved), a
        fixed game one of the fixed policies at its weight."""
        n_current, n_copies, n_fixed = self.slices
        k_copy, k_fixed = jax.random.split(key)
        held = jnp.clip(copies_saved, 1, self._config.opponents.num_copies)
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

    def _opponent_actions(
        self, params: Any, copies: Any, opp: Opponents, start: jax.Array,
        inputs: TeamInputs | None, key: jax.Array, features: Any,
    ) -> tuple[jax.Array, Opponents]:  # fmt: skip
        """Team B's actions [N, A, heads], each slice of games from its own player: `params` the
        learner's current weights, `copies` its saved copies [K, ...], `start` [N] the games
        whose tick starts an episode, `inputs` team B's (None: the env plays team B) and
        `features` its feature memory."""
        if inputs is None:  # the env plays team B: no actions to add
            heads = len(self.env.spec.action_heads)
            return jnp.zeros((opp.kind.shape[0], 0, heads), jnp.int32), opp
        n_current, n_copies, n_fixed = self.slices
        n_net, spec = n_current + n_copies, self.env.spec
        k_current, k_copies, k_fixed = jax.random.split(key, 3)
        part = lambda tree, lo, hi: jax.tree_util.tree_map(lambda a: a[lo:hi], tree)  # noqa: E731
        actions, carries, memories = [], [], []

        def network(weights: Any, lo: int, hi: int, k: jax.Array, per_game: bool) -> None:
            carry, acted = self._network_actions(
                weights, opp.carry[lo:hi], part(inputs, lo, hi), start[lo:hi], k, per_game,
                part(features, lo, hi),
            )  # fmt: skip
            actions.append(acted)
            carries.append(carry)

        if n_current:  # one matrix product for every game of the current weights
            network(params, 0, n_current, k_current, False)
        if n_copies:  # each copy game reads its own saved parameters
            pool = jax.tree_util.tree_map(
                lambda cur, cp: jnp.concatenate([cur[None], cp]), params, copies
            )
            weights = jax.tree_util.tree_map(lambda p: p[opp.pool_index[n_current:n_net]], pool)
            network(weights, n_current, n_net, k_copies, True)
        if n_fixed:  # every fixed policy on the fixed games, selected where it plays
            mine = part(inputs, n_net, None)
            fixed_actions = jnp.zeros((n_fixed, self.team_size, len(spec.action_heads)), jnp.int32)
            for j, policy in enumerate(self.fixed):
                keys = jax.random.split(jax.random.fold_in(k_fixed, j), n_fixed)
                acted, memory = act_team(spec, policy, keys, opp.memories[j], mine)
                plays = opp.kind[n_net:, None, None] == j + 1
                fixed_actions = jnp.where(plays, acted, fixed_actions)
                memories.append(memory)
            actions.append(fixed_actions)
        carry = jnp.concatenate(carries) if carries else opp.carry
        # With no fixed games (a small batch), each fixed policy keeps its empty memory.
        kept = tuple(memories) if n_fixed else opp.memories
        opponents = dataclasses.replace(opp, carry=carry, memories=kept)
        return jnp.concatenate(actions), opponents

    def _redraw(
        self, opponents: Opponents, finished: jax.Array, copies_saved: jax.Array, key: jax.Array
    ) -> Opponents:
        """A finished game's next player and fresh memory (the network's memory restarts
        through the games' `start` flags)."""
        if not self.self_play:
            return opponents
        k_draw, k_mem = jax.random.split(key)
        kind, pool_index = self._draw(k_draw, copies_saved)
        n_net = self._config.num_envs - self.slices[2]
        return Opponents(
            kind=jnp.where(finished, kind, opponents.kind),
            pool_index=jnp.where(finished, pool_index, opponents.pool_index),
            carry=opponents.carry,
            memories=where_games(finished[n_net:], self._fixed_memories(k_mem), opponents.memories),
        )

    def _save_copy(
        self, copies: Any, saved: jax.Array, params: Any, before: jax.Array, after: jax.Array
    ) -> tuple[Any, jax.Array]:
        """Save `params` into the copies' ring buffer when the game steps from `before` to
        `after` pass a multiple of `copy_every`: (copies, copies saved so far)."""
        mix = self._config.opponents
        due = after // mix.copy_every > before // mix.copy_every
        slot = saved % mix.num_copies
        copies = jax.tree_util.tree_map(
            lambda c, p: jnp.where(due, c.at[slot].set(p), c), copies, params
        )
        return copies, saved + due.astype(jnp.int32)
