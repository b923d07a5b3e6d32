"""Loading a System file: its programs deserialized and vetted, its weights read into arrays,
and a parametric System over them. Files of one architecture (the same programs) share one pair
of functions, and so compiled evaluation programs, through a small cache keyed by the programs'
sha256; only a file that passed every check enters it."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

from marl_bgs_eval import EvalError, System, system
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable.format import (
    MAX_FILE_BYTES,
    check_name,
    program_names,
    spec_list,
)
from marl_bgs_tournament.portable.vet import Programs, check_signatures, vet
from marl_bgs_tournament.portable.zipread import SystemFile

MAX_CACHED_PROGRAMS = 8  # sets of programs kept deserialized, the least recently loaded dropped


@dataclass(frozen=True)
class Loaded:
    """One file's programs, deserialized and vetted, and the functions over them."""

    programs: Programs
    act: Callable
    init: Callable


_cache: OrderedDict[str, Loaded] = OrderedDict()


def programs_key(m: dict[str, Any]) -> str:
    """The identity of a (checked) manifest's programs: the sha256 of their names and sha256s
    (reading the file verifies every member against them)."""
    listed = "".join(f"{name} {m['members'][name]}\n" for name in program_names(m))
    return hashlib.sha256(listed.encode()).hexdigest()


def cached_keys() -> list[str]:
    """The programs' keys in the cache, least recently loaded first."""
    return list(_cache)


def _remember(key: str, loaded: Loaded) -> None:
    _cache[key] = loaded
    _cache.move_to_end(key)
    while len(_cache) > MAX_CACHED_PROGRAMS:
        _cache.popitem(last=False)


def _deserialize(blob: bytearray, where: str) -> export.Exported:
    """A program from its bytes, vetted (`vet`)."""
    try:
        ex = export.deserialize(blob)
    except Exception as err:  # hostile or damaged bytes: the deserializer's message, named
        raise TournamentError(
            f"{where}: not a serialized JAX program ({type(err).__name__})"
        ) from None
    vet(ex, where)
    return ex


def _functions(progs: Programs) -> tuple[Callable, Callable]:
    """act(params, keys, memory, inputs) and init(params, key) over the programs: a batch of n
    games runs the smallest exported size >= n, padded with copies of its first game."""
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
        leaves = jax.tree.leaves(inputs)
        want = [tuple(a.shape[1:]) for a in progs[b][0].in_avals[-len(leaves) :]]
        if [tuple(x.shape[1:]) for x in leaves] != want:
            raise EvalError(
                f"inputs: this System file takes inputs shaped {want[:1]}..., the game gives "
                f"{[tuple(x.shape[1:]) for x in leaves[:1]]}...: it was exported for layouts "
                "of other shapes (see export_system's layout)"
            )
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


def load_system(
    path: str | Path, *, name: str | None = None, max_bytes: int = MAX_FILE_BYTES
) -> System:
    """The System in a file written by `export_system` (it plays the manifest's mode), after
    every check of `read_manifest`, every program vetted and checked against the manifest. One
    member is held at a time beyond what the System keeps (its weights and programs)."""
    path = Path(path)
    with SystemFile(path, max_bytes) as sf:
        m = sf.manifest
        key = programs_key(m)
        known = _cache.get(key)
        exported: dict[str, export.Exported] = {}
        for member in program_names(m):
            if known is None:
                exported[member] = _deserialize(sf.program(member), f"{path.name}: {member}")
            else:
                sf.verify(member)
        params = []
        for k, (shape, dtype) in enumerate(spec_list(m["params"], "params")):
            params.append(jnp.asarray(sf.weight(k, shape, np.dtype(jnp.dtype(dtype)))))
    progs = known.programs if known else {
        b: (exported[f"act-{b}.jaxexport"], exported[f"init-{b}.jaxexport"])
        for b in m["batch_sizes"]
    }  # fmt: skip
    check_signatures(progs, m, path.name)
    sys_name = check_name(m["name"] if name is None else name, "name")
    loaded = known or Loaded(progs, *_functions(progs))
    _remember(key, loaded)  # only now: a refused file leaves nothing behind
    return system(
        loaded.act,
        name=sys_name,
        init=loaded.init,
        per_agent=m["per_agent"],
        classes=m["classes"],
        params=tuple(params),
        mode=m["mode"],
    )
