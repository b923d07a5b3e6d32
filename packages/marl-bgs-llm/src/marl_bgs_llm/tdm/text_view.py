"""The text view `actor-text-v1`: one agent's permitted view as a prompt, in its own frame.

Everything printed comes from the engine's structured view of that agent (`AgentView`) and its
exact action masks, so a prompt never holds more than the agent may know: hidden unit rows are
all zeros in the view and are printed as hidden, and two states that differ only in what the
agent cannot see give the same text. Numbers of the class table come from the engine's own
table (`marl_bgs.tdm.classes`), move and combat names from its action tables.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from marl_bgs.core.arena import BODY_RADIUS, MAP_HEIGHT, MAP_WIDTH, MOVE_NAMES, OBSTACLE_PILLAR
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.actions import COMBAT_NAMES
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.lifecycle import DEATH_POINTS, RED_ZONE_DEATH_POINTS

TEXT_VIEW = "actor-text-v1"

# A unit's statuses: (view field, how the prompt names it). Values are ticks left.
_STATUSES = (
    ("shield", "spawn shield"),
    ("stun", "stunned"),
    ("trap", "trapped"),
    ("slow_charge", "slowed by a Warrior charge"),
    ("slow_hunter", "slowed by a Hunter"),
    ("slow_poison", "slowed by Rogue poison"),
    ("antiheal", "healing reduced by poison"),
    ("freedom", "Priest speed floor"),
    ("burst", "Mage Burst"),
)


def row_name(row: int) -> str:
    """The name of unit row `row` (0-4 own roster slots, 5-9 enemy slots): `ally_k`/`enemy_k`."""
    return f"ally_{row}" if row < TEAM_SIZE else f"enemy_{row - TEAM_SIZE}"


def _num(x: Any) -> str:
    """A number as short text: integers without a point, others to 3 decimals."""
    v = float(x)
    if v == round(v) and abs(v) < 1e9:
        return str(round(v))
    return f"{v:.3f}".rstrip("0").rstrip(".")


def _class_lines() -> list[str]:
    lines = []
    for cid in range(1, 6):
        name = C.CLASS_NAMES[cid].capitalize()
        basic = (
            f"heals an ally (or itself) for {_num(C.BASIC_HEAL[cid])}"
            if C.BASIC_ON_ALLY[cid]
            else f"hits an enemy for {_num(C.BASIC_DAMAGE[cid])}"
        )
        if cid == C.MAGE:
            ult = (
                f"Burst on itself: x{_num(C.BURST_MULT)} damage for {C.BURST_TICKS} ticks "
                "(the combat choice `ultimate`, no target)"
            )
        elif C.ULT_ON_ALLY[cid]:
            ult = f"heals an ally for {_num(C.ULT_HEAL[cid])} within {_num(C.ULT_RANGE[cid])}"
        else:
            ult = f"hits an enemy for {_num(C.ULT_DAMAGE[cid])} within {_num(C.ULT_RANGE[cid])}"
        extra = {
            C.MAGE: f"aura: allies within {_num(C.AURA_RADIUS)} deal x{_num(C.MAGE_AURA_MULT)}",
            C.WARRIOR: (
                f"aura: allies within {_num(C.AURA_RADIUS)} take x{_num(C.WARRIOR_AURA_MULT)}; "
                f"its Ultimate charges to the target, stuns {C.CHARGE_STUN_TICKS} tick and slows "
                f"x{_num(C.CHARGE_SLOW_MULT)} for {C.CHARGE_SLOW_TICKS}"
            ),
            C.HUNTER: (
                f"Basic slows x{_num(C.HUNTER_SLOW_MULT)} for {C.HUNTER_SLOW_TICKS} tick; "
                f"Ultimate traps (no moving) for {C.TRAP_TICKS} ticks, broken by new damage"
            ),
            C.ROGUE: (
                f"Ultimate poisons: stun {C.POISON_STUN_TICKS}, slow x{_num(C.POISON_SLOW_MULT)} "
                f"for {C.POISON_SLOW_TICKS}, healing x{_num(C.POISON_ANTIHEAL_MULT)} for "
                f"{C.POISON_ANTIHEAL_TICKS}"
            ),
            C.PRIEST: (
                f"Basic also lifts the target's speed to at least x{_num(C.FREEDOM_FLOOR)} for "
                f"{C.FREEDOM_TICKS} tick"
            ),
        }[cid]
        lines.append(
            f"- {name} (class {cid}): health {_num(C.MAX_HEALTH[cid])}, speed "
            f"{_num(C.SPEED[cid])}, sight {_num(C.SIGHT[cid])}; Basic within "
            f"{_num(C.BASIC_RANGE[cid])} {basic}; Ultimate ({C.ULT_COOLDOWN[cid]}-tick cooldown) "
            f"{ult}; {extra}."
        )
    return lines


RULES = "\n".join(
    [
        "== Rules ==",
        "Team Deathmatch, two teams of up to five. Every tick each agent picks one move and one "
        "combat choice; all agents act at once.",
        "Coordinates: your own spawn edge is on the left (x = 0, west); east is +x, north is +y. "
        f"The field is {_num(MAP_WIDTH)} x {_num(MAP_HEIGHT)} map units; every body is a circle "
        f"of radius {_num(BODY_RADIUS)}. Diagonal moves have length 1 like the others; speed "
        "scales every move. Obstacles and other bodies can stop or deflect a move.",
        "Combat: a Basic or an Ultimate on one unit, or no combat. A unit can be hit only "
        "within range and in your own direct sight (allies' sight shows units but does not "
        "let you hit them). Sight needs range and a line clear of obstacles; bodies do not "
        "block it. Spawn-shielded units can neither act on others nor be targeted; shielded "
        "enemies are hidden.",
        "Statuses: stun stops moving and combat; a trap stops moving; slows of different kinds "
        f"multiply, never below x{_num(C.MIN_SPEED_FRACTION)} of the base speed. "
        f"Auras of two allies of a kind stack at most {C.AURA_STACK_CAP} deep. Out of combat "
        "for a class's delay, a unit regains a share of its health each tick.",
        f"Scoring: each enemy death gives your team {DEATH_POINTS} point, "
        f"{RED_ZONE_DEATH_POINTS} if the enemy died inside its own "
        "Red Zone (the strip of the given depth along its spawn edge). The first team to reach "
        "the winning score with more points wins; otherwise the game is a draw at the tick "
        "limit. The dead come back in respawn waves on their spawn pads, shielded for a few "
        "ticks.",
        "Classes:",
        *_class_lines(),
    ]
)


def _obstacle_lines(public: Any) -> list[str]:
    lines = []
    for k, kind in enumerate(np.asarray(public.obstacle_kind)):
        if kind <= 0:
            continue
        x, y = public.obstacle_center[k]
        w, h = public.obstacle_size[k]
        if int(kind) == OBSTACLE_PILLAR:
            lines.append(f"O{k} pillar x={_num(x)} y={_num(y)} radius={_num(w)}")
        else:
            theta = float(public.obstacle_theta[k])
            turn = f" turned={_num(theta)} rad" if theta else ""
            lines.append(
                f"O{k} wall x={_num(x)} y={_num(y)} width={_num(w)} height={_num(h)}{turn}"
            )
    return lines or ["(no obstacles)"]


def _unit_line(units: Any, row: int, classes: np.ndarray) -> str:
    f = lambda name: getattr(units, name)[row]  # noqa: E731
    cls = int(classes[row])
    parts = [
        f"{row_name(row)}{' (you)' if f('is_self') else ''} {C.CLASS_NAMES[cls]}:",
        f"x={_num(f('x'))} y={_num(f('y'))}",
    ]
    if not f("is_self"):
        parts.append(f"dx={_num(f('dx'))} dy={_num(f('dy'))} distance={_num(f('distance'))}")
    if not f("alive"):
        return " ".join([*parts, "dead"])
    parts += [
        f"health={_num(f('health'))}/{_num(f('max_health'))}",
        f"speed={_num(f('speed'))}",
        f"cooldown={_num(f('cooldown'))}",
    ]
    if f("recovery"):
        parts.append(f"regen_in={_num(f('recovery'))}")
    statuses = [f"{label} {_num(f(name))}" for name, label in _STATUSES if f(name) > 0]
    parts.append(f"statuses: {', '.join(statuses) if statuses else 'none'}")
    if not f("is_self"):
        parts.append("seen by you" if f("seen_directly") else "seen by an ally")
    return " ".join(parts)


def _previous_action(units: Any, row: int) -> str:
    move = int(np.argmax(units.last_move[row])) if np.any(units.last_move[row]) else 0
    target = int(np.argmax(units.last_target[row])) if np.any(units.last_target[row]) else 0
    ult = int(units.last_ultimate[row] > 0)
    return f"{row_name(row)}: move={MOVE_NAMES[move]} combat={COMBAT_NAMES[target][ult]}"


def legal_names(masks: Any) -> tuple[list[str], list[str]]:
    """One agent's legal move names and legal combat names, from its exact masks (`move` [9],
    `pair` [11, 2])."""
    moves = [MOVE_NAMES[m] for m in np.flatnonzero(np.asarray(masks.move))]
    pair = np.asarray(masks.pair)
    combats = [COMBAT_NAMES[t][u] for t, u in zip(*np.nonzero(pair), strict=True)]
    return moves, combats


REPLY_INSTRUCTION = (
    'Reply with one JSON object and nothing else: {"move": "<one legal move>", '
    '"combat": "<one legal combat choice>"}.'
)


def format_actor_view(view: Any, masks: Any, *, rules: bool = True) -> str:
    """The `actor-text-v1` prompt of one agent: `view` is its `AgentView` and `masks` its
    `ActionMasks`, both without leading axes (numpy or JAX arrays). `rules=False` leaves out the
    public rules (a caller that sends them once as a system message)."""
    units, public = view.units, view.public
    classes = np.asarray(public.roster_class).astype(int)
    me = int(np.argmax(np.asarray(units.is_self)))
    alive = np.asarray(public.roster_alive)
    visible = np.asarray(units.visible) > 0
    # What every agent of a game shares comes first (servers reuse a shared prompt prefix).
    lines = [f"MARL-BGs {TEXT_VIEW}"]
    if rules:
        lines.append(RULES)
    score, sizes, waves = public.score, public.team_size, public.wave_countdown
    lines += [
        "== Map ==",
        *_obstacle_lines(public),
        "== You ==",
        f"you are {row_name(me)}, the {C.CLASS_NAMES[classes[me]]} of your team",
        "== Context ==",
        f"tick {_num(public.tick)} of {_num(public.tick_limit)}; score you {_num(score[0])}, "
        f"enemy {_num(score[1])}; winning score {_num(public.winning_score)}; Red Zone depth "
        f"{_num(public.red_zone_depth)}; team sizes {_num(sizes[0])} v {_num(sizes[1])}",
        f"respawn waves every {_num(public.wave_period)} ticks, next in {_num(waves[0])} (you) "
        f"and {_num(waves[1])} (enemy); spawn shield {_num(public.shield_ticks)} ticks",
        "== Roster ==",
    ]
    for row in range(2 * TEAM_SIZE):
        if classes[row] <= 0:
            continue
        x, y = public.spawn_pads[row]
        state = "alive" if alive[row] else "dead"
        shield = public.roster_shield[row]
        lines.append(
            f"{row_name(row)} {C.CLASS_NAMES[classes[row]]} {state}"
            f"{f' shielded {_num(shield)}' if shield > 0 else ''} pad=({_num(x)}, {_num(y)})"
        )
    lines.append("== Units you know of ==")
    lines += [_unit_line(units, r, classes) for r in range(2 * TEAM_SIZE) if visible[r]]
    hidden = [row_name(r) for r in range(2 * TEAM_SIZE) if classes[r] > 0 and not visible[r]]
    lines.append(f"hidden: {', '.join(hidden) if hidden else 'none'}")
    lines.append("== Who sees whom (your living allies' direct sight) ==")
    seen_by = np.asarray(view.seen_by) > 0
    for k in range(TEAM_SIZE):
        if classes[k] > 0 and seen_by[k].any():
            names = [row_name(int(r)) for r in np.flatnonzero(seen_by[k]) if r != k]
            lines.append(f"{row_name(k)} sees: {', '.join(names) if names else 'nobody'}")
    lines.append("== Previous actions you saw ==")
    lines += [_previous_action(units, r) for r in range(2 * TEAM_SIZE) if visible[r]]
    moves, combats = legal_names(masks)
    lines += [
        "== Your legal choices ==",
        f"moves: {', '.join(moves)}",
        f"combat: {', '.join(combats)}",
        REPLY_INSTRUCTION,
    ]
    return "\n".join(lines)
