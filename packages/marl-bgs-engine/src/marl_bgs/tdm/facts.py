"""What happened in one transition, for metrics, replays and clients (they never recompute rules).

Matrices are [actor, recipient] over absolute slots (0-4 team A, 5-9 team B).
"""

from __future__ import annotations

import jax.numpy as jnp

from marl_bgs.core.pytree import PyTree, pytree_dataclass


@pytree_dataclass
class Facts(PyTree):
    """The facts of one tick of one game (a leading batch axis may be added)."""

    requested: jnp.ndarray  # int32 [10, 3]: actions as given (own frame)
    accepted: jnp.ndarray  # int32 [10, 3]: after repair (own frame)
    move_rejected: jnp.ndarray  # bool [10]
    combat_rejected: jnp.ndarray  # bool [10]
    basic_used: jnp.ndarray  # bool [10]
    ultimate_used: jnp.ndarray  # bool [10]
    damage_basic: jnp.ndarray  # float32 [10, 10]: damage dealt by Basics, after multipliers
    damage_ultimate: jnp.ndarray  # float32 [10, 10]: damage dealt by Ultimates
    heal_basic: jnp.ndarray  # float32 [10, 10]: healing given (after anti-heal, before the cap)
    heal_ultimate: jnp.ndarray  # float32 [10, 10]
    mage_aura_added: jnp.ndarray  # float32 [10, 10]: damage the actor's Mage auras added
    warrior_aura_prevented: (
        jnp.ndarray
    )  # float32 [10, 10]: damage the victim's Warrior auras blocked
    mage_aura_added_by: jnp.ndarray  # float32 [10, 10]: [Mage, actor] that aura's equal share
    warrior_aura_prevented_by: jnp.ndarray  # float32 [10, 10]: [Warrior, recipient] its share
    aura_cover: jnp.ndarray  # bool [10, 10]: [emitter, covered] a Mage or Warrior aura covers
    mage_auras: jnp.ndarray  # int32 [10]: Mage auras covering each slot (capped at 2)
    warrior_auras: jnp.ndarray  # int32 [10]: Warrior auras covering each slot (capped at 2)
    burst_active: jnp.ndarray  # bool [10]: Burst multiplied this slot's damage
    stunned: jnp.ndarray  # bool [10, 10]: Charge or Poison stun applied
    trapped: jnp.ndarray  # bool [10, 10]
    slowed_charge: jnp.ndarray  # bool [10, 10]
    slowed_hunter: jnp.ndarray  # bool [10, 10]
    poisoned: jnp.ndarray  # bool [10, 10]: slow, stun and anti-heal of Crippling Poison
    freed: jnp.ndarray  # bool [10, 10]: Blessing of Freedom granted
    trap_broken: jnp.ndarray  # bool [10]: an existing Trap was broken by damage
    trap_broken_by: jnp.ndarray  # bool [10, 10]: [attacker, trapped] its damage hit the Trap
    regen: jnp.ndarray  # float32 [10]: out-of-combat regeneration received
    overheal: jnp.ndarray  # float32 [10]: healing and regeneration lost to the health cap
    saved: jnp.ndarray  # bool [10]: would have died without this tick's healing
    in_combat: jnp.ndarray  # bool [10]: took part in combat this tick
    died: jnp.ndarray  # bool [10]
    death_points: jnp.ndarray  # int32 [10]: points the death gave the other team (1 or 2)
    red_zone_death: jnp.ndarray  # bool [10]: died in its own Red Zone (the 2-point death)
    in_red_zone: jnp.ndarray  # bool [10]: alive in its own Red Zone at the start of the tick
    charge_from: jnp.ndarray  # float32 [10, 2]: position before the Charge relocation
    charge_to: jnp.ndarray  # float32 [10, 2]: position after it
    moved: jnp.ndarray  # float32 [10]: distance of the ordinary move
    shield_cleared: jnp.ndarray  # bool [10]: displaced to end clear of bodies as a shield ended
    respawned: jnp.ndarray  # bool [10]
    points: jnp.ndarray  # int32 [2]: points scored by team A and team B this tick

    @property
    def damage(self) -> jnp.ndarray:
        """All damage [..., 10, 10]."""
        return self.damage_basic + self.damage_ultimate

    @property
    def healing(self) -> jnp.ndarray:
        """All ability healing [..., 10, 10]."""
        return self.heal_basic + self.heal_ultimate

    @property
    def excess_share(self) -> jnp.ndarray:
        """[..., 10] per recipient: the share of its ability healing lost to the health cap. The
        cap's loss is charged to ability healing before regeneration, so useful healing is never
        overstated; every heal a recipient got (Basic or Ultimate, from any healer) loses the
        same share."""
        received = jnp.sum(self.healing, axis=-2)  # [..., 10] per recipient
        lost = jnp.minimum(self.overheal, received)
        return jnp.where(received > 0, lost / jnp.where(received > 0, received, 1.0), 0.0)

    @property
    def excess_healing(self) -> jnp.ndarray:
        """Ability healing lost to the health cap [..., 10, 10], each healer's share in proportion
        to what it gave (`excess_share`)."""
        return self.healing * self.excess_share[..., None, :]

    @property
    def useful_healing(self) -> jnp.ndarray:
        """Ability healing that raised health [..., 10, 10]: `healing - excess_healing`."""
        return self.healing - self.excess_healing


def agent_fact_summary(facts: Facts) -> dict[str, jnp.ndarray]:
    """Per-agent sums of one tick's facts, float32 [..., 10] each (one value per agent)."""
    f32 = lambda a: a.astype(jnp.float32)  # noqa: E731
    return {
        "damage_dealt": jnp.sum(facts.damage, axis=-1),
        "damage_taken": jnp.sum(facts.damage, axis=-2),
        "healing_done": jnp.sum(facts.useful_healing, axis=-1),
        "excess_healing": jnp.sum(facts.excess_healing, axis=-1),
        "healing_received": jnp.sum(facts.useful_healing, axis=-2),
        "basic_used": f32(facts.basic_used),
        "ultimate_used": f32(facts.ultimate_used),
        "died": f32(facts.died),
        "red_zone_death": f32(facts.red_zone_death),
        "respawned": f32(facts.respawned),
        "rejected": f32(facts.move_rejected | facts.combat_rejected),
    }
