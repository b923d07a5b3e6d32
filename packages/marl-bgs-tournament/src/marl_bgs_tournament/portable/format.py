"""What a System file is: its constants and limits, names, the engine's inputs it must expect,
and the checks of its manifest (each message names the first bad field)."""

from __future__ import annotations

import functools
import hashlib
import io
import math
import re
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import marl_bgs
from marl_bgs import ConfigError, ModeSpec, team_inputs
from marl_bgs_eval.safe_zip import NPY_HEADER_BYTES
from marl_bgs_tournament.errors import TournamentError

FORMAT = "marl-bgs-system"
FORMAT_VERSION = 1
SUFFIX = ".mbgs"
MANIFEST = "manifest.json"
BATCH_SIZES = (1, 16, 128, 512)  # 512: the rulebook's play-limit batch
MAX_BATCH_SIZES = 16  # exported batch sizes in one file
PLATFORMS = ("cpu", "cuda")
MAX_FILE_BYTES = 512 << 20  # the whole file on disk (hashed and copied, never held)
MAX_UNPACKED_BYTES = 256 << 20  # all members together, as declared and as read
MAX_MANIFEST_BYTES = 1 << 20
MAX_PROGRAM_BYTES = 64 << 20  # one serialized program
MAX_MEMBERS = 4096  # zip entries, counted before the member list is read
MAX_MEMORY_BYTES = 1 << 20  # per game: memory is for the game, not for learning across games
MAX_BATCH = 4096
MAX_LEAF_ELEMENTS = 1 << 31  # one weight or memory leaf
MAX_RANK = 8  # dimensions of one leaf
DTYPES = ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "float32")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
SHA256 = re.compile(r"[0-9a-f]{64}")
MANIFEST_KEYS = (
    "format", "format_version", "name", "team", "mode", "engine_version", "created",
    "batch_sizes", "per_agent", "classes", "inputs", "memory", "params", "training", "members",
)  # fmt: skip
Spec = list[tuple[tuple[int, ...], str]]  # [(shape without the game axis, dtype name), ...]


def sha256(data: bytes) -> str:
    """64 hex digits."""
    return hashlib.sha256(data).hexdigest()


def weight_bytes(x: Any) -> bytes:
    """One weight leaf as a System file stores it: `.npy` bytes, C order, never pickled."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.array(x, order="C"), allow_pickle=False)
    return buf.getvalue()


def weight_sha256(x: Any) -> str:
    """The sha256 a manifest lists for a weight leaf (`param-<k>.npy`)."""
    return sha256(weight_bytes(x))


def check_name(value: Any, field: str) -> str:
    """A System or team name: 1-64 letters, digits and `_.+-`, starting with a letter or digit."""
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise TournamentError(
            f"{field}: expected 1-64 letters, digits or '_.+-' (starting with a letter or "
            f"digit), got {value!r}"
        )
    return value


# --- what an agent team sees: a mode's inputs, one game ----------------------------------------


def mode_of(value: Any, where: str) -> str:
    """A System file's mode: the versioned id of a mode this engine registers (e.g. 'tdm-v2')."""
    try:
        known = isinstance(value, str) and marl_bgs.kit(value).id == value
    except ConfigError:
        known = False
    if not known:  # marl_bgs.kit above loaded the entry points: MODES is whole
        raise TournamentError(
            f"{where}: made for mode {str(value)[:80]!r}; this engine plays the versioned modes "
            f"{sorted(marl_bgs.MODES)} (export the System again with this engine)"
        )
    return str(value)


@functools.cache
def _example(mode_id: str, layout: str | None) -> tuple[ModeSpec, Any]:
    kit = marl_bgs.kit(mode_id)
    settings = {} if layout is None or kit.layouts is None else {kit.layouts.keyword: layout}
    env = kit.build(num_envs=1, **settings)
    inputs = jax.eval_shape(lambda k: team_inputs(env, env.reset(k)[1])[0], jax.random.key(0))
    return env.spec, inputs


def layout_of(mode: str, layout: str | int | None) -> str | None:
    """The first layout `layout` picks (a `Layouts.select` text or an index; None: the mode's
    default), if all it picks share the shapes of their inputs."""
    kit = marl_bgs.kit(mode)
    if layout is None:
        return None
    if kit.layouts is None:
        raise TournamentError(f"layout: mode {kit.id!r} has no layouts to choose")
    try:
        picked = kit.layouts.select(str(layout))
    except ConfigError as err:
        raise TournamentError(f"layout: {err}") from None
    if len(kit.layouts.shape_groups(picked)) != 1:
        raise TournamentError(
            f"layout: {layout!r} picks layouts of {kit.id} whose inputs differ in shape; pick "
            "one layout or layouts of one shape group"
        )
    return kit.layouts.names[picked[0]]


def mode_spec(mode: str) -> ModeSpec:
    """The static spec of a mode (id or alias): its teams and action heads."""
    return _example(marl_bgs.kit(mode).id, None)[0]


def inputs_example(mode: str, layout: str | int | None = None) -> Any:
    """Team A's inputs in one fresh game of `mode` on `layout` (a name or index; None: the mode's
    default), as shape structs: the same in every game on layouts of one shape group."""
    return _example(marl_bgs.kit(mode).id, layout_of(mode, layout))[1]


def leaf_spec(leaves: Sequence[Any]) -> list[list[Any]]:
    """[[shape without the game axis, dtype name], ...]."""
    return [[list(np.shape(x)[1:]), str(jnp.result_type(x))] for x in leaves]


def input_spec(mode: str = "tdm", layout: str | int | None = None) -> list[list[Any]]:
    """The per-game shape and dtype of every leaf of `TeamInputs` in `mode` (id or alias) on
    `layout` (see `inputs_example`)."""
    return leaf_spec(jax.tree.leaves(inputs_example(mode, layout)))


@functools.cache
def input_specs(mode_id: str) -> tuple[tuple[tuple[tuple[int, ...], str], ...], ...]:
    """The input specs a System file of `mode_id` may declare: one per shape group of its
    layouts (a mode whose layouts all share shapes, or that has none: its default build's)."""
    lay = marl_bgs.kit(mode_id).layouts
    picks: list[str | None] = [None]
    if lay is not None and lay.group is not None:
        picks = [lay.names[g[0]] for g in lay.shape_groups(range(len(lay.names)))]
    specs = (tuple(spec_list(leaf_spec(jax.tree.leaves(_example(mode_id, p)[1])), mode_id))
             for p in picks)  # fmt: skip
    return tuple(dict.fromkeys(specs))


# --- the manifest ------------------------------------------------------------------------------


def spec_list(value: Any, where: str) -> Spec:
    """A manifest's list of [shape, dtype] entries, checked (at most `MAX_MEMBERS` of them)."""
    if not isinstance(value, list) or len(value) > MAX_MEMBERS:
        raise TournamentError(f"{where}: expected a list of [shape, dtype] entries")
    out = []
    for k, entry in enumerate(value):
        ok = (
            isinstance(entry, list)
            and len(entry) == 2
            and isinstance(entry[0], list)
            and len(entry[0]) <= MAX_RANK
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


def spec_bytes(spec: Spec) -> int:
    """The bytes of one game's (or one set of weights') leaves."""
    return sum(math.prod(s) * jnp.dtype(d).itemsize for s, d in spec)


def check_manifest(m: Any, source: str) -> dict[str, Any]:
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
    mode = mode_of(m["mode"], f"{source}: manifest.mode")
    sizes = m["batch_sizes"]
    if (
        not isinstance(sizes, list)
        or not sizes
        or len(sizes) > MAX_BATCH_SIZES
        or any(isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= MAX_BATCH
               for b in sizes)
        or sizes != sorted(set(sizes))
    ):  # fmt: skip
        raise TournamentError(
            f"{source}: manifest.batch_sizes: expected 1-{MAX_BATCH_SIZES} increasing sizes in "
            f"[1, {MAX_BATCH}]"
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
    if tuple(spec_list(m["inputs"], f"{source}: manifest.inputs")) not in input_specs(mode):
        raise TournamentError(
            f"{source}: manifest.inputs: the file expects other observations than this engine's "
            f"TeamInputs of {mode}; export it again with this engine"
        )
    per_game = spec_bytes(spec_list(m["memory"], f"{source}: manifest.memory"))
    if per_game > MAX_MEMORY_BYTES:
        raise TournamentError(
            f"{source}: manifest.memory: {per_game} bytes per game, more than the rulebook's "
            f"{MAX_MEMORY_BYTES}"
        )
    spec_list(m["params"], f"{source}: manifest.params")
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


def program_names(m: dict[str, Any]) -> list[str]:
    """The programs a (checked) manifest lists: act-<B> and init-<B> for each batch size."""
    return [f"{kind}-{b}.jaxexport" for b in m["batch_sizes"] for kind in ("act", "init")]


def weight_name(k: int) -> str:
    """The member of the k-th weight leaf."""
    return f"param-{k:04d}.npy"


def members_wanted(m: dict[str, Any]) -> set[str]:
    """Every member but the manifest that a (checked) manifest's file holds."""
    return {*program_names(m), *(weight_name(k) for k in range(len(m["params"])))}


def _check_members(m: dict[str, Any], source: str) -> None:
    members = m["members"]
    if not isinstance(members, dict) or set(members) != members_wanted(m):
        raise TournamentError(
            f"{source}: manifest.members: expected sha256 of exactly "
            f"{sorted(members_wanted(m))[:6]}..."
        )
    for k, v in members.items():
        if not isinstance(v, str) or not SHA256.fullmatch(v):
            raise TournamentError(f"{source}: manifest.members.{k}: expected 64 hex digits")


def member_limits(m: dict[str, Any]) -> dict[str, int]:
    """The most unpacked bytes each member of a (checked) manifest's file may hold: the
    manifest's bound, a program's cap, or a weight's exact size plus room for its .npy header."""
    limits = {MANIFEST: MAX_MANIFEST_BYTES, **dict.fromkeys(program_names(m), MAX_PROGRAM_BYTES)}
    for k, spec in enumerate(spec_list(m["params"], "params")):
        limits[weight_name(k)] = spec_bytes([spec]) + NPY_HEADER_BYTES
    return limits
