"""Actions: three heads (move, target, ultimate), the flat 198-way index, exact masks and repair.

Moves are given in the agent's own frame (its spawn on the left); targets are relative indices:
0 none, 1-5 own team's roster slots 0-4 (self included), 6-10 enemy roster slots 0-4. The pair mask
over (target, ultimate) is exact; the per-head masks are unions of legal pairs.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from marl_bgs.core.arena import MIRROR_MOVE, NUM_MOVES
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.constants import NUM_TARGETS, NUM_ULTIMATE, TEAM_SIZE
from marl_bgs.tdm.perception import Perception
from marl_bgs.tdm.state import GameState
from marl_bgs.tdm.tables import SAME_TEAM, lookup, observer_columns, spawn_left


@pytree_dataclass
class ActionMasks(PyTree):
    """Legal choices of every slot (a leading batch axis may be added)."""

    move: jnp.ndarray  # bool [10, 9], own frame
    pair: jnp.ndarray  # bool [10, 11, 2]: (target, ultimate), exact
    target: jnp.ndarray  # bool [10, 11]: union over ultimate
    ultimate: jnp.ndarray  # bool [10, 2]: union over target

    @property
    def flat(self) -> jnp.ndarray:
        """bool [..., 10, 198]: legal flat actions (move x pair), exact."""
        m = self.move[..., :, None, None] & self.pair[..., :, None, :, :]
        return m.reshape(*m.shape[:-3], NUM_MOVES * NUM_TARGETS * NUM_ULTIMATE)


def can_move(state: GameState) -> jnp.ndarray:
    """[10] alive, in a running game, neither stunned nor trapped."""
    u = state.units
    return u.alive & (u.stun == 0) & (u.trap == 0) & ~state.done


def action_masks(state: GameState, seen: Perception) -> ActionMasks:
    """Exact legal actions at the start of a tick (Basic or Ultimate needs range and own sight)."""
    u = state.units
    mover = can_move(state)
    actor = mover & (u.shield == 0)
    ally = jnp.asarray(SAME_TEAM)
    receivable = (u.alive & (u.shield == 0))[None, :] & seen.own_sight
    side_basic = jnp.where(lookup(C.BASIC_ON_ALLY, u.class_id)[:, None], ally, ~ally)
    side_ult = jnp.where(lookup(C.ULT_ON_ALLY, u.class_id)[:, None], ally, ~ally)
    basic_ok = (
        actor[:, None]
        & receivable
        & side_basic
        & (seen.dist <= lookup(C.BASIC_RANGE, u.class_id)[:, None])
    )
    ult_ready = actor & (u.cooldown == 0)
    targeted = lookup(C.ULT_TARGETED, u.class_id)
    ult_ok = (
        (ult_ready & targeted)[:, None]
        & receivable
        & side_ult
        & (seen.dist <= lookup(C.ULT_RANGE, u.class_id)[:, None])
    )
    ult_self = ult_ready & ~targeted & (u.class_id == C.MAGE)
    basic_rel = observer_columns(basic_ok)  # [10, 10]: in each actor's row order
    ult_rel = observer_columns(ult_ok)
    none = jnp.stack([jnp.ones(10, bool), ult_self], axis=-1)[:, None, :]
    pair = jnp.concatenate([none, jnp.stack([basic_rel, ult_rel], axis=-1)], axis=1)
    move = jnp.concatenate(
        [jnp.ones((10, 1), bool), jnp.broadcast_to(mover[:, None], (10, NUM_MOVES - 1))], axis=1
    )
    return ActionMasks(move=move, pair=pair, target=pair.any(-1), ultimate=pair.any(-2))


def _pair_names() -> tuple[tuple[str, str], ...]:
    """[target][ultimate] -> name: `no_combat`, `ultimate` (untargeted), `ally_<k>_basic`,
    `enemy_<k>_ultimate`, ... (k: roster slot within that team)."""
    names = [("no_combat", "ultimate")]
    for side in ("ally", "enemy"):
        names += [(f"{side}_{k}_basic", f"{side}_{k}_ultimate") for k in range(TEAM_SIZE)]
    return tuple(names)


# The name of every (target, ultimate) pair, in the agent's own roster terms (the LLM view's too).
COMBAT_NAMES = _pair_names()
COMBAT_PAIRS = {name: (t, u) for t, row in enumerate(COMBAT_NAMES) for u, name in enumerate(row)}


def to_world_move(move: jnp.ndarray, swap: jnp.ndarray) -> jnp.ndarray:
    """Own-frame move indices [10] -> world-frame moves (mirrored for right-spawning teams)."""
    return jnp.where(spawn_left(swap), move, jnp.asarray(MIRROR_MOVE)[move])


def repair(
    actions: jnp.ndarray, masks: ActionMasks
) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """Documented repair: an illegal move becomes stay, an illegal pair becomes (none, no).

    `actions` is int [10, 3] (own frame). Returns (accepted [10, 3], move_rejected, pair_rejected).
    Out-of-range indices count as illegal.
    """
    move, target, ult = actions[:, 0], actions[:, 1], actions[:, 2]
    in_range = (move >= 0) & (move < NUM_MOVES)
    rows = jnp.arange(10)
    move_ok = in_range & masks.move[rows, jnp.clip(move, 0, NUM_MOVES - 1)]
    pair_in = (target >= 0) & (target < NUM_TARGETS) & (ult >= 0) & (ult < NUM_ULTIMATE)
    tc, uc = jnp.clip(target, 0, NUM_TARGETS - 1), jnp.clip(ult, 0, 1)
    pair_ok = pair_in & masks.pair[rows, tc, uc]
    accepted = jnp.stack(
        [jnp.where(move_ok, move, 0), jnp.where(pair_ok, target, 0), jnp.where(pair_ok, ult, 0)],
        axis=-1,
    ).astype(jnp.int32)
    return accepted, ~move_ok, ~pair_ok


def flatten(actions: jnp.ndarray) -> jnp.ndarray:
    """Heads [..., 3] -> flat index [...] = (move * 11 + target) * 2 + ultimate."""
    return (actions[..., 0] * NUM_TARGETS + actions[..., 1]) * NUM_ULTIMATE + actions[..., 2]


def unflatten(flat: jnp.ndarray) -> jnp.ndarray:
    """Flat index [...] -> heads [..., 3]; an index outside [0, 198) gives -1 in every head, so
    it is illegal everywhere (repaired to stay, none, no) rather than leaking into a head."""
    ult = flat % NUM_ULTIMATE
    target = (flat // NUM_ULTIMATE) % NUM_TARGETS
    move = flat // (NUM_ULTIMATE * NUM_TARGETS)
    heads = jnp.stack([move, target, ult], axis=-1).astype(jnp.int32)
    outside = (flat < 0) | (flat >= NUM_MOVES * NUM_TARGETS * NUM_ULTIMATE)
    return jnp.where(outside[..., None], -1, heads)


def _uniform_choice(key: jax.Array, legal: jnp.ndarray) -> jnp.ndarray:
    """Index of a uniformly drawn True entry along the last axis (each row needs one)."""
    count = jnp.sum(legal, axis=-1, dtype=jnp.int32)
    k = jax.random.randint(key, count.shape, 0, jnp.maximum(count, 1))
    return jnp.argmax(jnp.cumsum(legal, axis=-1, dtype=jnp.int32) > k[..., None], axis=-1)


def sample_legal(key: jax.Array, masks: ActionMasks) -> jnp.ndarray:
    """A uniform legal move and, independently, a uniform legal pair: int [..., 10, 3].

    One random integer per head and agent picks among the legal choices (stay and (none, no)
    are always legal).
    """
    k_move, k_pair = jax.random.split(key)
    move = _uniform_choice(k_move, masks.move)
    pair_flat = masks.pair.reshape(*masks.pair.shape[:-2], NUM_TARGETS * NUM_ULTIMATE)
    pair = _uniform_choice(k_pair, pair_flat)
    return jnp.stack([move, pair // NUM_ULTIMATE, pair % NUM_ULTIMATE], axis=-1).astype(jnp.int32)
