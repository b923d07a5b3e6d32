"""Replay files: one zip per recorded game, read back only after every check passes.

A file (`FORMAT`) is a ZIP_DEFLATED zip of `header.json` and one NumPy `.npy` file per array,
named `<array>.npy` and written without pickles. `header.json` is a JSON object: the game's
identity, in the results table's column names (`HEADER_FIELDS`), and `arrays`, which lists
every array's shape, dtype and the SHA-256 of its `.npy` bytes. For a game of T ticks:

    state.<field>  [T + 1, ...]  the state before each tick, then the final state; the fields
                   [...]         a game never changes (`STATIC`) are stored once
    actions        int32 [T, 10, 3]  the actions the Systems chose (own frame)
    who            int32 [T, 10]     the leaf System acting for each slot (-1: none)
    masks.<field>  bool [T, 10, ...] both teams' legal actions, as the Systems were given them
    facts.<field>  [T, ...]          what each tick did (`facts.accepted` holds the repaired
                                     actions, `facts.move_rejected` / `combat_rejected` the flags)

`load` trusts nothing in a file and never runs anything from it: the member names must be exactly
the expected ones, every declared size is checked against fixed limits and against what the
array's shape needs before anything is read, members are read with a bounded read, every array's
checksum, dtype (numeric or bool, never object) and shape must match, the header must agree
with the arrays, and the arrays a reader indexes or draws with (classes, positions, health, last
actions, accepted actions, `who`) must hold values the engine can make (`_BOUNDS`). Every
refusal is an `EvalError` naming the file and the problem.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import re
import struct
import zipfile
from dataclasses import dataclass
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
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.results import HASH, RESULT_OF_OUTCOME, ROSTER

FORMAT = "marl-bgs-replay-v1"
HEADER = "header.json"
STATIC = ("obstacles", "free", "near", "rules", "swap", "map_id")
MAX_HEADER_BYTES = 1 << 20
MAX_MEMBER_BYTES = 64 << 20  # a 10,000-tick game's largest array is about 4 MiB
MAX_TOTAL_BYTES = 256 << 20
MAX_MEMBERS = 1024  # a replay has about a hundred
END_RECORD = 22  # bytes of a zip's end-of-central-directory record, without its comment
MAX_RATIO = 1100  # DEFLATE cannot compress beyond about 1032:1; a higher ratio is a lie
NPY_HEADER_BYTES = 4096  # room for a .npy file's own header
INT32_MAX = 2**31 - 1
SHA256 = re.compile(r"[0-9a-f]{64}")
ODD_NAME = re.compile(r"[/\\\x00:]|^\.{0,2}$")  # paths, drive letters, NUL, "", ".", ".."
Layout = dict[str, tuple[tuple[int, ...], np.dtype]]

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


@dataclass(frozen=True, eq=False)
class Replay:
    """One recorded game: `header` (JSON values, see `HEADER_FIELDS`) and `arrays` (numpy, see
    the module docstring). Two replays are equal when headers and arrays (with dtypes) are."""

    header: dict[str, Any]
    arrays: dict[str, np.ndarray]

    @property
    def ticks(self) -> int:
        """How many ticks the game lasted."""
        return int(self.header["ticks"])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Replay):
            return NotImplemented
        a, b = self.arrays, other.arrays
        return (
            self.header == other.header
            and a.keys() == b.keys()
            and all(a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in a)
        )


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


@functools.cache
def _one_game() -> tuple[Layout, Any]:
    """Each named array of one tick (shape, dtype), and the state's pytree structure."""
    env = engine_env()
    state = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape[2:], a.dtype), env.pool.states)
    actions = jax.ShapeDtypeStruct((env.num_agents, len(env.spec.action_heads)), jnp.int32)
    facts = jax.eval_shape(lambda s, a: env.mode.transition(s, a, None)[1], state, actions)
    masks = jax.eval_shape(env.mode.masks, state)
    who = jax.ShapeDtypeStruct((env.num_agents,), jnp.int32)
    parts = {
        **named_leaves("state", state), "actions": actions, "who": who,
        **named_leaves("masks", masks), **named_leaves("facts", facts),
    }  # fmt: skip
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


def _int(value: Any, field: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise EvalError(f"{field}: expected an integer in [{low}, {high}], got {_shown(value)}")
    return value


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_header(header: Any, source: str) -> None:
    """Raise EvalError unless `header` is a replay header of this format and engine mode."""
    where = f"{source}: header"
    if not isinstance(header, dict):
        raise EvalError(f"{where}: expected a JSON object, got {type(header).__name__}")
    fmt = header.get("format")
    if isinstance(fmt, str) and fmt != FORMAT and fmt.startswith("marl-bgs-replay-"):
        raise EvalError(f"{where}: format {_shown(fmt)}; this version reads only {FORMAT!r}")
    if fmt != FORMAT:
        raise EvalError(f"{where}: format is {_shown(fmt)}, expected {FORMAT!r} (not a replay?)")
    missing = [k for k in HEADER_FIELDS if k not in header]
    extra = sorted(str(k) for k in header if k not in HEADER_FIELDS)
    if missing or extra:
        raise EvalError(f"{where}: missing field(s) {missing}, unknown field(s) {extra[:5]}")
    if header["mode"] != mode_id():
        raise EvalError(
            f"{where}.mode: recorded in {_shown(header['mode'])}, this engine plays {mode_id()!r}"
        )
    for k, (low, high) in _INTS.items():
        _int(header[k], f"{where}.{k}", low, high)
    for k, (low, high) in _FLOATS.items():
        v = header[k]
        if isinstance(v, bool) or not isinstance(v, int | float) or not low <= v <= high:
            raise EvalError(f"{where}.{k}: expected a number in [{low}, {high}], got {_shown(v)}")
    for k, allowed in _CHOICES.items():
        if header[k] not in allowed:
            raise EvalError(
                f"{where}.{k}: expected one of {list(allowed)}, got {_shown(header[k])}"
            )
    for k, pattern in _PATTERNS.items():
        if not isinstance(header[k], str) or not pattern.fullmatch(header[k]):
            raise EvalError(f"{where}.{k}: expected {pattern.pattern}, got {_shown(header[k])}")
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
    if not isinstance(arrays, dict):
        raise EvalError(f"{source}: arrays: expected a dict, got {type(arrays).__name__}")
    want = layout(ticks)
    missing, extra = sorted(want.keys() - arrays.keys()), sorted(map(str, arrays.keys() - want))
    if missing or extra:
        raise EvalError(f"{source}: missing array(s) {missing[:5]}, unknown array(s) {extra[:5]}")
    for name, (shape, dtype) in want.items():
        a = arrays[name]
        if not isinstance(a, np.ndarray) or a.shape != shape or a.dtype != dtype:
            got = (a.shape, str(a.dtype)) if isinstance(a, np.ndarray) else type(a).__name__
            raise EvalError(f"{source}: array {name}: expected {shape} {dtype}, got {got}")


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
            raise EvalError(f"{source}: header.{k} is {_shown(header[k])}, the arrays hold {v}")


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


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.array(array, order="C"), allow_pickle=False)
    return buf.getvalue()


def _member(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # same replay, same bytes
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def save(replay: Replay, path: str | Path) -> Path:
    """Write `replay` to one file at `path` (checked first; the file appears whole or not at
    all). Returns the path."""
    check_replay(replay)
    path = Path(path)
    if not path.parent.is_dir():
        raise EvalError(f"path: folder {str(path.parent)!r} does not exist")
    if path.is_dir():
        raise EvalError(f"path: {str(path)!r} is a folder")
    blobs = {f"{k}.npy": _npy(v) for k, v in replay.arrays.items()}
    manifest = {
        k: {"shape": list(v.shape), "dtype": v.dtype.str, "sha256": _sha(blobs[f"{k}.npy"])}
        for k, v in replay.arrays.items()
    }
    text = json.dumps({**replay.header, "arrays": manifest}, indent=1, allow_nan=False)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w") as zf:
            zf.writestr(_member(HEADER), text.encode("utf-8"))
            for name, blob in blobs.items():
                zf.writestr(_member(name), blob)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load(path: str | Path) -> Replay:
    """Read a replay file written by `save`, checking everything (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise EvalError(f"path: replay file {str(path)!r} does not exist or is not a file")
    if path.stat().st_size > MAX_TOTAL_BYTES:
        raise EvalError(f"{path.name}: {path.stat().st_size} bytes, more than {MAX_TOTAL_BYTES}")
    _check_directory(path)
    try:
        with zipfile.ZipFile(path) as zf:
            return _read(zf, path.name)
    except EvalError:
        raise
    except Exception as err:  # a damaged zip: name the file, not the parser's internals
        raise EvalError(
            f"{path.name}: not a readable replay zip ({type(err).__name__}: {err})"
        ) from None


def _check_directory(path: Path) -> None:
    check_zip_directory(path, MAX_MEMBERS, "a replay")


def check_zip_directory(path: Path, max_members: int, kind: str) -> None:
    """Refuse a zip whose end record declares more members or a larger member list than `kind`
    has, before `zipfile` reads the list (a file of tiny entries would cost memory)."""
    with path.open("rb") as f:
        f.seek(max(0, path.stat().st_size - END_RECORD - 0xFFFF))
        tail = f.read()
    last = len(tail) - END_RECORD
    at = last if tail[last : last + 4] == b"PK\x05\x06" else tail.rfind(b"PK\x05\x06")
    if at < 0 or at + END_RECORD > len(tail):
        return  # no end record: zipfile says why it cannot read the file
    members, size = struct.unpack_from("<HI", tail, at + 10)
    if members > max_members or size > max_members * 1024:
        raise EvalError(
            f"{path.name}: declares {members} members in {size} bytes; {kind} has at most "
            f"{max_members}"
        )


def _read(zf: zipfile.ZipFile, source: str) -> Replay:
    infos = _check_members(zf.infolist(), source)
    raw = read_bounded(zf, infos[HEADER], MAX_HEADER_BYTES, source)
    header = _parse_json(raw, source)
    manifest = header.pop("arrays", None)
    check_header(header, source)
    want = layout(header["ticks"])
    _check_manifest(manifest, want, source)
    expected = {HEADER, *(f"{k}.npy" for k in want)}
    if set(infos) != expected:
        missing, extra = sorted(expected - set(infos)), sorted(set(infos) - expected)
        raise EvalError(f"{source}: missing member(s) {missing[:5]}, unknown member(s) {extra[:5]}")
    arrays = {}
    for name, (shape, dtype) in want.items():
        info, where = infos[f"{name}.npy"], f"{source}: {name}.npy"
        limit = int(np.prod(shape)) * dtype.itemsize + NPY_HEADER_BYTES
        data = read_bounded(zf, info, limit, source)
        if _sha(data) != manifest[name]["sha256"]:
            raise EvalError(f"{where}: checksum mismatch (the array was changed after writing)")
        arrays[name] = parse_npy(data, shape, dtype, where)
    _agrees(header, arrays, source)
    _values(header, arrays, source)
    return Replay(header=header, arrays=arrays)


def _check_members(infos: list[zipfile.ZipInfo], source: str) -> dict[str, zipfile.ZipInfo]:
    """Names, methods and declared sizes, before anything is read."""
    names = [i.filename for i in infos]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise EvalError(f"{source}: member(s) {repeated[:5]} appear more than once")
    for info in infos:
        where = f"{source}: member {_shown(info.filename)}"
        if ODD_NAME.search(info.filename):
            raise EvalError(f"{where}: a path or odd name; only plain names like 'actions.npy'")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise EvalError(f"{where}: compression method {info.compress_type}; allowed: 0, 8")
        if info.flag_bits & 0x1:
            raise EvalError(f"{where}: encrypted members are not allowed")
        if info.file_size > MAX_MEMBER_BYTES:
            raise EvalError(
                f"{where}: declares {info.file_size} bytes, more than the limit {MAX_MEMBER_BYTES}"
            )
        if info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise EvalError(
                f"{where}: declares a compression ratio above {MAX_RATIO}:1 (a zip bomb?)"
            )
    total = sum(i.file_size for i in infos)
    if total > MAX_TOTAL_BYTES:
        raise EvalError(f"{source}: declares {total} bytes in all, more than {MAX_TOTAL_BYTES}")
    if HEADER not in names:
        raise EvalError(f"{source}: no {HEADER} (not a replay file?)")
    return {i.filename: i for i in infos}


def read_bounded(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, source: str) -> bytes:
    """A member's bytes, never more than `limit` (a lying declared size inflates nothing)."""
    where = f"{source}: {info.filename}"
    if info.file_size > limit:
        raise EvalError(f"{where}: declares {info.file_size} bytes, at most {limit} expected")
    with zf.open(info) as f:
        data = f.read(info.file_size + 1)
    if len(data) != info.file_size:
        raise EvalError(f"{where}: holds {len(data)} bytes, declares {info.file_size}")
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_json(raw: bytes, source: str) -> dict[str, Any]:
    try:
        header = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError) as err:
        raise EvalError(f"{source}: {HEADER} is not JSON ({type(err).__name__})") from None
    if not isinstance(header, dict):
        raise EvalError(f"{source}: header: expected a JSON object, got {type(header).__name__}")
    return header


def _check_manifest(manifest: Any, want: Layout, source: str) -> None:
    where = f"{source}: header.arrays"
    if not isinstance(manifest, dict):
        raise EvalError(f"{where}: expected an object listing every array")
    missing, extra = sorted(want.keys() - manifest.keys()), sorted(manifest.keys() - want.keys())
    if missing or extra:
        raise EvalError(f"{where}: missing array(s) {missing[:5]}, unknown array(s) {extra[:5]}")
    for name, (shape, dtype) in want.items():
        entry = manifest[name]
        expected = {"shape": list(shape), "dtype": dtype.str}
        if not isinstance(entry, dict) or set(entry) != {"shape", "dtype", "sha256"}:
            raise EvalError(f"{where}.{name}: expected an object of shape, dtype and sha256")
        for k, v in expected.items():
            if entry[k] != v:
                raise EvalError(f"{where}.{name}.{k}: expected {v}, got {_shown(entry[k])}")
        if not isinstance(entry["sha256"], str) or not SHA256.fullmatch(entry["sha256"]):
            raise EvalError(f"{where}.{name}.sha256: expected 64 hex digits")


def parse_npy(data: bytes, shape: tuple[int, ...], dtype: np.dtype, where: str) -> np.ndarray:
    """The array in `.npy` bytes, parsed by hand: the header is read as a literal, the data is
    never unpickled, and nothing is allocated before the shape and dtype are known to fit."""
    f, fmt = io.BytesIO(data), np.lib.format
    try:
        version = fmt.read_magic(f)
        read = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0}
        if version not in read:
            raise ValueError(f"unsupported .npy version {version}")
        got_shape, fortran, got_dtype = read[version](f)
    except Exception as err:  # numpy's header parser on hostile bytes: any failure is a refusal
        raise EvalError(f"{where}: not a .npy array ({type(err).__name__})") from None
    if got_dtype.kind not in "biuf" or got_dtype.hasobject or got_dtype.fields:
        raise EvalError(f"{where}: dtype {got_dtype} is not allowed (numeric and bool only)")
    if got_dtype != dtype or tuple(got_shape) != shape:
        raise EvalError(f"{where}: holds {tuple(got_shape)} {got_dtype}, expected {shape} {dtype}")
    if fortran:
        raise EvalError(f"{where}: Fortran order is not allowed (C order only)")
    body, need = data[f.tell() :], int(np.prod(shape)) * dtype.itemsize
    if len(body) != need:
        raise EvalError(f"{where}: holds {len(body)} data bytes, its shape needs {need}")
    return np.frombuffer(body, dtype).reshape(shape).copy()
