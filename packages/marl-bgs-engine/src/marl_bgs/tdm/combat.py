"""Combat from start-of-tick positions: auras, Basics and Ultimates, damage and healing sums.

Damage = base x Burst x the actor's Mage auras x the recipient's Warrior auras. Healing = base x
Poison's anti-heal. Everything an agent receives in a tick is summed before deaths are checked.
"""

from __future__ import annotations

import jax.numpy as jnp

from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.perception import Perception
from marl_bgs.tdm.state import GameState
from marl_bgs.tdm.tables import SAME_TEAM, absolute_target, lookup


@pytree_dataclass
class CombatResult(PyTree):
    """Combat outcome before movement (health already summed and capped)."""

    health: jnp.ndarray  # float32 [10]
    died: jnp.ndarray  # bool [10]
    damage_basic: jnp.ndarray
    damage_ultimate: jnp.ndarray
    heal_basic: jnp.ndarray
    heal_ultimate: jnp.ndarray
    mage_aura_added: jnp.ndarray
    warrior_aura_prevented: jnp.ndarray
    mage_aura_added_by: jnp.ndarray  # [Mage emitter, actor]: its aura's share of what it added
    warrior_aura_prevented_by: jnp.ndarray  # [Warrior emitter, recipient]: share it blocked
    aura_cover: jnp.ndarray  # bool [emitter, covered]: Mage and Warrior auras
    mage_auras: jnp.ndarray
    warrior_auras: jnp.ndarray
    burst_active: jnp.ndarray
    basic_used: jnp.ndarray
    ultimate_used: jnp.ndarray
    on_target: jnp.ndarray  # bool [10, 10]: actor's ability lands on recipient
    in_combat: jnp.ndarray
    regen: jnp.ndarray
    overheal: jnp.ndarray
    saved: jnp.ndarray


def aura_cover(state: GameState, dist: jnp.ndarray, emitter_class: int) -> jnp.ndarray:
    """bool [10, 10] [emitter, covered]: a living, unshielded emitter of the class covers a
    living, unshielded teammate (itself included) within the aura radius."""
    u = state.units
    live = u.alive & (u.shield == 0)
    emits = live & (u.class_id == emitter_class)
    return emits[:, None] & live[None, :] & jnp.asarray(SAME_TEAM) & (dist <= C.AURA_RADIUS)


def aura_counts(cover: jnp.ndarray) -> jnp.ndarray:
    """[10] number of auras covering each slot, capped at the stacking limit."""
    return jnp.minimum(jnp.sum(cover, axis=0), C.AURA_STACK_CAP).astype(jnp.int32)


def _per_emitter(cover: jnp.ndarray, amount: jnp.ndarray) -> jnp.ndarray:
    """[emitter, covered]: each covered slot's `amount` [10] shared equally among the auras
    covering it (an aura beyond the stacking cap shares too: no aura is preferred)."""
    n = jnp.sum(cover, axis=0)
    return cover * jnp.where(n > 0, amount / jnp.maximum(n, 1), 0.0)[None, :]


def resolve_combat(state: GameState, seen: Perception, accepted: jnp.ndarray) -> CombatResult:
    """Apply every accepted (legal) ability at once; return summed health and the facts."""
    u = state.units
    cls = u.class_id
    target, ult = accepted[:, 1], accepted[:, 2] == 1
    slot = absolute_target(target)
    on_target = (slot[:, None] == jnp.arange(10)[None, :]) & (target > 0)[:, None]
    basic = (target > 0) & ~ult
    mage_cover = aura_cover(state, seen.dist, C.MAGE)
    warrior_cover = aura_cover(state, seen.dist, C.WARRIOR)
    mage_n, warrior_n = aura_counts(mage_cover), aura_counts(warrior_cover)
    mage_mult = C.MAGE_AURA_MULT**mage_n
    warrior_mult = C.WARRIOR_AURA_MULT**warrior_n
    burst = u.burst > 0
    out_mult = jnp.where(burst, C.BURST_MULT, 1.0)
    base_basic = jnp.where(basic, lookup(C.BASIC_DAMAGE, cls), 0.0)
    base_ult = jnp.where(ult, lookup(C.ULT_DAMAGE, cls), 0.0)
    pre_aura = out_mult[:, None] * on_target  # [10, 10] before auras
    full = pre_aura * mage_mult[:, None] * warrior_mult[None, :]
    dmg_basic = base_basic[:, None] * full
    dmg_ult = base_ult[:, None] * full
    base_any = (base_basic + base_ult)[:, None]
    added = base_any * pre_aura * (mage_mult[:, None] - 1.0) * warrior_mult[None, :]
    prevented = base_any * pre_aura * mage_mult[:, None] * (1.0 - warrior_mult[None, :])
    anti = jnp.where(u.antiheal > 0, C.POISON_ANTIHEAL_MULT, 1.0)
    heal_b = jnp.where(basic, lookup(C.BASIC_HEAL, cls), 0.0)[:, None] * on_target * anti[None, :]
    heal_u = jnp.where(ult, lookup(C.ULT_HEAL, cls), 0.0)[:, None] * on_target * anti[None, :]

    taken = jnp.sum(dmg_basic + dmg_ult, axis=0)
    dealt = jnp.sum(dmg_basic + dmg_ult, axis=1)
    healing = heal_b + heal_u
    # Healing counts as combat only when the healed agent is in combat.
    hurt_now = (u.recovery > 0) | (taken > 0) | (dealt > 0)
    heals_fighter = jnp.any((healing > 0) & hurt_now[None, :], axis=1)
    healed_fighter = (jnp.sum(healing, axis=0) > 0) & hurt_now
    in_combat = u.alive & ((taken > 0) | (dealt > 0) | heals_fighter | healed_fighter)

    max_h = lookup(C.MAX_HEALTH, cls)
    regen_ok = u.alive & (u.recovery == 0) & ~in_combat
    regen = jnp.where(regen_ok, lookup(C.OOC_REGEN, cls) * max_h * anti, 0.0)
    received = jnp.sum(healing, axis=0)
    raw = u.health - taken + received + regen
    health = jnp.where(u.alive, jnp.minimum(raw, max_h), u.health)
    died = u.alive & (health <= 0.0)
    saved = u.alive & (u.health - taken <= 0.0) & ~died
    return CombatResult(
        health=jnp.where(died, 0.0, health),
        died=died,
        damage_basic=dmg_basic,
        damage_ultimate=dmg_ult,
        heal_basic=heal_b,
        heal_ultimate=heal_u,
        mage_aura_added=added,
        warrior_aura_prevented=prevented,
        mage_aura_added_by=_per_emitter(mage_cover, jnp.sum(added, axis=1)),
        warrior_aura_prevented_by=_per_emitter(warrior_cover, jnp.sum(prevented, axis=0)),
        aura_cover=mage_cover | warrior_cover,
        mage_auras=mage_n,
        warrior_auras=warrior_n,
        burst_active=burst & (dealt > 0),
        basic_used=basic,
        ultimate_used=ult,
        on_target=on_target,
        in_combat=in_combat,
        regen=regen,
        overheal=jnp.where(u.alive, jnp.maximum(raw - max_h, 0.0), 0.0),
        saved=saved,
    )
