"""The `Mode` protocol: what a game mode writes, and nothing the generic env already owns.

A mode is a hashable object (its static settings: shapes, sight rules, message width) with pure
functions over ONE game's state. The generic `BatchedEnv` batches them, draws start states from a
`StartPool`, restarts finished games and builds spaces, dicts and team inputs for every mode alike.

State contract: a mode's state is a pytree whose leaves have fixed shapes, with three scalar
fields the env reads: `tick` (ticks resolved), `outcome` (int32, 0 while the game runs) and
`episode` (how many games this batch slot has finished).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.errors import ConfigError


@dataclass(frozen=True)
class ModeSpec:
    """The static shape of a mode: agents, teams, action heads, observation and state sizes."""

    id: str  # versioned, e.g. "tdm-v2"; bumped when what agents see or how the game plays changes
    agents: tuple[str, ...]  # agent names in slot order
    teams: tuple[tuple[int, ...], ...]  # agent slots of each team, in roster order
    action_heads: tuple[int, ...]  # choices per head; an agent's action is one int per head
    obs_size: int  # length of an agent's flat observation
    state_size: int  # length of an agent's critic-only global state vector
    message_dim: int = 0  # width of a teammate message (0: no messages)
    head_names: tuple[str, ...] = ()  # a name per action head, for error messages
    dense_reward: bool = False  # the official reward is paid every tick (else only on the last)

    @property
    def num_agents(self) -> int:
        return len(self.agents)

    @property
    def team_size(self) -> int:
        """Slots per team (every team has the same number)."""
        return len(self.teams[0])

    def team_slice(self, tree: Any, team: int, axis: int = 1) -> Any:
        """The leaves of `tree` cut to `team`'s agents along `axis` (default: after the batch)."""
        if team not in range(len(self.teams)):
            raise ConfigError(f"team: expected one of {list(range(len(self.teams)))}, got {team!r}")
        slots = self.teams[team]
        if slots == tuple(range(slots[0], slots[0] + len(slots))):  # contiguous: a plain slice
            cut = slice(slots[0], slots[0] + len(slots))
            return jax.tree.map(lambda a: a[(slice(None),) * axis + (cut,)], tree)
        return jax.tree.map(lambda a: jnp.take(a, np.asarray(slots), axis=axis), tree)

    def team_spec(self, team: int) -> ModeSpec:
        """The spec as one team sees itself: its agents only (e.g. for an opponent-folded env)."""
        slots = self.teams[team]
        agents = tuple(self.agents[i] for i in slots)
        return dataclasses.replace(self, agents=agents, teams=(tuple(range(len(slots))),))

    @property
    def num_actions(self) -> int:
        """Size of the flattened action (the product of the heads)."""
        return int(np.prod(self.action_heads))


class OneHead:
    """The action helpers of a mode with one action head whose masks hold `flat` bool
    [..., choices] (Two-Bridge, a duel): uniform legal sampling and flat <-> heads."""

    def sample_legal(self, key: jax.Array, masks: Any) -> jax.Array:
        """Uniform random legal actions int [..., 1] from masks `flat` [..., choices]."""
        logits = jnp.where(masks.flat, 0.0, -jnp.inf)
        return jax.random.categorical(key, logits)[..., None].astype(jnp.int32)

    def flatten_actions(self, actions: jax.Array) -> jax.Array:
        """Heads [..., 1] -> flat indices [...]."""
        return actions[..., 0]

    def unflatten_actions(self, flat: jax.Array) -> jax.Array:
        """Flat indices [...] -> heads [..., 1]."""
        return flat[..., None]


@runtime_checkable
class Mode(Protocol):
    """A game mode: `spec` plus pure single-game functions (`jit`, `vmap` and `scan` safe)."""

    @property
    def spec(self) -> ModeSpec:
        """The mode's static description (an implementation may make it a plain attribute)."""
        ...

    def start(self, key: jax.Array, state: Any) -> Any:
        """A start state drawn from the pool, finished with the mode's own randomness (spawn
        points drawn per episode); a mode whose pool entries are complete returns it as is."""
        ...

    def transition(self, state: Any, actions: jax.Array, messages: jax.Array | None) -> Any:
        """One tick: actions int [agents, heads] in each agent's own frame -> (state, facts).

        Illegal choices get the mode's documented repair; a finished game does not change."""
        ...

    def reward(self, state: Any, next_state: Any, facts: Any) -> jax.Array:
        """The official reward [agents] of one tick (the default `reward_fn` of the env)."""
        ...

    def truncated(self, state: Any) -> jax.Array:
        """bool []: the game ended by the clock rather than by its win condition."""
        ...

    def observe(self, state: Any, full: bool = False) -> jax.Array:
        """Flat observations float32 [agents, obs_size]; `full`: the critic-only global state."""
        ...

    def observe_agents(self, state: Any, full: bool = False) -> tuple[jax.Array, ...]:
        """The rows of `observe`, one float32 [obs_size] per agent in slot order, each built on
        its own (the per-agent observation dict is made of them, with no slicing copies)."""
        ...

    def views(self, state: Any) -> Any:
        """Structured views [agents, ...] (the flat observation's source)."""
        ...

    def masks(self, state: Any) -> Any:
        """Legal actions [agents, ...]; `.flat` is bool [agents, num_actions]."""
        ...

    def sample_legal(self, key: jax.Array, masks: Any) -> jax.Array:
        """Uniform random legal actions int [..., heads] from masks [..., ...]."""
        ...

    def flatten_actions(self, actions: jax.Array) -> jax.Array:
        """Heads [..., heads] -> flat indices [...]."""
        ...

    def unflatten_actions(self, flat: jax.Array) -> jax.Array:
        """Flat indices [...] -> heads [..., heads]."""
        ...

    def observation_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) float32 [obs_size] of the flat observation."""
        ...

    def agent_facts(self, facts: Any) -> dict[str, jax.Array]:
        """One tick's facts summed per agent: {name: float32 [..., agents]} (for `info`)."""
        ...

    def tick_invariants(self, state: Any, next_state: Any, facts: Any) -> dict[str, jax.Array]:
        """Named bool checks of one tick that must hold (the conformance suite asserts them)."""
        ...
