"""Replay files of every mode: one zip per recorded game, read back only after every check passes.

A file (`FORMAT`) is an array zip (`marl_bgs_eval.array_zip`). `header.json` holds `format`,
`engine` (the engine version that played it), `mode` (the versioned mode id, e.g. `tdm-v2`),
`ticks`, and the mode's own fields. Which arrays a tick holds (names, shapes, dtypes) and which
values a reader may rely on come from the mode's `ReplaySchema`, found by mode id in
`marl_bgs_eval.modes.PARTS` (Team Deathmatch: `marl_bgs_eval.tdm.replay`; single-team modes:
`marl_bgs_eval.episode_replays`). Nothing here knows a mode.

    replay = load("game-0.replay.zip")      # any mode; checked before it is returned
    replay.header["mode"]                   # "tdm-v2", "two-bridge-v1", ...
    save(replay, "copy.replay.zip")

Files of the formats before this one (`marl-bgs-replay-v1` of Team Deathmatch,
`marl-bgs-episode-replay-v1` of single-team modes) still load: a mode's schema names its old
format (`legacy`), whose header and arrays are this format's, and `load` returns it as a replay
of this format. `load` trusts nothing and never runs anything from a file: the container's
checks, the generic header fields, the mode's header fields, arrays and values. Every refusal is
an `EvalError` naming the file and the problem.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp

from marl_bgs import ConfigError
from marl_bgs.core.checks import shown
from marl_bgs.core.kits import KITS, load_entry_points
from marl_bgs_eval import array_zip
from marl_bgs_eval.array_zip import Layout, Replay, check_fields, header_int
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.modes import PARTS

FORMAT = "marl-bgs-replay-v2"
FIELDS = ("format", "engine", "mode", "ticks")  # every replay's header has these
MAX_TICKS = 1_000_000


@dataclass(frozen=True)
class ReplaySchema:
    """What a mode's replay files hold (the mode's `EvalParts.replay`).

    `fields`: the mode's own header fields (besides `FIELDS`); `check_header(header, where)`
    vets them (EvalError naming the field); `layout(header)` is every array of a file with that
    (checked) header, name -> (shape, dtype); `check(replay, source)` checks the values a
    reader relies on (the header agrees with the arrays, indices and positions in bounds, or a
    replay through the engine); `legacy`: the format id of the mode's files before `FORMAT`,
    whose headers and arrays are the same (loaded as this format), or ""; `optional`: header
    fields some of its files add; `derived`: arrays of the layout that files written before
    they were added lack, each worked out from the others on loading (name -> function of the
    arrays)."""

    fields: tuple[str, ...]
    check_header: Callable[[dict[str, Any], str], None]
    layout: Callable[[dict[str, Any]], Layout]
    check: Callable[[Replay, str], None]
    legacy: str = ""
    optional: tuple[str, ...] = ()
    derived: array_zip.Derived = field(default_factory=dict)


def named_leaves(prefix: str, tree: Any) -> dict[str, Any]:
    """A pytree's leaves by dotted path: `prefix.field.subfield` (the names of replay arrays)."""
    leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
    return {prefix + jax.tree_util.keystr(path): leaf for path, leaf in leaves}


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


def schema(mode: Any, where: str = "mode") -> ReplaySchema:
    """The replay schema of versioned mode id `mode`; EvalError naming the modes this engine
    plays when it is not one (another version of a mode included)."""
    load_entry_points()
    if not isinstance(mode, str) or mode not in KITS:
        raise EvalError(f"{where}: recorded in {shown(mode)}, this engine plays {sorted(KITS)}")
    try:
        part = PARTS.get(mode).replay
    except ConfigError as err:
        raise EvalError(f"{where}: {err}") from None
    if part is None:
        raise EvalError(f"{where}: mode {mode!r} has no replay schema (its EvalParts.replay)")
    return part


def _formats(header: dict[str, Any], where: str) -> ReplaySchema:
    """The header's mode schema, after turning a legacy format it names into `FORMAT`."""
    fmt = header.get("format")
    if fmt == FORMAT:
        return schema(header.get("mode"), f"{where}.mode")
    if isinstance(fmt, str) and fmt.startswith("marl-bgs-"):
        part = schema(header.get("mode"), f"{where}.mode")
        if fmt == part.legacy:
            header["format"] = FORMAT  # the same header and arrays: read as this format
            return part
        raise EvalError(f"{where}: format {shown(fmt)}; this version reads {FORMAT!r}" +
                        (f" and {part.legacy!r}" if part.legacy else ""))  # fmt: skip
    raise EvalError(f"{where}: format is {shown(fmt)}, expected {FORMAT!r} (not a replay?)")


def check_header(header: Any, source: str) -> None:
    """Raise EvalError unless `header` is a replay header of this format (or a legacy one, which
    is turned into this format in place) of a mode this engine plays."""
    where = f"{source}: header"
    if not isinstance(header, dict):
        raise EvalError(f"{where}: expected a JSON object, got {type(header).__name__}")
    part = _formats(header, where)
    check_fields(header, (*FIELDS, *part.fields), where, part.optional)
    if not isinstance(header["engine"], str) or not 0 < len(header["engine"]) <= 200:
        raise EvalError(f"{where}.engine: expected a text of 1-200 characters")
    header_int(header["ticks"], f"{where}.ticks", 0, MAX_TICKS)
    part.check_header(header, where)


def layout(header: dict[str, Any]) -> Layout:
    """Every array of a replay with this (checked) header: name -> (shape, dtype)."""
    return schema(header["mode"]).layout(header)


def derived(header: dict[str, Any]) -> array_zip.Derived:
    """The arrays older files of this (checked) header's mode may lack, and how each is made."""
    return schema(header["mode"]).derived


def check_replay(replay: Any, source: str = "replay", values: bool = True) -> None:
    """Raise EvalError unless `replay` is a well-formed `Replay` of this format whose arrays
    fit its header and (unless `values` is False) whose values pass its mode's checks."""
    if not isinstance(replay, Replay):
        raise EvalError(f"{source}: expected a Replay, got {type(replay).__name__}")
    if replay.header.get("format") != FORMAT:
        raise EvalError(f"{source}: header: format is {shown(replay.header.get('format'))}, "
                        f"expected {FORMAT!r}")  # fmt: skip
    check_header(replay.header, source)
    array_zip.check_arrays(replay.arrays, layout(replay.header), source)
    if values:
        schema(replay.header["mode"]).check(replay, source)


def save(replay: Replay, path: str | Path) -> Path:
    """Write `replay` to one file at `path` (checked first; the file appears whole or not at
    all). Returns the path."""
    check_replay(replay)
    return array_zip.write(replay, path)


def load(path: str | Path) -> Replay:
    """Read a replay file of any mode (this format or a legacy one), checking everything (see
    the module docstring); the replay returned is of this format."""
    replay = array_zip.read(path, "replay", check_header, layout, derived)
    schema(replay.header["mode"]).check(replay, Path(path).name)
    return replay
