"""Writing a System file: a pure-JAX System's act and init exported with `jax.export` at each
batch size, its weights as `.npy` leaves, and the manifest that describes them."""

from __future__ import annotations

import json
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
from marl_bgs_eval import System
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable.format import (
    BATCH_SIZES,
    DTYPES,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    MAX_BATCH,
    MAX_UNPACKED_BYTES,
    PLATFORMS,
    check_manifest,
    check_name,
    inputs_example,
    leaf_spec,
    member_limits,
    mode_spec,
    sha256,
    weight_bytes,
    weight_name,
)


def _flat_functions(sys: System, example: Any) -> tuple[Callable, Callable, list[Any]]:
    """act and init over flat leaves (weights, key data, memory, inputs like `example`); the
    weights' leaves."""
    params = [] if sys.params is None else jax.tree.leaves(sys.params)
    p_tree = None if sys.params is None else jax.tree.structure(sys.params)
    in_tree = jax.tree.structure(example)

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


def _check_sizes(members: dict[str, bytes], limits: dict[str, int]) -> None:
    """Refuse to write a file the reader would refuse for its size."""
    for member, data in members.items():
        if len(data) > limits[member]:
            raise TournamentError(
                f"system: {member} takes {len(data)} bytes, more than the limit {limits[member]}"
            )
    total = sum(len(data) for data in members.values())
    if total > MAX_UNPACKED_BYTES:
        raise TournamentError(
            f"system: its members take {total} bytes, more than the limit {MAX_UNPACKED_BYTES} "
            "of a whole System file"
        )


def export_system(
    sys: System,
    path: str | Path,
    *,
    team: str,
    name: str | None = None,
    training: dict[str, Any] | None = None,
    batch_sizes: Sequence[int] = BATCH_SIZES,
    platforms: Sequence[str] = PLATFORMS,
    layout: str | int | None = None,
) -> dict[str, Any]:
    """Write `sys` (a pure-JAX System) to one portable file for the mode it plays (`sys.mode`);
    returns its manifest.

    `training` declares what its training touched: {"maps": [map ids], "scenarios": [names]}
    (the rulebook refuses test maps and scenarios; None: undeclared, which the rulebook refuses).
    `layout` (a name or index) picks the inputs' shapes where a mode's layouts differ in them
    (Two-Bridge's variant families V1, V2, V3); the file then plays that layout's shape group.
    Default: the mode's default build (every Team Deathmatch map shares its shapes).
    """
    sizes = _check_exportable(sys, team, batch_sizes)
    name = check_name(sys.name if name is None else name, "name")
    example = inputs_example(sys.mode, layout)
    act, init, params = _flat_functions(sys, example)
    params = [jnp.asarray(x) for x in params]  # the dtypes the programs see (float64 -> float32)
    odd = sorted({str(x.dtype) for x in params} - set(DTYPES))
    if odd:
        raise TournamentError(f"params: weights of dtype {odd}; allowed: {list(DTYPES)}")
    p_specs = [jax.ShapeDtypeStruct(np.shape(x), jnp.result_type(x)) for x in params]
    in_leaves = jax.tree.leaves(example)
    size = mode_spec(sys.mode).team_size
    members: dict[str, bytes] = {}
    mem_spec: list[list[Any]] = []
    for b in sizes:
        kspec = jax.ShapeDtypeStruct((b, size, 2) if sys.per_agent else (b, 2), jnp.uint32)
        init_key = jax.ShapeDtypeStruct((b, 2), jnp.uint32)  # memory starts from one key a game
        ex_init = export.export(jax.jit(init), platforms=tuple(platforms))(p_specs, init_key)
        mem = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in ex_init.out_avals]
        ins = [jax.ShapeDtypeStruct((b, *x.shape[1:]), x.dtype) for x in in_leaves]
        ex_act = export.export(jax.jit(act), platforms=tuple(platforms))(p_specs, kspec, mem, ins)
        members[f"act-{b}.jaxexport"] = bytes(ex_act.serialize())
        members[f"init-{b}.jaxexport"] = bytes(ex_init.serialize())
        mem_spec = [[list(a.shape[1:]), str(a.dtype)] for a in ex_init.out_avals]
    for k, x in enumerate(params):
        members[weight_name(k)] = weight_bytes(x)
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "name": name,
        "team": team,
        "mode": sys.mode,
        "engine_version": marl_bgs.__version__,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "batch_sizes": sizes,
        "per_agent": bool(sys.per_agent),
        "classes": None if sys.classes is None else sorted(sys.classes),
        "inputs": leaf_spec(in_leaves),
        "memory": mem_spec,
        "params": leaf_spec([np.asarray(x)[None] for x in params]),
        "training": training,
        "members": {k: sha256(v) for k, v in sorted(members.items())},
    }
    check_manifest(manifest, "system")
    text = json.dumps(manifest, indent=1).encode()
    _check_sizes({MANIFEST: text, **members}, member_limits(manifest))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(MANIFEST, text)
            for member, data in members.items():
                zf.writestr(member, data)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return manifest
