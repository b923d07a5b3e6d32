"""One tick of Team Deathmatch, phase by phase in the order of the rules.

1. masks from the start-of-tick state; illegal parts repaired;
2. combat from start-of-tick positions and statuses, all damage and healing summed, then deaths;
3. Warrior Charge relocation, then ordinary movement; shields that end leave bodies clear;
4. statuses age (new ones constrain the next decision);
5. points, respawn waves, game end (the reward is `lifecycle.terminal_reward`).
A finished game does not change.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from marl_bgs.core.movement import move
from marl_bgs.core.pytree import where_games
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.actions import action_masks, can_move, repair, to_world_move
from marl_bgs.tdm.charge import charge
from marl_bgs.tdm.combat import resolve_combat
from marl_bgs.tdm.facts import Facts
from marl_bgs.tdm.lifecycle import death_points, in_own_red_zone, kill, outcome, respawn_waves
from marl_bgs.tdm.perception import perceive, sight_lines
from marl_bgs.tdm.shields import clear_bodies
from marl_bgs.tdm.state import GameState
from marl_bgs.tdm.statuses import (
    Applied,
    advance_statuses,
    applied_statuses,
    movement_speed,
    trap_breakers,
    trap_broken,
)
from marl_bgs.tdm.tables import absolute_target, spawn_left


def transition(
    state: GameState, actions: jnp.ndarray, messages: jnp.ndarray | None = None
) -> tuple[GameState, Facts]:
    """Resolve one tick of one game: actions int [10, 3] in each agent's own frame.

    Returns (next state, facts); the official reward is `lifecycle.terminal_reward`.
    """
    u0 = state.units
    seen = perceive(state)
    masks = action_masks(state, seen)
    accepted, move_bad, pair_bad = repair(actions.astype(jnp.int32), masks)

    combat = resolve_combat(state, seen, accepted)
    applied: Applied = applied_statuses(u0, combat)
    units = advance_statuses(u0, combat, applied)
    units = kill(units, combat.died)

    solid = units.alive & (u0.shield == 0)
    chargers = combat.ultimate_used & (u0.class_id == C.WARRIOR) & units.alive
    target_slot = absolute_target(accepted[:, 1])
    after_charge = charge(u0.pos, chargers, target_slot, solid, state.obstacles)
    world_move = to_world_move(accepted[:, 0], state.swap)
    mobile = can_move(state) & units.alive
    speed = movement_speed(u0, state.rules.shield_speed)
    moved = move(after_charge, world_move, speed, mobile, solid, state.obstacles, state.near)
    ending = units.alive & (u0.shield == 1)
    settled = units.alive & ((u0.shield == 0) | ending)
    cleared, displaced = clear_bodies(
        moved, ending, settled, state.free, spawn_left(state.swap), u0.class_id
    )
    units = units.replace(
        pos=jnp.where(units.alive[:, None], cleared, u0.pos),
        shield=jnp.maximum(units.shield - 1, 0),
        last_move=world_move,
        last_target=accepted[:, 1],
        last_ult=accepted[:, 2],
    )

    pts, home, scored = death_points(combat.died, u0.pos, state.swap, state.rules)
    score = state.score + scored
    units, wave, back = respawn_waves(units, state.wave, state.swap, state.rules)
    tick = state.tick + 1
    new_outcome = outcome(score, tick, state.rules)
    nxt = state.replace(
        units=units,
        clear=sight_lines(units.pos, state.obstacles),
        score=score,
        wave=wave,
        tick=tick,
        outcome=new_outcome,
        messages=state.messages if messages is None else messages.astype(jnp.float32),
    )
    facts = Facts(
        requested=actions.astype(jnp.int32),
        accepted=accepted,
        move_rejected=move_bad,
        combat_rejected=pair_bad,
        basic_used=combat.basic_used,
        ultimate_used=combat.ultimate_used,
        damage_basic=combat.damage_basic,
        damage_ultimate=combat.damage_ultimate,
        heal_basic=combat.heal_basic,
        heal_ultimate=combat.heal_ultimate,
        mage_aura_added=combat.mage_aura_added,
        warrior_aura_prevented=combat.warrior_aura_prevented,
        mage_aura_added_by=combat.mage_aura_added_by,
        warrior_aura_prevented_by=combat.warrior_aura_prevented_by,
        aura_cover=combat.aura_cover,
        mage_auras=combat.mage_auras,
        warrior_auras=combat.warrior_auras,
        burst_active=combat.burst_active,
        stunned=applied.stunned,
        trapped=applied.trapped,
        slowed_charge=applied.slowed_charge,
        slowed_hunter=applied.slowed_hunter,
        poisoned=applied.poisoned,
        freed=applied.freed,
        trap_broken=trap_broken(u0, combat),
        trap_broken_by=trap_breakers(u0, combat),
        regen=combat.regen,
        overheal=combat.overheal,
        saved=combat.saved,
        in_combat=combat.in_combat,
        died=combat.died,
        death_points=pts,
        red_zone_death=home,
        in_red_zone=u0.alive & in_own_red_zone(u0.pos, state.swap, state.rules.red_zone_depth),
        charge_from=u0.pos,
        charge_to=after_charge,
        moved=jnp.linalg.norm(moved - after_charge, axis=-1),
        shield_cleared=displaced,
        respawned=back,
        points=scored,
    )
    finished = state.done
    nxt = where_games(finished, state, nxt)
    facts = jax.tree.map(lambda f: jnp.where(finished, jnp.zeros_like(f), f), facts)
    return nxt, facts
