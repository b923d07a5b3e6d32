"""Authored states: build a game position by hand, validated on the host before it runs.

    state = author_state(map_id=0, units=[UnitSpec(slot=0, cls="W", x=5, y=5),
                                          UnitSpec(slot=5, cls="R", x=6.2, y=5, health=40)])

Slots 0-4 are team A's roster slots, 5-9 team B's; positions are world coordinates. Slots not
listed are unused. Every invalid value raises ConfigError naming the field and what is allowed.

Scalars follow the project's one policy (`marl_bgs.core.checks`): an integer field takes `int` or
any numpy integer, a number field also takes `float` or a numpy float, a flag takes `bool` or
`np.bool_`; a bool is never a number, and NaN, infinities and integers too large for a float are
refused. Keywords other than the ones below and the rule values of `make` are refused too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.arena import BODY_RADIUS, MAP_HEIGHT, MAP_WIDTH, NUM_MOVES
from marl_bgs.core.checks import check_bool, check_float, check_int, shown
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.geometry import body_fits, near_table
from marl_bgs.tdm import classes as C
from marl_bgs.tdm import maps
from marl_bgs.tdm.config import LIMITS, MESSAGE_DIM_MAX, RuleValues
from marl_bgs.tdm.constants import NUM_TARGETS
from marl_bgs.tdm.lifecycle import MAX_POINTS_PER_TICK
from marl_bgs.tdm.perception import refresh_sight_lines
from marl_bgs.tdm.shields import free_grid
from marl_bgs.tdm.start import start_state
from marl_bgs.tdm.state import GameState


@dataclass(frozen=True)
class UnitSpec:
    """One unit of an authored state. `health=None` means full health."""

    slot: int
    cls: int | str
    x: float
    y: float
    health: float | None = None
    alive: bool = True
    shield: int = 0
    stun: int = 0
    trap: int = 0
    slow_charge: int = 0
    slow_hunter: int = 0
    slow_poison: int = 0
    antiheal: int = 0
    freedom: int = 0
    burst: int = 0
    cooldown: int = 0
    recovery: int = 0
    last_move: int = 0
    last_target: int = 0
    last_ult: int = 0


_KEYWORDS = ("units", "map_id", "score", "tick", "wave", "swap", "message_dim", *LIMITS)
_NUMBER = int | float | np.integer | np.floating  # the number types of `check_float`


def _real(value: Any, field: str, expected: str) -> float:
    """A number of `check_float`'s types as a Python float (NaN kept; too large for a float:
    inf), for fields whose range check has its own message; anything else is refused."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, _NUMBER):
        raise ConfigError(f"{field}: expected {expected}, got {shown(value)}")
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _coordinate(value: Any, field: str) -> float:
    """`check_float` without a range: the body-fits check below names the position instead."""
    return check_float(value, field)


def _class_id(value: Any, field: str) -> int:
    try:
        return C.class_id(value, field)
    except ValueError as err:
        raise ConfigError(str(err)) from None


def _pair(value: Any, field: str) -> tuple[Any, Any]:
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise ConfigError(f"{field}: expected a pair (team A, team B), got {value!r}")
    return value[0], value[1]


def _unit_arrays(units: list[UnitSpec], rules: RuleValues, obstacles: Any) -> dict[str, np.ndarray]:
    out = {f.name: np.zeros(10, np.float32 if f.name in ("x", "y", "health") else np.int32)
           for f in fields(UnitSpec)}  # fmt: skip
    out["alive"] = np.zeros(10, bool)
    seen: set[int] = set()
    for k, spec in enumerate(units):
        if not isinstance(spec, UnitSpec):
            raise ConfigError(f"units[{k}]: expected a UnitSpec, got {type(spec).__name__}")
        f = f"units[{k}]"
        slot = check_int(spec.slot, f"{f}.slot", 0, 9)
        if slot in seen:
            raise ConfigError(f"{f}.slot: slot {slot} is listed twice")
        seen.add(slot)
        cls = _class_id(spec.cls, f"{f}.cls")
        x, y = _coordinate(spec.x, f"{f}.x"), _coordinate(spec.y, f"{f}.y")
        max_h = float(C.MAX_HEALTH[cls])
        alive = check_bool(spec.alive, f"{f}.alive")
        if spec.health is None:
            health = max_h if alive else 0.0
        else:
            health = _real(spec.health, f"{f}.health", "a number or None (full health)")
        if alive and not 0.0 < health <= max_h:  # NaN fails too
            raise ConfigError(
                f"{f}.health: a living {C.CLASS_NAMES[cls]} has health in (0, {max_h:g}],"
                f" got {shown(spec.health)}"
            )
        if not alive and health != 0.0:
            raise ConfigError(f"{f}.health: a dead unit has health 0, got {shown(spec.health)}")
        caps = dict(C.DURATION_CAPS, shield=rules.shield_ticks, recovery=int(C.OOC_DELAY[cls]))
        for name, cap in caps.items():
            value = check_int(getattr(spec, name), f"{f}.{name}", 0, cap)
            if not alive and value and name not in ("cooldown",):
                raise ConfigError(f"{f}.{name}: a dead unit has no statuses, got {value}")
            out[name][slot] = value
        out["last_move"][slot] = check_int(spec.last_move, f"{f}.last_move", 0, NUM_MOVES - 1)
        out["last_target"][slot] = check_int(
            spec.last_target, f"{f}.last_target", 0, NUM_TARGETS - 1
        )
        out["last_ult"][slot] = check_int(spec.last_ult, f"{f}.last_ult", 0, 1)
        # Dead units too: a dead unit lies where it died (its own view and critics' views show it).
        # Far-off positions are refused here, before float32 could turn them into infinities.
        on_map = 0.0 <= x <= MAP_WIDTH and 0.0 <= y <= MAP_HEIGHT
        if not on_map or not bool(body_fits(jnp.asarray([x, y], jnp.float32), obstacles)):
            raise ConfigError(
                f"{f}: position ({x}, {y}) puts the body outside the map or into an"
                f" obstacle (a body of radius {BODY_RADIUS} must fit)"
            )
        out["cls"][slot], out["x"][slot], out["y"][slot] = cls, x, y
        out["health"][slot], out["alive"][slot] = health, alive
    solid = [i for i in range(10) if out["alive"][i] and out["shield"][i] == 0]
    for a in solid:
        for b in solid:
            d = math.hypot(out["x"][a] - out["x"][b], out["y"][a] - out["y"][b])
            if a < b and d < 2 * BODY_RADIUS - 1e-4:
                raise ConfigError(f"units: bodies of slots {a} and {b} overlap (distance {d:.3f})")
    if not seen:
        raise ConfigError("units: an authored state needs at least one unit")
    for team in (0, 1):
        if not any(out["cls"][5 * team : 5 * team + 5]):
            raise ConfigError(f"units: team {'AB'[team]} has no unit")
    return out


def author_state(
    *,
    units: list[UnitSpec],
    map_id: Any = 0,
    score: tuple[int, int] = (0, 0),
    tick: int = 0,
    wave: tuple[int, int] | None = None,
    swap: bool = False,
    message_dim: int = 0,
    **rule_values: Any,
) -> GameState:
    """A validated single-game state (add a batch axis with `batch_states`)."""
    for name in rule_values:
        if name not in LIMITS:
            raise ConfigError(f"{name}: not a keyword of author_state; allowed {list(_KEYWORDS)}")
    rules = RuleValues(**rule_values)
    spec = maps.load(map_id)
    obstacles = spec.to_obstacles()
    if not isinstance(units, list | tuple):
        raise ConfigError(f"units: expected a list of UnitSpec, got {type(units).__name__}")
    u = _unit_arrays(list(units), rules, obstacles)
    swap = check_bool(swap, "swap")
    message_dim = check_int(message_dim, "message_dim", 0, MESSAGE_DIM_MAX)
    pair = _pair(score, "score")
    sa = check_int(pair[0], "score[0]", 0, rules.winning_score + MAX_POINTS_PER_TICK)
    sb = check_int(pair[1], "score[1]", 0, rules.winning_score + MAX_POINTS_PER_TICK)
    # A running game is below the threshold: at it, the game has been won or drawn already.
    if max(sa, sb) >= rules.winning_score:
        raise ConfigError(
            f"score: {sa}-{sb} already decides the game; a running game has both scores below"
            f" the winning score {rules.winning_score}"
        )
    t = check_int(tick, "tick", 0, rules.tick_limit - 1)
    waves = _pair(wave, "wave") if wave is not None else (rules.wave_period - 1,) * 2
    w = [check_int(waves[i], f"wave[{i}]", 0, rules.wave_period - 1) for i in (0, 1)]
    terrain = jax.tree.map(jnp.asarray, obstacles)
    free, near = free_grid(terrain), near_table(terrain)
    map_number = jnp.int32(spec.record_id)
    unset = jnp.zeros((10, 10), bool)  # sight lines: computed below from the authored positions
    base = start_state(
        obstacles, free, near, unset, jnp.asarray(u["cls"]), jnp.bool_(swap), rules.to_rules(),
        map_number, jnp.int32(0), message_dim,
    )  # fmt: skip
    units_state = base.units.replace(
        alive=jnp.asarray(u["alive"]),
        pos=jnp.asarray(np.stack([u["x"], u["y"]], -1)),
        health=jnp.asarray(u["health"]),
        **{k: jnp.asarray(u[k]) for k in (*C.DURATION_CAPS, "shield", "recovery", "last_move",
                                          "last_target", "last_ult")},
    )  # fmt: skip
    state = base.replace(
        units=units_state,
        score=jnp.asarray([sa, sb], jnp.int32),
        tick=jnp.int32(t),
        wave=jnp.asarray(w, jnp.int32),
    )
    return refresh_sight_lines(state)
