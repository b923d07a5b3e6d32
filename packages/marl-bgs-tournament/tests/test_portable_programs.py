"""A System file's programs: metadata that lies about a program (its result shapes and dtypes,
its arguments, how they are grouped) is refused at load, not at run time; the cache of loaded
programs is bounded and keeps nothing of a refused file. Files are crafted from mix5."""

from __future__ import annotations

import dataclasses
import gc
import tracemalloc
import zipfile
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

from marl_bgs_eval.fuzzing import npy_bytes, zip_members
from marl_bgs_tournament import TournamentError, load_system, read_manifest
from marl_bgs_tournament.portable import input_spec, load

ACT = "act-16.jaxexport"


def _serialized(ex: export.Exported) -> bytes:
    return bytes(ex.serialize())


def _act16(actions: jax.ShapeDtypeStruct) -> export.Exported:
    """A program with act-16's arguments that returns `actions` of another shape or dtype."""

    def act(p, key_data, memory, inputs):
        del key_data, inputs
        return jnp.zeros(actions.shape, actions.dtype) + p[0].astype(actions.dtype), memory

    ins = [jax.ShapeDtypeStruct((16, *s), d) for s, d in input_spec()]
    key = jax.ShapeDtypeStruct((16, 2), jnp.uint32)
    return export.export(jax.jit(act), platforms=("cpu", "cuda"))(
        [jax.ShapeDtypeStruct((), jnp.float32)], key, [], ins
    )


@pytest.fixture(scope="module")
def mix5_programs(mix_files) -> dict[str, export.Exported]:
    return {n: export.deserialize(bytearray(d)) for n, d in zip_members(mix_files["mix5"])
            if n.endswith(".jaxexport")}  # fmt: skip


def _lies(real: dict[str, export.Exported]) -> dict[str, tuple[bytes, str]]:
    """act-16 programs whose metadata (what the old loader checked) matches the manifest while
    the program is something else; each failed only when it ran, or ran converted."""
    act, n_inputs = real[ACT], len(input_spec())
    wide = _act16(jax.ShapeDtypeStruct((16, 5, 4), jnp.int32))
    floats = _act16(jax.ShapeDtypeStruct((16, 5, 3), jnp.float32))
    regrouped = jax.tree.structure((([], 0, [0], [0] * n_inputs), {}))  # params as memory
    return {
        "result shape": (_serialized(dataclasses.replace(wide, out_avals=act.out_avals)),
                         r"refused: its module's result 0 is tensor<16x5x4xi32>, its metadata "
                         r"says tensor<16x5x3xi32>"),
        "result dtype": (_serialized(dataclasses.replace(floats, out_avals=act.out_avals)),
                         r"refused: its module's result 0 is tensor<16x5x3xf32>"),
        "another module": (_serialized(dataclasses.replace(
            act, mlir_module_serialized=real["act-1.jaxexport"].mlir_module_serialized)),
            r"refused: its module's argument 1 is tensor<1x2xui32>, its metadata says "
            r"tensor<16x2xui32>; its module's result 0 is tensor<1x5x3xi32>"),
        "argument groups": (_serialized(dataclasses.replace(act, in_tree=regrouped)),
                            r"its arguments are not grouped as act\(params, key data, memory"),
        "result groups": (_serialized(dataclasses.replace(act, out_tree=jax.tree.structure([0]))),
                          r"its results are not grouped as act\(.*\) -> \(actions, memory\)"),
    }  # fmt: skip


LIES = ["result shape", "result dtype", "another module", "argument groups", "result groups"]


@pytest.mark.parametrize("lie", LIES)
def test_a_program_whose_metadata_lies_is_refused_at_load(
    mix_files, mix5_programs, system_zip, tmp_path, lie
) -> None:
    blob, message = _lies(mix5_programs)[lie]
    path = tmp_path / "lying.mbgs"
    path.write_bytes(system_zip(mix_files["mix5"], {ACT: blob}))
    assert read_manifest(path)["name"] == "mix5"  # every hash agrees: only loading can tell
    with pytest.raises(TournamentError, match=rf"^lying.mbgs: {ACT}: {message}"):
        load_system(path)


# --- the cache of loaded programs --------------------------------------------------------------


@pytest.fixture(scope="module")
def variant(mix5_programs) -> Callable[[int], dict[str, bytes]]:
    """`variant(k)`: mix5's programs under other names, k by k: other bytes (another cache
    key), the same computations."""
    return lambda k: {n: _serialized(dataclasses.replace(ex, fun_name=f"{ex.fun_name}_v{k}"))
                      for n, ex in mix5_programs.items()}  # fmt: skip


def _key(path) -> str:
    return load.programs_key(read_manifest(path))


def test_the_cache_keeps_the_most_recently_loaded_programs(
    mix_files, system_zip, variant, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(load, "MAX_CACHED_PROGRAMS", 2)
    paths = {}
    for k in "abc":
        paths[k] = tmp_path / f"{k}.mbgs"
        paths[k].write_bytes(system_zip(mix_files["mix5"], variant(ord(k))))
    first = {k: load_system(paths[k]).program_key() for k in "ab"}
    assert load_system(paths["a"]).program_key() == first["a"]  # a hit: a is the newest now
    load_system(paths["c"])
    assert load.cached_keys() == [_key(paths["a"]), _key(paths["c"])]  # b, the oldest, left
    assert load_system(paths["b"]).program_key() != first["b"]  # deserialized again


def test_refused_files_leave_nothing_cached(mix_files, system_zip, variant, tmp_path) -> None:
    """Files refused after their programs were deserialized and vetted (the manifest's memory,
    a weight, the name asked for): the cache holds none of them, and the memory they took is
    given back (measured with tracemalloc: the old cache kept every file's program bytes)."""
    refusals = [  # (edit, replaced weight, name, message)
        (lambda m: m.update(memory=[[[2], "float32"]]), None, None, "differ from the manifest"),
        (None, npy_bytes(np.float16(0.5)), None, r"holds \(\) float16, expected \(\) float32"),
        (None, None, "a/b", "name: expected"),
    ]
    files = []
    for k in range(7):
        edit, weight, name, message = refusals[k % 3]
        members = variant(100 + k) | ({} if weight is None else {"param-0000.npy": weight})
        path = tmp_path / f"refused{k}.mbgs"
        path.write_bytes(system_zip(mix_files["mix5"], members, edit))
        files.append((path, name, message))
    with zipfile.ZipFile(files[0][0]) as zf:
        programs = sum(i.file_size for i in zf.infolist() if i.filename.endswith(".jaxexport"))
    for k, (path, name, message) in enumerate(files):
        if k == 1:  # the first one warmed up what any load allocates once
            gc.collect()
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
        with pytest.raises(TournamentError, match=message):
            load_system(path, name=name)
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert not {_key(path) for path, _, _ in files} & set(load.cached_keys())
    assert kept < programs, f"{kept} bytes kept after 6 refused files of {programs} in programs"
