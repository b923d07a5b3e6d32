"""Portable Systems: one file that plays in the tournament without the code that trained it.

A System file (`.mbgs`, a zip) holds no Python: its functions are compiled programs serialized
with `jax.export` (StableHLO), its weights plain `.npy` arrays read without unpickling.

    manifest.json      what the file is (see `MANIFEST_KEYS`), and the sha256 of every member
    act-<B>.jaxexport  act(params, key_data [B, 2], memory leaves [B, ...], input leaves [B, ...])
                       -> (actions int32 [B, team size, heads], memory leaves), for each B
    init-<B>.jaxexport init(params, key_data [B, 2]) -> memory leaves [B, ...]
    param-<k>.npy      the weights, one array per leaf (none when they are baked into `act`)

A file plays one mode, the manifest's `mode` (a versioned id): its inputs, team size and action
heads are that mode's (`marl_bgs.kit(mode)`), and the loaded System's `mode` is it.

The loaded System is parametric (`marl_bgs_eval.system(..., params=...)`): its weights are data,
so every file of one architecture shares the compiled programs of a pairing shape. A batch of n
games runs the smallest exported size B >= n, padded with copies of the first game (every game
is played on its own: a padded copy changes no real game's actions).

Modules: `format` (constants, limits, names, manifest checks), `zipread` (bounded, streamed
reading and `read_manifest`), `export` (`export_system`), `vet` (what a program may be) and
`load` (`load_system`).
"""

from marl_bgs_tournament.portable.export import export_system
from marl_bgs_tournament.portable.format import (
    BATCH_SIZES,
    DTYPES,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST_KEYS,
    MAX_BATCH,
    MAX_FILE_BYTES,
    MAX_LEAF_ELEMENTS,
    MAX_MANIFEST_BYTES,
    MAX_MEMBERS,
    MAX_MEMORY_BYTES,
    MAX_PROGRAM_BYTES,
    MAX_UNPACKED_BYTES,
    NAME,
    PLATFORMS,
    SUFFIX,
    check_name,
    input_spec,
    weight_bytes,
    weight_sha256,
)
from marl_bgs_tournament.portable.load import MAX_CACHED_PROGRAMS, load_system
from marl_bgs_tournament.portable.vet import CUSTOM_CALL, SAFE_CUSTOM_CALLS, UNSAFE_OPS
from marl_bgs_tournament.portable.zipread import file_sha256, read_manifest

__all__ = [
    "BATCH_SIZES",
    "CUSTOM_CALL",
    "DTYPES",
    "FORMAT",
    "FORMAT_VERSION",
    "MANIFEST_KEYS",
    "MAX_BATCH",
    "MAX_CACHED_PROGRAMS",
    "MAX_FILE_BYTES",
    "MAX_LEAF_ELEMENTS",
    "MAX_MANIFEST_BYTES",
    "MAX_MEMBERS",
    "MAX_MEMORY_BYTES",
    "MAX_PROGRAM_BYTES",
    "MAX_UNPACKED_BYTES",
    "NAME",
    "PLATFORMS",
    "SAFE_CUSTOM_CALLS",
    "SUFFIX",
    "UNSAFE_OPS",
    "check_name",
    "export_system",
    "file_sha256",
    "input_spec",
    "load_system",
    "read_manifest",
    "weight_bytes",
    "weight_sha256",
]
