"""Statuses: what each ability applies, how effects age, and the speed they leave an agent."""

from __future__ import annotations

import jax.numpy as jnp

from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.combat import CombatResult
from marl_bgs.tdm.state import Units
from marl_bgs.tdm.tables import lookup


@pytree_dataclass
class Applied(PyTree):
    """Which actor applied which status to which recipient this tick ([actor, recipient])."""

    stunned: jnp.ndarray
    trapped: jnp.ndarray
    slowed_charge: jnp.ndarray
    slowed_hunter: jnp.ndarray
    poisoned: jnp.ndarray
    freed: jnp.ndarray


def applied_statuses(units: Units, combat: CombatResult) -> Applied:
    """Statuses the accepted abilities apply (a Basic or an Ultimate that landed)."""
    cls = units.class_id[:, None]
    ult = combat.ultimate_used[:, None] & combat.on_target
    basic = combat.basic_used[:, None] & combat.on_target
    charge = ult & (cls == C.WARRIOR)
    poison = ult & (cls == C.ROGUE)
    return Applied(
        stunned=charge | poison,
        trapped=ult & (cls == C.HUNTER),
        slowed_charge=charge,
        slowed_hunter=basic & (cls == C.HUNTER),
        poisoned=poison,
        freed=basic & (cls == C.PRIEST),
    )


def _age(current: jnp.ndarray, new: jnp.ndarray, duration: int | jnp.ndarray) -> jnp.ndarray:
    """Existing effects age once; a new application sets (refreshes) the full duration."""
    return jnp.where(new, duration, jnp.maximum(current - 1, 0)).astype(jnp.int32)


def advance_statuses(units: Units, combat: CombatResult, applied: Applied) -> Units:
    """Statuses and cooldowns of the next state (before deaths and respawns are applied)."""
    got = lambda m: jnp.any(m, axis=0)  # noqa: E731 - recipient received it from anyone
    new_trap = got(applied.trapped)
    broken = trap_broken(units, combat)
    trap = jnp.where(new_trap, C.TRAP_TICKS, jnp.where(broken, 0, jnp.maximum(units.trap - 1, 0)))
    ult_self = combat.ultimate_used
    mage_burst = ult_self & (units.class_id == C.MAGE)
    cooldown = jnp.where(
        ult_self, lookup(C.ULT_COOLDOWN, units.class_id), jnp.maximum(units.cooldown - 1, 0)
    )
    # Charge and Poison each stun for their own duration; the longer one wins when both land.
    charged, poisoned = got(applied.slowed_charge), got(applied.poisoned)
    stun_ticks = jnp.maximum(
        jnp.where(charged, C.CHARGE_STUN_TICKS, 0), jnp.where(poisoned, C.POISON_STUN_TICKS, 0)
    )
    delay = lookup(C.OOC_DELAY, units.class_id)
    recovery = jnp.where(combat.in_combat, delay, jnp.maximum(units.recovery - 1, 0))
    return units.replace(
        health=combat.health,
        stun=_age(units.stun, got(applied.stunned), stun_ticks),
        trap=trap.astype(jnp.int32),
        slow_charge=_age(units.slow_charge, got(applied.slowed_charge), C.CHARGE_SLOW_TICKS),
        slow_hunter=_age(units.slow_hunter, got(applied.slowed_hunter), C.HUNTER_SLOW_TICKS),
        slow_poison=_age(units.slow_poison, got(applied.poisoned), C.POISON_SLOW_TICKS),
        antiheal=_age(units.antiheal, got(applied.poisoned), C.POISON_ANTIHEAL_TICKS),
        freedom=_age(units.freedom, got(applied.freed), C.FREEDOM_TICKS),
        burst=_age(units.burst, mage_burst, C.BURST_TICKS),
        cooldown=cooldown.astype(jnp.int32),
        recovery=recovery.astype(jnp.int32),
    )


def trap_breakers(units: Units, combat: CombatResult) -> jnp.ndarray:
    """bool [attacker, trapped]: the attacker's positive damage landed on an existing Trap."""
    return (combat.damage_basic + combat.damage_ultimate > 0) & (units.trap > 0)[None, :]


def trap_broken(units: Units, combat: CombatResult) -> jnp.ndarray:
    """[10] an existing Trap broken by positive damage this tick."""
    return jnp.any(trap_breakers(units, combat), axis=0)


def speed_fraction(units: Units) -> jnp.ndarray:
    """[10] share of base speed left by slows (multiplied, floored; Freedom raises the floor)."""
    frac = (
        jnp.where(units.slow_charge > 0, C.CHARGE_SLOW_MULT, 1.0)
        * jnp.where(units.slow_hunter > 0, C.HUNTER_SLOW_MULT, 1.0)
        * jnp.where(units.slow_poison > 0, C.POISON_SLOW_MULT, 1.0)
    )
    floor = jnp.where(units.freedom > 0, C.FREEDOM_FLOOR, C.MIN_SPEED_FRACTION)
    return jnp.maximum(frac, floor)


def movement_speed(units: Units, shield_speed: jnp.ndarray) -> jnp.ndarray:
    """[10] distance an agent may move this tick (shielded agents move at the shield speed)."""
    base = lookup(C.SPEED, units.class_id) * speed_fraction(units)
    return jnp.where(units.shield > 0, shield_speed, base)
