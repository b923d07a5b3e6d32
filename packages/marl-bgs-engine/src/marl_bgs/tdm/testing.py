"""Helpers for hand-built Team Deathmatch tests: name slots, build one game's actions, tick."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from marl_bgs.tdm.facts import Facts
from marl_bgs.tdm.lifecycle import terminal_reward
from marl_bgs.tdm.state import GameState
from marl_bgs.tdm.tables import RELATIVE_INDEX
from marl_bgs.tdm.transition import transition


def relative_target(actor: int, slot: int) -> int:
    """The target index under which `actor` names absolute `slot` (1-5 own roster, 6-10 enemies)."""
    return int(RELATIVE_INDEX[actor, slot])


def slot_actions(
    basic: dict[int, int] | None = None,
    ult: dict[int, int | None] | None = None,
    move: dict[int, int] | None = None,
) -> jnp.ndarray:
    """One game's actions int32 [10, 3] from absolute slots, for hand-built tests.

    `basic` {actor: target slot}, `ult` {actor: target slot, or None for an untargeted Ultimate},
    `move` {actor: move index in the actor's own frame}; every other head is 0.
    """
    a = np.zeros((10, 3), np.int32)
    for s, m in (move or {}).items():
        a[s, 0] = m
    for s, t in (basic or {}).items():
        a[s, 1] = relative_target(s, t)
    for s, t in (ult or {}).items():
        a[s, 1:] = (0 if t is None else relative_target(s, t), 1)
    return jnp.asarray(a)


def tick_with_reward(
    state: GameState, actions: jnp.ndarray
) -> tuple[GameState, jnp.ndarray, Facts]:
    """One game's tick with its official reward: (next state, reward [10], facts)."""
    nxt, facts = transition(state, actions)
    return nxt, terminal_reward(state, nxt, facts), facts
