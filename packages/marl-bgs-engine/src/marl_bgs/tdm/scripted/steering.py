"""Where each agent of a scripted team steps: every legal move is scored by where it would end.

A move is scored by how close its end point comes to the agent's wanted distance from its goal,
whether the goal is in a straight line from there (so agents round obstacles instead of pressing
into them), whether the body fits there, and the style's habits: formation around the Warrior,
keeping out of enemy melee reach, not crowding teammates, leaving the own Red Zone while enemies
are near. An agent stuck for two ticks detours sideways for a while (memory).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from marl_bgs.core.arena import MAP_WIDTH, MOVE_VECTORS, NEAR_OBSTACLES
from marl_bgs.core.geometry import (
    Obstacles,
    body_fits,
    frame,
    length,
    near_obstacles,
    segment_blocked,
)
from marl_bgs.core.pytree import PyTree, pytree_dataclass
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.scripted import route
from marl_bgs.tdm.scripted.combat import distances, melee, priority, reach, threats
from marl_bgs.tdm.scripted.picture import Picture
from marl_bgs.tdm.scripted.styles import Style

DETOUR_TICKS = 6
# Fractions of a move tested for fit: at most 0.67 apart for a step of 2, so a body crossing a
# wall between two of them comes within 0.34 of it at one (a body's radius is 0.5).
PATH_SAMPLES = (1 / 3, 2 / 3, 1.0)
DANGER = 7.0  # enemies this close make the own Red Zone a place to leave
CROWD = 0.3  # how much agents avoid stepping into a teammate (the engine blocks bodies anyway)
SEARCH_X = MAP_WIDTH - 1.5  # where a team looks for enemies it has not found (own frame)


@pytree_dataclass
class Steering(PyTree):
    """Per-agent movement memory [5]."""

    last_pos: jnp.ndarray  # float32 [5, 2]
    mobile: jnp.ndarray  # bool: could move last tick
    stuck: jnp.ndarray  # int32: ticks in a row without progress
    detour: jnp.ndarray  # int32: detour ticks left
    side: jnp.ndarray  # float32: +1 left of the goal direction, -1 right


def start_steering() -> Steering:
    """Memory of a fresh game."""
    return Steering(
        last_pos=jnp.full((TEAM_SIZE, 2), -1.0, jnp.float32),
        mobile=jnp.zeros(TEAM_SIZE, bool),
        stuck=jnp.zeros(TEAM_SIZE, jnp.int32),
        detour=jnp.zeros(TEAM_SIZE, jnp.int32),
        side=jnp.ones(TEAM_SIZE, jnp.float32),
    )


def goals(
    p: Picture, style: Style, lead: jnp.ndarray, searching: jnp.ndarray
) -> tuple[jnp.ndarray, ...]:  # fmt: skip
    """(goal [5, 2], wanted distance from it [5]) of each own agent, and the team's goal [2]
    (its focus, else where an enemy was last seen, else the rally point, or the enemy's end of
    the map while `searching`); `lead` [2] is where an enemy was last seen (NaN when none is
    remembered)."""
    cls = p.class_id[:TEAM_SIZE]
    dist = distances(p)
    foes = threats(p)
    any_foe = jnp.any(foes)
    pri = priority(p, style)
    # Melee goes for the best enemy it can reach soon; ranged agents for the team's focus.
    own_pick = jnp.argmax(jnp.where(foes[None, :], pri - 0.15 * dist, -jnp.inf), axis=1)
    nearest = jnp.argmin(jnp.where(foes[None, :], dist, jnp.inf), axis=1)
    focus = jnp.argmax(jnp.where(foes, pri, -jnp.inf))
    close = melee(cls)
    target = jnp.where(close, own_pick, focus)
    if style.rush:
        target = nearest
    goal = p.pos[target]
    wanted = jnp.where(close | style.rush, 1.0, reach(p) - 0.4)
    # The Priest follows the most hurt living ally (itself included), a little behind it.
    allies = p.alive[:TEAM_SIZE]
    patient = jnp.argmin(jnp.where(allies, p.frac[:TEAM_SIZE], jnp.inf))
    behind = p.pos[patient] - jnp.asarray([style.priest_behind, 0.0])
    priest = (cls == C.PRIEST) & ~style.rush
    goal = jnp.where(priest[:, None], behind, goal)
    wanted = jnp.where(priest, 0.0, wanted)
    # Nobody known: where an enemy was last seen, else the style's rally point, or after a quiet
    # while the enemy's end of the map on the style's line (a team that waits is never found by
    # one that waits too).
    search = jnp.asarray([SEARCH_X, style.rally[1]], jnp.float32)
    rally = jnp.where(searching, search, jnp.asarray(style.rally, jnp.float32))
    rally = jnp.where(jnp.isnan(lead), rally, lead)
    rally = jnp.broadcast_to(rally, (TEAM_SIZE, 2))
    goal = jnp.where(any_foe | priest[:, None], goal, rally)
    wanted = jnp.where(any_foe | priest, wanted, 0.0)
    team_goal = jnp.where(any_foe, p.pos[focus], rally[0])
    return goal, wanted, team_goal


def move_ends(
    me: jnp.ndarray, speed: jnp.ndarray, obstacles: Obstacles, near: jnp.ndarray
) -> jnp.ndarray:
    """Batched over games [n]: where each move of each own agent would end against the obstacles
    (bodies aside), [n, 5, 9, 2]: as far along it as a body fits, tested at `PATH_SAMPLES`
    against the obstacles near the agent (`near`: the games' `near_table`s [n, 20, 10, 12]).

    `me` [n, 5, 2] and `speed` [n, 5] are the agents' positions and speeds, `obstacles` fields
    [n, K]. Worked with the games on the last axis, one near obstacle at a time: XLA on CPU
    vectorises over the long game axis (more than twice as fast as over 12 obstacles)."""
    step = jnp.asarray(MOVE_VECTORS)[None, None] * speed[..., None, None]  # [n, 5, 9, 2]
    along = jnp.asarray(PATH_SAMPLES)[:, None]
    trials = me[:, :, None, None, :] + step[:, :, :, None, :] * along  # [n, 5, 9, S, 2]
    trials = jnp.moveaxis(trials, 0, -2)  # [5, 9, S, n, 2]
    local = jax.vmap(near_obstacles)(me[..., 0], me[..., 1], obstacles, near)  # fields [n, 5, 12]
    # The near obstacles' frames, [5, 12, n] (sines and cosines once, not once per test).
    local = jax.tree.map(lambda f: jnp.moveaxis(f, 0, -1), frame(local))

    def test(j: int, ok: jnp.ndarray) -> jnp.ndarray:  # one obstacle, fields [5, 1, 1, n, 1]
        slot = jax.tree.map(lambda f: f[:, j][:, None, None, :, None], local)
        return ok & body_fits(trials, slot)

    # A loop, not unrolled: its result is stored, where XLA would fuse an unrolled chain of
    # element-wise tests into every later use of the ends.
    ok = jax.lax.fori_loop(0, NEAR_OBSTACLES, test, jnp.ones(trials.shape[:-1], bool))
    covered = jnp.zeros(ok.shape[:2] + ok.shape[3:])  # [5, 9, n]
    clear = jnp.ones_like(ok[:, :, 0])
    for k, fraction in enumerate(PATH_SAMPLES):  # the last sample of an unbroken run of fits
        clear = clear & ok[:, :, k]
        covered = jnp.where(clear, fraction, covered)
    return me[:, :, None, :] + step * jnp.moveaxis(covered, -1, 0)[..., None]


def choose(
    p: Picture, move_mask: jnp.ndarray, memory: Steering, style: Style, goal: jnp.ndarray,
    wanted: jnp.ndarray, team_goal: jnp.ndarray, field: jnp.ndarray, grid: route.Terrain,
    q: jnp.ndarray,
) -> tuple[jnp.ndarray, Steering]:  # fmt: skip
    """(move [5], memory) from the move masks [5, 9], each agent's goal and wanted distance
    (`goals`), the walking distances to the team's goal (`route.relax`) and where each move
    would end (`move_ends`, [5, 9, 2])."""
    me = p.pos[:TEAM_SIZE]
    cls = p.class_id[:TEAM_SIZE]
    to_goal = goal[:, None, :] - q
    d_goal = length(to_goal)
    # Agents heading for the team's goal follow the walking distances to it; others go straight
    # at their own goal where the way is clear, else along the route to the team's goal (a
    # little worse than any clear way, so they round obstacles to see their goal).
    walk = route.walking(field, grid[0], q)
    known_way = walk < route.FAR - 1.0
    routed = jnp.where(known_way, -jnp.abs(walk - wanted[:, None]), -d_goal)
    far = d_goal > wanted[:, None] + 0.5
    # Whether the way is clear is judged from where the agent stands (one sight line per agent).
    blocked = far & segment_blocked(me, goal, p.obstacles)[:, None]
    direct = jnp.where(blocked, routed - 1.0, -jnp.abs(d_goal - wanted[:, None]))
    on_team_goal = jnp.all(jnp.abs(goal - team_goal) < 1e-3, axis=-1)[:, None]
    score = jnp.where(on_team_goal, routed, direct)
    foes = threats(p)
    gap = length(q[:, :, None, :] - p.pos[None, None, :, :])
    # [5, 9, 10]: distance from each end point to each row.
    danger = jnp.any(foes[None, :] & (distances(p) < DANGER), axis=1)  # [5]
    in_red = q[..., 0] < p.red_zone_depth
    score -= 2.0 * (in_red & danger[:, None])
    if not style.rush:
        melee_foe = foes & melee(p.class_id)
        soft = ~melee(cls)
        keep = jnp.where(cls == C.PRIEST, 3.5, 2.2)[:, None, None]
        press = jnp.sum(jnp.where(melee_foe, jnp.maximum(keep - gap, 0.0), 0.0), axis=-1)
        score -= style.kite_weight * soft[:, None] * press
        warrior = (p.class_id == C.WARRIOR) & p.alive & ~p.enemy
        anchor = jnp.where(jnp.any(warrior), p.pos[jnp.argmax(warrior)], jnp.mean(me, axis=0))
        spread = length(q - anchor)
        loose = jnp.maximum(spread - style.anchor_radius, 0.0)
        score -= style.anchor_weight * (cls != C.WARRIOR)[:, None] * loose
    mates = p.alive & ~p.enemy & (jnp.arange(10)[None, :] != jnp.arange(TEAM_SIZE)[:, None])
    crowd = jnp.where(mates[:, None, :], jnp.maximum(1.05 - gap, 0.0), 0.0)
    score -= CROWD * jnp.sum(crowd, axis=-1)
    # Detour: an agent far from its goal that could move but got nowhere for two ticks (pushing
    # into an obstacle or a body, or held in a dead end of its scores) goes sideways.
    moved = length(me - memory.last_pos)
    want_far = (d_goal[:, 0] > wanted + 0.5) & p.alive[:TEAM_SIZE]
    stuck = jnp.where(memory.mobile & (moved < 0.05) & want_far, memory.stuck + 1, 0)
    start = (stuck >= 2) & (memory.detour == 0)
    side = jnp.where(start, -memory.side, memory.side)
    detour = jnp.where(start, DETOUR_TICKS, jnp.maximum(memory.detour - 1, 0))
    heading = to_goal[:, 0] / jnp.maximum(d_goal[:, :1], 1e-6)
    perp = jnp.stack([-heading[:, 1], heading[:, 0]], axis=-1) * side[:, None]
    gone = q - me[:, None, :]  # how far each move would really take the agent, [5, 9, 2]
    sideways = gone[..., 0] * perp[:, None, 0] + gone[..., 1] * perp[:, None, 1]
    score += jnp.where((detour > 0)[:, None], 1.5 * sideways, 0.0)
    move = jnp.argmax(jnp.where(move_mask, score, -jnp.inf), axis=-1).astype(jnp.int32)
    mobile = jnp.any(move_mask[:, 1:], axis=-1)
    memory = Steering(last_pos=me, mobile=mobile, stuck=stuck, detour=detour, side=side)
    return move, memory
