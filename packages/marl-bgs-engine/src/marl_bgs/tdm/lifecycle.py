"""Deaths, points, respawn waves, spawn shields and the end of the game."""

from __future__ import annotations

import jax.numpy as jnp

from marl_bgs.core.arena import MAP_WIDTH
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.constants import A_WINS, B_WINS, DRAW, ONGOING, TEAM_SIZE
from marl_bgs.tdm.state import GameState, Rules, Units
from marl_bgs.tdm.tables import SLOT_TEAM, lookup, spawn_left, spawn_pads

DEATH_POINTS = 1  # points a death gives the other team
RED_ZONE_DEATH_POINTS = 2  # ... when the unit died in its own Red Zone
MAX_POINTS_PER_TICK = RED_ZONE_DEATH_POINTS * TEAM_SIZE  # every enemy dying in its Red Zone


def in_own_red_zone(pos: jnp.ndarray, swap: jnp.ndarray, depth: jnp.ndarray) -> jnp.ndarray:
    """[10] inside the strip within `depth` of the slot's own spawn edge (boundary included)."""
    x = pos[:, 0]
    inside = jnp.where(spawn_left(swap), x <= depth, x >= MAP_WIDTH - depth)
    return inside & (depth > 0)


def death_points(
    died: jnp.ndarray, start_pos: jnp.ndarray, swap: jnp.ndarray, rules: Rules
) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """Points per death (2 in one's own Red Zone at the start of the tick), which deaths were
    Red Zone deaths [10], and the points each team scored [2]."""
    home = died & in_own_red_zone(start_pos, swap, rules.red_zone_depth)
    pts = jnp.where(died, jnp.where(home, RED_ZONE_DEATH_POINTS, DEATH_POINTS), 0)
    pts = pts.astype(jnp.int32)
    team = jnp.asarray(SLOT_TEAM)
    # A death scores for the other team.
    scored = jnp.stack(
        [jnp.sum(jnp.where(team == 1, pts, 0)), jnp.sum(jnp.where(team == 0, pts, 0))]
    )
    return pts, home, scored.astype(jnp.int32)


def kill(units: Units, died: jnp.ndarray) -> Units:
    """Dead agents lose every status; cooldowns keep running while they wait for a wave."""
    zero = jnp.zeros_like(units.stun)
    clear = lambda a: jnp.where(died, zero, a)  # noqa: E731
    return units.replace(
        alive=units.alive & ~died,
        health=jnp.where(died, 0.0, units.health),
        stun=clear(units.stun),
        trap=clear(units.trap),
        slow_charge=clear(units.slow_charge),
        slow_hunter=clear(units.slow_hunter),
        slow_poison=clear(units.slow_poison),
        antiheal=clear(units.antiheal),
        freedom=clear(units.freedom),
        burst=clear(units.burst),
        shield=clear(units.shield),
        recovery=clear(units.recovery),
    )


def respawn_waves(
    units: Units, wave: jnp.ndarray, swap: jnp.ndarray, rules: Rules
) -> tuple[Units, jnp.ndarray, jnp.ndarray]:
    """Run each team's countdown; a due wave returns all its dead to their pads, shielded."""
    due = wave == 0  # [2]
    back = due[jnp.asarray(SLOT_TEAM)] & ~units.alive & (units.class_id > 0)
    units = units.replace(
        alive=units.alive | back,
        pos=jnp.where(back[:, None], spawn_pads(swap), units.pos),
        health=jnp.where(back, lookup(C.MAX_HEALTH, units.class_id), units.health),
        shield=jnp.where(back, rules.shield_ticks, units.shield).astype(jnp.int32),
    )
    next_wave = jnp.where(due, rules.wave_period - 1, wave - 1).astype(jnp.int32)
    return units, next_wave, back


def outcome(score: jnp.ndarray, tick: jnp.ndarray, rules: Rules) -> jnp.ndarray:
    """A team wins at the winning score with more points; level at the threshold or time: draw."""
    a, b = score[0], score[1]
    reached = (a >= rules.winning_score) | (b >= rules.winning_score)
    decided = jnp.where(a > b, A_WINS, jnp.where(b > a, B_WINS, DRAW))
    timed_out = tick >= rules.tick_limit
    return jnp.where(reached, decided, jnp.where(timed_out, DRAW, ONGOING)).astype(jnp.int32)


def terminal_reward(state: GameState, next_state: GameState, facts: object = None) -> jnp.ndarray:
    """The official reward [10]: +1 to every agent of the winner, -1 to the loser, 0 on a draw;
    only on the last tick (padded slots get nothing). `facts` is unused (the reward signature)."""
    del facts
    new_outcome = next_state.outcome
    ends = (state.outcome == ONGOING) & (new_outcome != ONGOING)
    team = jnp.asarray(SLOT_TEAM)
    sign = jnp.where(new_outcome == A_WINS, 1.0, jnp.where(new_outcome == B_WINS, -1.0, 0.0))
    per_slot = jnp.where(team == 0, sign, -sign) * (state.units.class_id > 0)
    return jnp.where(ends, per_slot, 0.0)


def ended_by_time(state: GameState) -> jnp.ndarray:
    """True when a finished game ended at the tick limit with neither side at the winning score
    (the draw that PettingZoo calls a truncation)."""
    reached = outcome(state.score, jnp.int32(0), state.rules) != ONGOING
    return state.done & ~reached
