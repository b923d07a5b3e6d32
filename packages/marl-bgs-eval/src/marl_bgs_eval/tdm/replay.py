"""Team Deathmatch's replay schema (`REPLAY`, its `EvalParts.replay`): what a replay file of a
Team Deathmatch game holds besides the generic fields of `marl_bgs_eval.replay_files`.

The header adds the game's identity in the results table's column names (`FIELDS`). The arrays,
for a game of T ticks:

    state.<field>  [T + 1, ...]  the state before each tick, then the final state; the fields
                   [...]         a game never changes (`STATIC`) are stored once
    actions        int32 [T, 10, 3]  the actions the Systems chose (own frame)
    who            int32 [T, 10]     the leaf System acting for each slot (-1: none)
    masks.<field>  bool [T, 10, ...] both teams' legal actions, as the Systems were given them
    facts.<field>  [T, ...]          what each tick did (`facts.accepted` holds the repaired
                                     actions, `facts.move_rejected` / `combat_rejected` the flags)

`check` makes the header agree with the arrays, and the arrays a reader indexes or draws with
(classes, positions, health, last actions, accepted actions, `who`) hold values the engine can
make (`_BOUNDS`). Files of `marl-bgs-replay-v1` (the same header and arrays) still load.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import marl_bgs
from marl_bgs.core.arena import MAP_HEIGHT, MAP_WIDTH, NUM_MOVES
from marl_bgs.core.checks import shown
from marl_bgs.core.geometry import rotation
from marl_bgs.tdm.classes import MAX_HEALTH
from marl_bgs.tdm.config import LIMITS
from marl_bgs.tdm.constants import NUM_TARGETS
from marl_bgs.tdm.mode import TDMEnv
from marl_bgs_eval.array_zip import Layout, Replay, header_int
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.replay_files import ReplaySchema, tick_parts
from marl_bgs_eval.results import HASH
from marl_bgs_eval.tdm.results import RESULT_OF_OUTCOME, ROSTER

LEGACY = "marl-bgs-replay-v1"
STATIC = ("obstacles", "free", "near", "rules", "swap", "map_id")
INT32_MAX = 2**31 - 1

_INTS = {
    "game": (0, INT32_MAX),
    "seed": (0, 2**63 - 1),
    "seed_number": (0, INT32_MAX),
    "map": (-1, INT32_MAX),
    "points_a": (0, INT32_MAX),
    "points_b": (0, INT32_MAX),
    **{k: v for k, v in LIMITS.items() if isinstance(v[0], int)},
}
_FLOATS = {k: v for k, v in LIMITS.items() if isinstance(v[0], float)}
UNFINISHED = "unfinished"  # the result of a game saved before it ended (a person stopped)
_CHOICES = {
    "a_spawn": ("left", "right"),
    "result": (*RESULT_OF_OUTCOME.values(), UNFINISHED),
}
_PATTERNS = {"map_hash": HASH, "roster_a": ROSTER, "roster_b": ROSTER}
_TEXTS = ("system_a", "system_b", "map_name")
_NAME_LISTS = ("leaves_a", "leaves_b")
FIELDS = (*_INTS, *_FLOATS, *_CHOICES, *_PATTERNS, *_TEXTS, *_NAME_LISTS, "shared_sight")


@functools.cache
def engine_env(shared_sight: bool = True) -> TDMEnv:
    """A one-game env of the engine's Team Deathmatch (views, masks and steps of replays)."""
    return marl_bgs.make("tdm", num_envs=1, shared_sight=shared_sight)


def is_static(name: str) -> bool:
    """Whether array `name` is a state field stored once (not per tick)."""
    return name.startswith("state.") and name.split(".")[1] in STATIC


@functools.cache
def _one_game() -> tuple[Layout, Any]:
    """Each named array of one tick (shape, dtype), and the state's pytree structure."""
    env = engine_env()
    state = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape[2:], a.dtype), env.pool.states)
    parts = tick_parts(env, state)[0]
    parts["who"] = jax.ShapeDtypeStruct((env.num_agents,), jnp.int32)
    one = {k: (tuple(v.shape), np.dtype(v.dtype)) for k, v in parts.items()}
    return one, jax.tree.structure(state)


def layout(ticks: int) -> Layout:
    """Every array of a `ticks`-tick replay: name -> (shape, dtype)."""
    out = {}
    for name, (shape, dtype) in _one_game()[0].items():
        lead = () if is_static(name) else (ticks + 1 if name.startswith("state.") else ticks,)
        out[name] = ((*lead, *shape), dtype)
    return out


def state_structure() -> Any:
    """The pytree structure of a `GameState` (its leaves in the order of the `state.` arrays)."""
    return _one_game()[1]


def mode_id() -> str:
    """The engine's versioned mode id (what agents see and how the game plays)."""
    return engine_env().spec.id


# --- checks -----------------------------------------------------------------------------------


def check_header(header: dict[str, Any], where: str) -> None:
    """Raise EvalError unless `header`'s Team Deathmatch fields hold values of their kinds."""
    for k, (low, high) in _INTS.items():
        header_int(header[k], f"{where}.{k}", low, high)
    for k, (low, high) in _FLOATS.items():
        v = header[k]
        if isinstance(v, bool) or not isinstance(v, int | float) or not low <= v <= high:
            raise EvalError(f"{where}.{k}: expected a number in [{low}, {high}], got {shown(v)}")
    for k, allowed in _CHOICES.items():
        if header[k] not in allowed:
            raise EvalError(f"{where}.{k}: expected one of {list(allowed)}, got {shown(header[k])}")
    for k, pattern in _PATTERNS.items():
        if not isinstance(header[k], str) or not pattern.fullmatch(header[k]):
            raise EvalError(f"{where}.{k}: expected {pattern.pattern}, got {shown(header[k])}")
    for k in _TEXTS:
        if not isinstance(header[k], str) or not 0 < len(header[k]) <= 200:
            raise EvalError(f"{where}.{k}: expected a text of 1-200 characters")
    for k in _NAME_LISTS:
        names = header[k]
        if not isinstance(names, list) or not 0 < len(names) <= 1000:
            raise EvalError(f"{where}.{k}: expected a list of 1-1000 System names")
        if not all(isinstance(n, str) and 0 < len(n) <= 200 for n in names):
            raise EvalError(f"{where}.{k}: expected System names (texts of 1-200 characters)")
    if not isinstance(header["shared_sight"], bool):
        raise EvalError(f"{where}.shared_sight: expected true or false")
    if header["ticks"] > header["tick_limit"]:
        raise EvalError(f"{where}.ticks: {header['ticks']} exceeds tick_limit")


def _agrees(header: dict[str, Any], arrays: dict[str, np.ndarray], source: str) -> None:
    """The header's identity and outcome must be what the arrays hold."""
    score, outcome = arrays["state.score"][-1], int(arrays["state.outcome"][-1])
    expect = {
        "ticks": arrays["state.tick"][-1], "points_a": score[0], "points_b": score[1],
        "map": arrays["state.map_id"], "a_spawn": "right" if arrays["state.swap"] else "left",
        "result": RESULT_OF_OUTCOME.get(outcome, UNFINISHED),
        **{k: arrays[f"state.rules.{k}"] for k in LIMITS},
    }  # fmt: skip
    for k, v in expect.items():
        said = header[k] if isinstance(v, str) else np.asarray(v).dtype.type(header[k])
        if said != v:
            raise EvalError(f"{source}: header.{k} is {shown(header[k])}, the arrays hold {v}")


# Values the engine never makes outside these bounds (inclusive); checked in every replay, so a
# file edited with recomputed checksums cannot feed a reader an index or a position it cannot use.
_BOUNDS = {
    "state.units.class_id": (0, len(MAX_HEALTH) - 1),
    "state.units.pos": (0.0, MAP_WIDTH),
    "state.units.health": (0.0, float(MAX_HEALTH.max())),
    "state.units.cooldown": (0, INT32_MAX),
    "state.units.last_move": (0, NUM_MOVES - 1),
    "state.units.last_target": (0, NUM_TARGETS - 1),
    "state.units.last_ult": (0, 1),
    "state.score": (0, INT32_MAX),
    "facts.accepted": (0, NUM_TARGETS - 1),
}


def _values(header: dict[str, Any], arrays: dict[str, np.ndarray], source: str) -> None:
    """Every bounded array within its bounds (and finite); `who` names a leaf or none."""
    for name, (low, high) in _BOUNDS.items():
        a = arrays[name]
        if a.size and not (np.all(np.isfinite(a)) and a.min() >= low and a.max() <= high):
            raise EvalError(f"{source}: array {name}: values outside [{low}, {high}]")
    if arrays["state.units.pos"][..., 1].max(initial=0.0) > MAP_HEIGHT:
        raise EvalError(f"{source}: array state.units.pos: y outside [0, {MAP_HEIGHT}]")
    for side, cols in (("a", slice(0, 5)), ("b", slice(5, 10))):
        who, leaves = arrays["who"][:, cols], len(header[f"leaves_{side}"])
        if who.size and not (who.min() >= -1 and who.max() < leaves):
            raise EvalError(f"{source}: array who: team {side.upper()} names no leaf in [-1, "
                            f"{leaves - 1}]")  # fmt: skip


def check(replay: Replay, source: str) -> None:
    """Raise EvalError unless the header fits the arrays and the values lie where the engine's
    do (the header and arrays already checked)."""
    _agrees(replay.header, replay.arrays, source)
    _values(replay.header, replay.arrays, source)


REPLAY = ReplaySchema(
    fields=FIELDS,
    check_header=check_header,
    layout=lambda header: layout(header["ticks"]),
    check=check,
    legacy=LEGACY,
    # Obstacles' rotations joined the state after the first files (kept to spare XLA sines).
    derived={"state.obstacles.turn": lambda a: rotation(a["state.obstacles.theta"])},
)
