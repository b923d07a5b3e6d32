"""Portable Systems: one file that plays in the tournament without the code that trained it.

A System file (`.mbgs`, a zip) holds no Python: its functions are compiled programs serialized
with `jax.export` (StableHLO), its weights plain `.npy` arrays read without unpickling.

    manifest.json      what the file is (see `MANIFEST_KEYS`), and the sha256 of every member
    act-<B>.jaxexport  act(params, key_data [B, 2], memory leaves [B, ...], input leaves [B, ...])
                       -> (actions int32 [B, 5, 3], memory leaves), for each batch size B
    init-<B>.jaxexport init(params, key_data [B, 2]) -> memory leaves [B, ...]
    param-<k>.npy      the weights, one array per leaf (none when they are baked into `act`)

The loaded System is parametric (`marl_bgs_eval.system(..., params=...)`): its weights are data,
so every file of one architecture shares the compiled programs of a pairing shape. A batch of n
games runs the smallest exported size B >= n, padded with copies of the first game (every game
is played on its own: a padded copy changes no real game's actions).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import math
import re
import zipfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

import marl_bgs
from marl_bgs import team_inputs
from marl_bgs_eval import EvalError, System, system
from marl_bgs_eval.array_zip import check_zip_directory, parse_npy, read_bounded
from marl_bgs_eval.replay_files import mode_id
from marl_bgs_tournament.errors import TournamentError

FORMAT = "marl-bgs-system"
FORMAT_VERSION = 1
SUFFIX = ".mbgs"
BATCH_SIZES = (1, 16, 128, 512)  # 512: the rulebook's play-limit batch
PLATFORMS = ("cpu", "cuda")
MAX_FILE_BYTES = 512 << 20  # the whole upload
MAX_MANIFEST_BYTES = 1 << 20
MAX_MEMBERS = 4096
MAX_MEMORY_BYTES = 1 << 20  # per game: memory is for the game, not for learning across games
MAX_BATCH = 4096
DTYPES = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "float32")
MAX_PROGRAM_BYTES = 64 << 20  # one serialized program
MAX_UNPACKED_BYTES = 1 << 30  # all members together, once read
MAX_LEAF_ELEMENTS = 1 << 31  # one weight or memory leaf
# The only custom calls a loaded program may make: sharding annotations, shape assertions and
# the GPU random-bit kernels JAX itself emits. No host callbacks, no linear-algebra kernels fed
# with crafted operands, no foreign code.
SAFE_CUSTOM_CALLS = frozenset({
    "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement",
    "shape_assertion", "cu_threefry2x32_ffi", "hip_threefry2x32_ffi", "AllocateBuffer",
})  # fmt: skip
UNSAFE_OPS = re.compile(r"\b(?:stablehlo|mhlo)\.(?:infeed|outfeed|send|recv)\b")
CUSTOM_CALL = re.compile(r"custom_call\s*@([\w.$-]+)|call_target_name\s*=\s*\"([^\"]*)\"")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
MANIFEST_KEYS = (
    "format", "format_version", "name", "team", "mode", "engine_version", "created",
    "batch_sizes", "per_agent", "classes", "inputs", "memory", "params", "training", "members",
)  # fmt: skip


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def weight_bytes(x: Any) -> bytes:
    """One weight leaf as a System file stores it: `.npy` bytes, C order, never pickled."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.array(x, order="C"), allow_pickle=False)
    return buf.getvalue()


def weight_sha256(x: Any) -> str:
    """The sha256 a manifest lists for a weight leaf (`param-<k>.npy`)."""
    return _sha(weight_bytes(x))


def check_name(value: Any, field: str) -> str:
    """A System or team name: 1-64 letters, digits and `_.+-`, starting with a letter or digit."""
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise TournamentError(
            f"{field}: expected 1-64 letters, digits or '_.+-' (starting with a letter or "
            f"digit), got {value!r}"
        )
    return value


# --- what an agent team sees: the engine's inputs, one game -----------------------------------


@functools.cache
def _inputs_example() -> Any:
    """Team A's inputs in one fresh game (their shapes are the same in every game and mode map)."""
    env = marl_bgs.make("tdm", num_envs=1)
    state = env.start_games(np.zeros(1, int), np.zeros(1, int), np.zeros(1, bool))
    return jax.eval_shape(lambda s: team_inputs(env, s)[0], state)


def _spec(leaves: Sequence[Any]) -> list[list[Any]]:
    """[[shape without the game axis, dtype name], ...]."""
    return [[list(np.shape(x)[1:]), str(jnp.result_type(x))] for x in leaves]


def input_spec() -> list[list[Any]]:
    """The per-game shape and dtype of every leaf of `TeamInputs` in this engine."""
    return _spec(jax.tree.leaves(_inputs_example()))


# --- export ------------------------------------------------------------------------------------


def _flat_functions(sys: System) -> tuple[Callable, Callable, list[Any]]:
    """act and init over flat leaves (weights, key data, memory, inputs); the weights' leaves."""
    params = [] if sys.params is None else jax.tree.leaves(sys.params)
    p_tree = None if sys.params is None else jax.tree.structure(sys.params)
    in_tree = jax.tree.structure(_inputs_example())

    def bound(p: list[Any]) -> System:
        return sys if p_tree is None else sys.bind(jax.tree.unflatten(p_tree, p))

    mem_tree = jax.tree.structure(jax.eval_shape(bound(params).init, jax.random.key(0)))

    def act(p: list[Any], key_data: jax.Array, mem: list[Any], inputs: list[Any]) -> Any:
        keys = jax.random.wrap_key_data(key_data)
        actions, new = bound(p).act(
            keys, jax.tree.unflatten(mem_tree, mem), jax.tree.unflatten(in_tree, inputs)
        )
        return jnp.asarray(actions, jnp.int32), jax.tree.leaves(new)

    def init(p: list[Any], key_data: jax.Array) -> list[Any]:
        keys = jax.random.wrap_key_data(key_data)
        return jax.tree.leaves(jax.vmap(bound(p).init)(keys))

    return act, init, params


def _check_exportable(sys: Any, team: str, batch_sizes: Sequence[int]) -> list[int]:
    if not isinstance(sys, System):
        raise TournamentError(f"system: expected a System, got {type(sys).__name__}")
    if sys.host:
        raise TournamentError(
            f"system: {sys.name!r} is a host System (Python called per tick); only pure-JAX "
            "Systems can be exported"
        )
    check_name(team, "team")
    sizes = sorted({int(b) for b in batch_sizes}) if batch_sizes else []
    if not sizes or any(not 1 <= b <= MAX_BATCH for b in sizes):
        raise TournamentError(
            f"batch_sizes: expected batch sizes in [1, {MAX_BATCH}], got {batch_sizes!r}"
        )
    return sizes


def export_system(
    sys: System,
    path: str | Path,
    *,
    team: str,
    name: str | None = None,
    training: dict[str, Any] | None = None,
    batch_sizes: Sequence[int] = BATCH_SIZES,
    platforms: Sequence[str] = PLATFORMS,
) -> dict[str, Any]:
    """Write `sys` (a pure-JAX System) to one portable file; returns its manifest.

    `training` declares what its training touched: {"maps": [map ids], "scenarios": [names]}
    (the rulebook refuses test maps and scenarios; None: undeclared, which the rulebook refuses).
    """
    sizes = _check_exportable(sys, team, batch_sizes)
    name = check_name(sys.name if name is None else name, "name")
    act, init, params = _flat_functions(sys)
    params = [jnp.asarray(x) for x in params]  # the dtypes the programs see (float64 -> float32)
    odd = sorted({str(x.dtype) for x in params} - set(DTYPES))
    if odd:
        raise TournamentError(f"params: weights of dtype {odd}; allowed: {list(DTYPES)}")
    p_specs = [jax.ShapeDtypeStruct(np.shape(x), jnp.result_type(x)) for x in params]
    in_leaves = jax.tree.leaves(_inputs_example())
    members: dict[str, bytes] = {}
    mem_spec: list[list[Any]] = []
    for b in sizes:
        kspec = jax.ShapeDtypeStruct((b, 5, 2) if sys.per_agent else (b, 2), jnp.uint32)
        init_key = jax.ShapeDtypeStruct((b, 2), jnp.uint32)  # memory starts from one key a game
        ex_init = export.export(jax.jit(init), platforms=tuple(platforms))(p_specs, init_key)
        mem = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in ex_init.out_avals]
        ins = [jax.ShapeDtypeStruct((b, *x.shape[1:]), x.dtype) for x in in_leaves]
        ex_act = export.export(jax.jit(act), platforms=tuple(platforms))(p_specs, kspec, mem, ins)
        members[f"act-{b}.jaxexport"] = bytes(ex_act.serialize())
        members[f"init-{b}.jaxexport"] = bytes(ex_init.serialize())
        mem_spec = [[list(a.shape[1:]), str(a.dtype)] for a in ex_init.out_avals]
    for k, x in enumerate(params):
        members[f"param-{k:04d}.npy"] = weight_bytes(x)
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "name": name,
        "team": team,
        "mode": mode_id(),
        "engine_version": marl_bgs.__version__,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "batch_sizes": sizes,
        "per_agent": bool(sys.per_agent),
        "classes": None if sys.classes is None else sorted(sys.classes),
        "inputs": input_spec(),
        "memory": mem_spec,
        "params": _spec([np.asarray(x)[None] for x in params]),
        "training": training,
        "members": {k: _sha(v) for k, v in sorted(members.items())},
    }
    _check_manifest(manifest, "system")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("manifest.json", json.dumps(manifest, indent=1))
            for member, data in members.items():
                zf.writestr(member, data)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return manifest


# --- checks ------------------------------------------------------------------------------------


def _spec_list(value: Any, where: str) -> list[tuple[tuple, str]]:
    if not isinstance(value, list) or len(value) > MAX_MEMBERS:
        raise TournamentError(f"{where}: expected a list of [shape, dtype] entries")
    out = []
    for k, entry in enumerate(value):
        ok = (
            isinstance(entry, list)
            and len(entry) == 2
            and isinstance(entry[0], list)
            and len(entry[0]) <= 8
            and all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 2**31
                    for d in entry[0])
            and entry[1] in DTYPES
        )  # fmt: skip
        if not ok:
            raise TournamentError(
                f"{where}[{k}]: expected [shape (list of sizes), dtype (bool, int8-32, uint8-32, "
                f"float16, float32)], got {str(entry)[:80]!r}"
            )
        if math.prod(entry[0]) > MAX_LEAF_ELEMENTS:
            raise TournamentError(f"{where}[{k}]: more than {MAX_LEAF_ELEMENTS} elements")
        out.append((tuple(entry[0]), entry[1]))
    return out


def _check_manifest(m: Any, source: str) -> dict[str, Any]:
    """Every field of a manifest, with a message naming the first bad one."""
    if not isinstance(m, dict):
        raise TournamentError(f"{source}: manifest.json must be a JSON object")
    missing = [k for k in MANIFEST_KEYS if k not in m]
    extra = sorted(set(m) - set(MANIFEST_KEYS))
    if missing or extra:
        raise TournamentError(f"{source}: manifest: missing {missing}, unknown {extra[:5]}")
    if m["format"] != FORMAT or m["format_version"] != FORMAT_VERSION:
        raise TournamentError(
            f"{source}: manifest.format: expected {FORMAT!r} version {FORMAT_VERSION}, got "
            f"{str(m['format'])[:40]!r} version {str(m['format_version'])[:10]!r}"
        )
    for key in ("engine_version", "created"):
        if not isinstance(m[key], str) or len(m[key]) > 64:
            raise TournamentError(
                f"{source}: manifest.{key}: expected text of at most 64 characters"
            )
    check_name(m["name"], f"{source}: manifest.name")
    check_name(m["team"], f"{source}: manifest.team")
    if m["mode"] != mode_id():
        raise TournamentError(
            f"{source}: manifest.mode: made for {str(m['mode'])[:80]!r}; this engine plays "
            f"{mode_id()!r} (export the System again with this engine)"
        )
    sizes = m["batch_sizes"]
    if (
        not isinstance(sizes, list)
        or not sizes
        or len(sizes) > 16
        or any(isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= MAX_BATCH
               for b in sizes)
        or sizes != sorted(set(sizes))
    ):  # fmt: skip
        raise TournamentError(
            f"{source}: manifest.batch_sizes: expected 1-16 increasing sizes in [1, {MAX_BATCH}]"
        )
    if not isinstance(m["per_agent"], bool):
        raise TournamentError(f"{source}: manifest.per_agent: expected true or false")
    classes = m["classes"]
    if classes is not None and (
        not isinstance(classes, list)
        or not classes
        or any(isinstance(c, bool) or c not in (1, 2, 3, 4, 5) for c in classes)
    ):
        raise TournamentError(f"{source}: manifest.classes: expected null or class ids 1-5")
    if _spec_list(m["inputs"], f"{source}: manifest.inputs") != _spec_list(input_spec(), "engine"):
        raise TournamentError(
            f"{source}: manifest.inputs: the file expects other observations than this engine's "
            "TeamInputs; export it again with this engine"
        )
    memory = _spec_list(m["memory"], f"{source}: manifest.memory")
    per_game = sum(math.prod(s) * jnp.dtype(d).itemsize for s, d in memory)
    if per_game > MAX_MEMORY_BYTES:
        raise TournamentError(
            f"{source}: manifest.memory: {per_game} bytes per game, more than the rulebook's "
            f"{MAX_MEMORY_BYTES}"
        )
    _spec_list(m["params"], f"{source}: manifest.params")
    _check_training(m["training"], f"{source}: manifest.training")
    _check_members(m, source)
    return m


def _check_training(t: Any, where: str) -> None:
    if t is None:
        return
    if not isinstance(t, dict) or set(t) - {"maps", "scenarios", "steps"}:
        raise TournamentError(f"{where}: expected null or {{maps, scenarios, steps}}")
    maps, scenarios = t.get("maps", []), t.get("scenarios", [])
    if not isinstance(maps, list) or any(
        isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < 1000 for x in maps
    ):
        raise TournamentError(f"{where}.maps: expected a list of map ids")
    if not isinstance(scenarios, list) or any(not isinstance(x, str) or len(x) > 64
                                              for x in scenarios):  # fmt: skip
        raise TournamentError(f"{where}.scenarios: expected a list of scenario names")
    steps = t.get("steps")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 0):
        raise TournamentError(f"{where}.steps: expected a non-negative integer or null")


def _members_wanted(m: dict[str, Any]) -> set[str]:
    names = {f"{kind}-{b}.jaxexport" for b in m["batch_sizes"] for kind in ("act", "init")}
    return names | {f"param-{k:04d}.npy" for k in range(len(m["params"]))}


def _check_members(m: dict[str, Any], source: str) -> None:
    members = m["members"]
    if not isinstance(members, dict) or set(members) != _members_wanted(m):
        raise TournamentError(
            f"{source}: manifest.members: expected sha256 of exactly "
            f"{sorted(_members_wanted(m))[:6]}..."
        )
    for k, v in members.items():
        if not isinstance(v, str) or not re.fullmatch(r"[0-9a-f]{64}", v):
            raise TournamentError(f"{source}: manifest.members.{k}: expected 64 hex digits")


def _open(path: Path, max_bytes: int) -> tuple[zipfile.ZipFile, dict[str, Any]]:
    source = path.name
    if not path.is_file():
        raise TournamentError(f"path: System file {str(path)!r} does not exist or is not a file")
    size = path.stat().st_size
    if size > max_bytes:
        raise TournamentError(f"{source}: {size} bytes, more than the limit {max_bytes}")
    try:
        check_zip_directory(path, MAX_MEMBERS, "a System file")
        zf = zipfile.ZipFile(path)
    except EvalError as err:
        raise TournamentError(str(err)) from None
    except Exception as err:
        raise TournamentError(
            f"{source}: not a System file (zip): {type(err).__name__}: {str(err)[:80]}"
        ) from None
    infos = {i.filename: i for i in zf.infolist()}
    if len(infos) != len(zf.infolist()) or "manifest.json" not in infos:
        zf.close()
        raise TournamentError(f"{source}: no single manifest.json (not a System file?)")
    try:
        raw = _read(zf, infos["manifest.json"], MAX_MANIFEST_BYTES, source)
        manifest = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
        _check_manifest(manifest, source)
        if set(infos) != _members_wanted(manifest) | {"manifest.json"}:
            extra = sorted(set(infos) - _members_wanted(manifest) - {"manifest.json"})
            raise TournamentError(
                f"{source}: members do not match the manifest (extra {extra[:5]})"
            )
    except (ValueError, RecursionError, UnicodeDecodeError) as err:
        zf.close()
        if isinstance(err, TournamentError):
            raise
        raise TournamentError(
            f"{source}: manifest.json is not JSON ({type(err).__name__})"
        ) from None
    except BaseException:
        zf.close()
        raise
    return zf, manifest


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _read(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, source: str) -> bytes:
    if info.flag_bits & 0x1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise TournamentError(f"{source}: {info.filename}: encrypted or unknown compression")
    try:
        return read_bounded(zf, info, limit, source)
    except EvalError as err:
        raise TournamentError(str(err)) from None
    except Exception as err:  # a damaged member (bad CRC, truncated stream)
        raise TournamentError(
            f"{source}: {info.filename}: unreadable ({type(err).__name__})"
        ) from None


def _limit(member: str, manifest: dict[str, Any]) -> int:
    """The most bytes a member may hold: a program's cap, or a weight's size plus its header."""
    if member.startswith("param-"):
        shape, dtype = _spec_list(manifest["params"], "params")[int(member[6:10])]
        return math.prod(shape) * jnp.dtype(dtype).itemsize + 4096
    return MAX_PROGRAM_BYTES


def read_manifest(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> dict[str, Any]:
    """The checked manifest of a System file, every member's hash verified; TournamentError
    names what is wrong (too large, not a zip, a field, a changed member)."""
    zf, manifest = _open(Path(path), max_bytes)
    with zf:
        for member, sha in manifest["members"].items():
            raw = _read(zf, zf.getinfo(member), _limit(member, manifest), Path(path).name)
            if _sha(raw) != sha:
                raise TournamentError(
                    f"{Path(path).name}: {member}: sha256 differs from the manifest (the file "
                    "was changed after export)"
                )
    return manifest


def file_sha256(path: str | Path) -> str:
    """The published identity of a System file: the sha256 of its bytes."""
    h = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- load --------------------------------------------------------------------------------------


def _vet(ex: export.Exported, where: str) -> None:
    """Refuse a program that could do more than compute: host callbacks or other custom calls
    outside `SAFE_CUSTOM_CALLS`, infeed/outfeed/send/recv, side effects, disabled safety checks,
    several devices, symbolic shapes, or no lowering for this machine's platform."""
    text = ex.mlir_module()
    calls = {a or b for a, b in CUSTOM_CALL.findall(text)} - SAFE_CUSTOM_CALLS
    problems = [f"custom calls {sorted(calls)[:4]}"] if calls else []
    if UNSAFE_OPS.search(text):
        problems.append("infeed/outfeed/send/recv")
    if ex.ordered_effects or ex.unordered_effects:
        problems.append("side effects")
    if ex.disabled_safety_checks:
        problems.append("disabled safety checks")
    if ex.nr_devices != 1:
        problems.append(f"{ex.nr_devices} devices")
    if any(not isinstance(d, int) for a in (*ex.in_avals, *ex.out_avals) for d in a.shape):
        problems.append("symbolic shapes")
    backend = {"gpu": "cuda"}.get(jax.default_backend(), jax.default_backend())
    if backend not in ex.platforms:
        problems.append(f"no lowering for {backend} (has {list(ex.platforms)})")
    if problems:
        raise TournamentError(f"{where}: refused: {'; '.join(problems)}")


Blobs = tuple[tuple[int, bytes, bytes], ...]  # (batch size, act program, init program)


@functools.cache
def _programs(blobs: Blobs) -> dict[int, tuple[export.Exported, export.Exported]]:
    """The deserialized (act, init) programs per batch size, each vetted (`_vet`)."""
    try:
        progs = {b: (export.deserialize(bytearray(a)), export.deserialize(bytearray(i)))
                 for b, a, i in blobs}  # fmt: skip
    except Exception as err:  # hostile or damaged bytes: the deserializer's message, named
        raise TournamentError(
            f"programs: not serialized JAX programs ({type(err).__name__})"
        ) from None
    for b, (act_ex, init_ex) in progs.items():
        _vet(act_ex, f"act-{b}.jaxexport")
        _vet(init_ex, f"init-{b}.jaxexport")
    return progs


@functools.cache
def _functions(blobs: Blobs) -> tuple:
    """act(params, keys, memory, inputs) and init(params, key) over the programs, one pair per
    distinct set of programs (files of one architecture share them, and so share compiled
    evaluation programs)."""
    progs = _programs(blobs)
    sizes = sorted(progs)

    def size_for(n: int) -> int:
        fit = [b for b in sizes if b >= n]
        if not fit:
            raise EvalError(f"batch_size: this System file plays at most {sizes[-1]} games at once")
        return fit[0]

    def pad(x: jax.Array, b: int) -> jax.Array:
        n = x.shape[0]
        return x if n == b else jnp.concatenate([x, jnp.repeat(x[:1], b - n, axis=0)])

    def act(params: tuple, keys: jax.Array, memory: list, inputs: Any) -> tuple[jax.Array, list]:
        n = inputs.obs.shape[0]
        b = size_for(n)
        args = [pad(x, b) for x in (jax.random.key_data(keys), *memory, *jax.tree.leaves(inputs))]
        actions, new = progs[b][0].call(list(params), args[0], args[1 : 1 + len(memory)],
                                        args[1 + len(memory) :])  # fmt: skip
        return actions[:n], [x[:n] for x in new]

    def batched_init(params: tuple, key_data: jax.Array) -> list:
        n = key_data.shape[0]
        b = size_for(n)
        return [x[:n] for x in progs[b][1].call(list(params), pad(key_data, b))]

    @jax.custom_batching.custom_vmap
    def init(params: tuple, key: jax.Array) -> list:
        return [x[0] for x in batched_init(params, jax.random.key_data(key)[None])]

    @init.def_vmap
    def _init_vmap(axis_size: int, in_batched: list, params: tuple, key: jax.Array) -> tuple:
        if any(jax.tree.leaves(in_batched[0])):
            raise EvalError("params: a System file's weights cannot differ between games")
        data = jax.random.key_data(key)
        if not in_batched[1]:
            data = jnp.broadcast_to(data, (axis_size, *data.shape))
        out = batched_init(params, data)
        return out, [True] * len(out)

    return act, init


def _check_signatures(blobs: Blobs, m: dict[str, Any]) -> None:
    """Each program takes and returns exactly what the manifest says, at its batch size."""
    params = _spec_list(m["params"], "params")
    memory = _spec_list(m["memory"], "memory")
    inputs = _spec_list(m["inputs"], "inputs")
    for b, (act_ex, init_ex) in _programs(blobs).items():
        key = ((b, 5, 2) if m["per_agent"] else (b, 2), "uint32")
        batched = [((b, *s), d) for s, d in memory]
        want = {
            "act": (params + [key] + batched + [((b, *s), d) for s, d in inputs],
                    [((b, 5, 3), "int32"), *batched]),
            "init": ([*params, ((b, 2), "uint32")], batched),  # one key a game
        }  # fmt: skip
        for kind, ex in (("act", act_ex), ("init", init_ex)):
            got = ([(tuple(a.shape), str(a.dtype)) for a in ex.in_avals],
                   [(tuple(a.shape), str(a.dtype)) for a in ex.out_avals])  # fmt: skip
            if got != want[kind]:
                raise TournamentError(
                    f"{kind}-{b}.jaxexport: its arguments or results differ from the manifest's "
                    "params, memory, inputs and per_agent"
                )


def load_system(
    path: str | Path, *, name: str | None = None, max_bytes: int = MAX_FILE_BYTES
) -> System:
    """The System in a file written by `export_system`, after every check of `read_manifest`."""
    path = Path(path)
    zf, manifest = _open(path, max_bytes)
    with zf:
        data = {}
        for member, sha in manifest["members"].items():
            raw = _read(zf, zf.getinfo(member), _limit(member, manifest), path.name)
            if _sha(raw) != sha:
                raise TournamentError(
                    f"{path.name}: {member}: sha256 differs from the manifest (the file was "
                    "changed after export)"
                )
            data[member] = raw
    params = []
    for k, (shape, dtype) in enumerate(_spec_list(manifest["params"], "params")):
        where = f"{path.name}: param-{k:04d}.npy"
        try:
            params.append(jnp.asarray(parse_npy(data[f"param-{k:04d}.npy"], shape,
                                                np.dtype(jnp.dtype(dtype)), where)))  # fmt: skip
        except EvalError as err:
            raise TournamentError(str(err)) from None
    blobs = tuple(
        (b, data[f"act-{b}.jaxexport"], data[f"init-{b}.jaxexport"])
        for b in manifest["batch_sizes"]
    )
    try:
        act, init = _functions(blobs)
        _check_signatures(blobs, manifest)
    except TournamentError as err:
        raise TournamentError(f"{path.name}: {err}") from None
    return system(
        act,
        name=check_name(manifest["name"] if name is None else name, "name"),
        init=init,
        per_agent=manifest["per_agent"],
        classes=manifest["classes"],
        params=tuple(params),
    )
