"""The axes metric columns are indexed by: slots, pairs of slots, abilities, statuses, teams.

Slots are named by team and roster slot (`a0`-`a4`, `b0`-`b4`; team A is the results'
`system_a`), pairs as `source>recipient` (`a0>b3`). A slot's class is read from the game's
roster (`roster_a`, `roster_b`), so a column keeps its meaning whatever the slot order.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from marl_bgs.core.arena import MOVE_NAMES
from marl_bgs.tdm.constants import NUM_SLOTS, TEAM_SIZE
from marl_bgs.tdm.tables import SAME_TEAM

SLOT_NAMES = tuple(f"{t}{i}" for t in "ab" for i in range(TEAM_SIZE))
MATES = SAME_TEAM & ~np.eye(NUM_SLOTS, dtype=bool)  # [10, 10]: two different teammates


@dataclasses.dataclass(frozen=True)
class Axis:
    """One axis of a metric family: its name (as the schema shows it) and its labels."""

    name: str
    labels: tuple[str, ...]


def _pairs(keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    src, dst = np.nonzero(keep)
    return src, dst


ENEMY_SRC, ENEMY_DST = _pairs(~SAME_TEAM)  # 50 ordered (source, recipient) pairs across teams
ALLY_SRC, ALLY_DST = _pairs(SAME_TEAM)  # 50 ordered pairs within a team, self included
MATE_SRC, MATE_DST = _pairs(MATES & (np.arange(NUM_SLOTS)[:, None] < np.arange(NUM_SLOTS)))


def _pair_axis(name: str, src: np.ndarray, dst: np.ndarray) -> Axis:
    return Axis(
        name, tuple(f"{SLOT_NAMES[i]}>{SLOT_NAMES[j]}" for i, j in zip(src, dst, strict=True))
    )


SLOT = Axis("slot", SLOT_NAMES)
TEAM = Axis("team", ("a", "b"))
ENEMY_PAIR = _pair_axis("source>enemy", ENEMY_SRC, ENEMY_DST)
ALLY_PAIR = _pair_axis("source>ally", ALLY_SRC, ALLY_DST)
MATE_PAIR = _pair_axis("teammates", MATE_SRC, MATE_DST)
ABILITY = Axis("ability", ("basic", "ultimate"))
HARM = Axis(
    "harmful effect",
    ("stunned", "trapped", "slowed_charge", "slowed_hunter", "slowed_poison", "antiheal"),
)
APPLIED = Axis("status applied", ("stun", "trap", "slow_charge", "slow_hunter", "poison"))
STATUS = Axis(
    "status",
    ("stun", "trap", "slow_charge", "slow_hunter", "slow_poison", "antiheal", "freedom",
     "burst", "shield"),
)  # fmt: skip
MOVE = Axis("move (own frame)", MOVE_NAMES)
AURAS = Axis("auras", ("one", "two"))
SETUP = Axis(
    "kill setup",
    ("two_or_more_helpers", "warrior_ultimate", "warrior_basic", "hunter_slowed", "trapped",
     "poisoned"),
)  # fmt: skip
COORDINATION = Axis("tick kind", ("two_or_more_attackers", "focus_fire"))
RESULT = Axis("result", ("points", "kills", "deaths", "ticks_ahead"))


def enemy_pairs(x: jnp.ndarray) -> jnp.ndarray:
    """[n, 10, 10, ...] -> [n, 50, ...] on the source>enemy pairs."""
    return x[:, ENEMY_SRC, ENEMY_DST]


def ally_pairs(x: jnp.ndarray) -> jnp.ndarray:
    """[n, 10, 10, ...] -> [n, 50, ...] on the source>ally pairs (self included)."""
    return x[:, ALLY_SRC, ALLY_DST]


def mate_pairs(x: jnp.ndarray) -> jnp.ndarray:
    """[n, 10, 10, ...] -> [n, 20, ...] on the unordered teammate pairs."""
    return x[:, MATE_SRC, MATE_DST]


def per_team(x: jnp.ndarray) -> jnp.ndarray:
    """[n, 10, ...] -> [n, 2, ...]: summed over each team's slots."""
    return x.reshape(x.shape[0], 2, TEAM_SIZE, *x.shape[2:]).sum(axis=2)
