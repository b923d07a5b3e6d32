"""Replay files: one zip per recorded game, read back only after every check passes.

A file (`FORMAT`) is an array zip (`marl_bgs_eval.array_zip`): `header.json` holds the game's
identity, in the results table's column names (`HEADER_FIELDS`), and the arrays are, for a game
of T ticks:

    state.<field>  [T + 1, ...]  the state before each tick, then the final state; the fields
                   [...]         a game never changes (`STATIC`) are stored once
    actions        int32 [T, 10, 3]  the actions the Systems chose (own frame)
    who            int32 [T, 10]     the leaf System acting for each slot (-1: none)
    masks.<field>  bool [T, 10, ...] both teams' legal actions, as the Systems were given them
    facts.<field>  [T, ...]          what each tick did (`facts.accepted` holds the repaired
                                     actions, `facts.move_rejected` / `combat_rejected` the flags)

`load` trusts nothing in a file and never runs anything from it: the container's checks (member
names, declared sizes, bounded reads, checksums, dtypes and shapes), then the header must agree
with the arrays, and the arrays a reader indexes or draws with (classes, positions, health, last
actions, accepted actions, `who`) must hold values the engine can make (`_BOUNDS`). Every
refusal is an `EvalError` naming the file and the problem.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import marl_bgs
from marl_bgs.core.arena import MAP_HEIGHT, MAP_WIDTH, NUM_MOVES
from marl_bgs.tdm.classes import MAX_HEALTH
from marl_bgs.tdm.config import LIMITS
from marl_bgs.tdm.constants import NUM_TARGETS
from marl_bgs.tdm.mode import TDMEnv
from marl_bgs_eval import array_zip
from marl_bgs_eval.array_zip import Layout, Replay, check_fields, header_int, shown
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.results import HASH
from marl_bgs_eval.tdm.results import RESULT_OF_OUTCOME, ROSTER

FORMAT = "marl-bgs-replay-v1"
STATIC = ("obstacles", "free", "near", "rules", "swap", "map_id")
INT32_MAX = 2**31 - 1

_INTS = {
    "game": (0, INT32_MAX),
    "seed": (0, 2**63 - 1),
    "seed_number": (0, INT32_MAX),
    "map": (-1, INT32_MAX),
    "points_a": (0, INT32_MAX),
    "points_b": (0, INT32_MAX),
    "ticks": LIMITS["tick_limit"],
    **{k: v for k, v in LIMITS.items() if isinstance(v[0], int)},
}
_FLOATS = {k: v for k, v in LIMITS.items() if isinstance(v[0], float)}
UNFINISHED = "unfinished"  # the result of a game saved before it ended (a person stopped)
_CHOICES = {
    "a_spawn": ("left", "right"),
    "result": (*RESULT_OF_OUTCOME.values(), UNFINISHED),
}
_PATTERNS = {"map_hash": HASH, "roster_a": ROSTER, "roster_b": ROSTER}
_TEXTS = ("engine", "system_a", "system_b", "map_name")
_NAME_LISTS = ("leaves_a", "leaves_b")
HEADER_FIELDS = (
    "format", "engine", "mode", *_INTS, *_FLOATS, *_CHOICES, *_PATTERNS, *_TEXTS, *_NAME_LISTS,
    "shared_sight",
)  # fmt: skip


@functools.cache
def engine_env(shared_sight: bool = True) -> TDMEnv:
    """A one-game env of the engine's Team Deathmatch (views, masks and steps of replays)."""
    return marl_bgs.make("tdm", num_envs=1, shared_sight=shared_sight)


def named_leaves(prefix: str, tree: Any) -> dict[str, Any]:
    """A pytree's leaves by dotted path: `prefix.field.subfield` (the names of replay arrays)."""
    leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
    return {prefix + jax.tree_util.keystr(path): leaf for path, leaf in leaves}


def is_static(name: str) -> bool:
    """Whether array `name` is a state field stored once (not per tick)."""
    return name.startswith("state.") and name.split(".")[1] in STATIC


def tick_parts(env: Any, state: Any) -> tuple[dict[str, Any], Any]:
    """The named arrays of one recorded tick of `env` from a one-game `state` of shapes
    (`state.`, `actions`, `masks.`, `facts.`), and the facts' pytree structure."""
    actions = jax.ShapeDtypeStruct((env.num_agents, len(env.spec.action_heads)), jnp.int32)
    facts = jax.eval_shape(lambda s, a: env.mode.transition(s, a, None)[1], state, actions)
    masks = jax.eval_shape(env.mode.masks, state)
    parts = {
        **named_leaves("state", state), "actions": actions, **named_leaves("masks", masks),
        **named_leaves("facts", facts),
    }  # fmt: skip
    return parts, jax.tree.structure(facts)


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


def check_header(header: Any, source: str) -> None:
    """Raise EvalError unless `header` is a replay header of this format and engine mode."""
    where = f"{source}: header"
    if not isinstance(header, dict):
        raise EvalError(f"{where}: expected a JSON object, got {type(header).__name__}")
    fmt = header.get("format")
    if isinstance(fmt, str) and fmt != FORMAT and fmt.startswith("marl-bgs-replay-"):
        raise EvalError(f"{where}: format {shown(fmt)}; this version reads only {FORMAT!r}")
    if fmt != FORMAT:
        raise EvalError(f"{where}: format is {shown(fmt)}, expected {FORMAT!r} (not a replay?)")
    check_fields(header, HEADER_FIELDS, where)
    if header["mode"] != mode_id():
        raise EvalError(
            f"{where}.mode: recorded in {shown(header['mode'])}, this engine plays {mode_id()!r}"
        )
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


def check_arrays(arrays: Any, ticks: int, source: str) -> None:
    """Raise EvalError unless `arrays` holds exactly the arrays of a `ticks`-tick replay."""
    array_zip.check_arrays(arrays, layout(ticks), source)


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


def check_replay(replay: Any, source: str = "replay") -> None:
    """Raise EvalError unless `replay` is a well-formed `Replay` whose header fits its arrays
    and whose values lie where the engine's do."""
    if not isinstance(replay, Replay):
        raise EvalError(f"{source}: expected a Replay, got {type(replay).__name__}")
    check_header(replay.header, source)
    check_arrays(replay.arrays, replay.ticks, source)
    _agrees(replay.header, replay.arrays, source)
    _values(replay.header, replay.arrays, source)


# --- files ------------------------------------------------------------------------------------


def save(replay: Replay, path: str | Path) -> Path:
    """Write `replay` to one file at `path` (checked first; the file appears whole or not at
    all). Returns the path."""
    check_replay(replay)
    return array_zip.write(replay, path)


def load(path: str | Path) -> Replay:
    """Read a replay file written by `save`, checking everything (see the module docstring)."""
    replay = array_zip.read(path, "replay", check_header, lambda h: layout(h["ticks"]))
    _agrees(replay.header, replay.arrays, Path(path).name)
    _values(replay.header, replay.arrays, Path(path).name)
    return replay
