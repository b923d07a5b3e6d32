"""Array zips: the container of every recorded-game file (`replay_files` for Team Deathmatch,
`episode_replays` for single-team modes), written atomically and read back only after every
check passes.

A file is a ZIP_DEFLATED zip of `header.json` and one NumPy `.npy` file per array, named
`<array>.npy` and written without pickles. `header.json` is a JSON object: the format's own
fields, and `arrays`, which lists every array's shape, dtype and the SHA-256 of its `.npy` bytes.

Reading trusts nothing: the member names must be exactly those the format's layout expects,
every declared size is checked against fixed limits and against what the array's shape needs
before anything is read, members are read with a bounded read, and every array's checksum,
dtype (numeric or bool, never object) and shape must match. Every refusal is an `EvalError`
naming the file and the problem. What the values mean is the format's to check.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from marl_bgs.core.checks import check_int, shown
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.safe_zip import (
    NPY_HEADER_BYTES,
    check_member,
    check_zip_directory,
    parse_npy,
    read_bounded,
)

HEADER = "header.json"
MAX_HEADER_BYTES = 1 << 20
MAX_MEMBER_BYTES = 64 << 20  # a 10,000-tick game's largest array is about 4 MiB
MAX_TOTAL_BYTES = 256 << 20
MAX_MEMBERS = 1024  # a replay has about a hundred
SHA256 = re.compile(r"[0-9a-f]{64}")
ODD_NAME = re.compile(r"[/\\\x00:]|^\.{0,2}$")  # paths, drive letters, NUL, "", ".", ".."
Layout = dict[str, tuple[tuple[int, ...], np.dtype]]


@dataclass(frozen=True, eq=False)
class Replay:
    """One recorded game: `header` (JSON values) and `arrays` (numpy), as its format lays them
    out. Two replays are equal when headers and arrays (with dtypes) are."""

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


def header_int(value: Any, field: str, low: int, high: int) -> int:
    """`value` if it is an integer (not a bool) in [low, high], else EvalError naming `field`."""
    return check_int(value, field, low, high, error=EvalError)


def check_fields(
    header: dict[str, Any], fields: tuple[str, ...], where: str, optional: tuple[str, ...] = ()
) -> None:
    """EvalError unless `header` has exactly the keys `fields`, and perhaps some of `optional`
    (naming what is missing and up to five unknown keys)."""
    missing = [k for k in fields if k not in header]
    extra = sorted(str(k) for k in header if k not in (*fields, *optional))
    if missing or extra:
        raise EvalError(f"{where}: missing field(s) {missing}, unknown field(s) {extra[:5]}")


def check_arrays(arrays: Any, want: Layout, source: str) -> None:
    """Raise EvalError unless `arrays` holds exactly the arrays of `want`, each numpy of its
    shape and dtype."""
    if not isinstance(arrays, dict):
        raise EvalError(f"{source}: arrays: expected a dict, got {type(arrays).__name__}")
    missing, extra = sorted(want.keys() - arrays.keys()), sorted(map(str, arrays.keys() - want))
    if missing or extra:
        raise EvalError(f"{source}: missing array(s) {missing[:5]}, unknown array(s) {extra[:5]}")
    for name, (shape, dtype) in want.items():
        a = arrays[name]
        if not isinstance(a, np.ndarray) or a.shape != shape or a.dtype != dtype:
            got = (a.shape, str(a.dtype)) if isinstance(a, np.ndarray) else type(a).__name__
            raise EvalError(f"{source}: array {name}: expected {shape} {dtype}, got {got}")


# --- writing ----------------------------------------------------------------------------------


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.array(array, order="C"), allow_pickle=False)
    return buf.getvalue()


def _member(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # same replay, same bytes
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def checksum(data: bytes) -> str:
    """The SHA-256 of `data` as 64 hex digits (what a manifest lists per array)."""
    return hashlib.sha256(data).hexdigest()


def write(replay: Replay, path: str | Path) -> Path:
    """Write `replay` (already checked by its format) to one file at `path`: the file appears
    whole or not at all. Returns the path."""
    path = Path(path)
    if not path.parent.is_dir():
        raise EvalError(f"path: folder {str(path.parent)!r} does not exist")
    if path.is_dir():
        raise EvalError(f"path: {str(path)!r} is a folder")
    blobs = {f"{k}.npy": _npy(v) for k, v in replay.arrays.items()}
    manifest = {
        k: {"shape": list(v.shape), "dtype": v.dtype.str, "sha256": checksum(blobs[f"{k}.npy"])}
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


# --- reading ----------------------------------------------------------------------------------


Derived = Mapping[str, Callable[[dict[str, np.ndarray]], Any]]  # name -> made from the others


def read(
    path: str | Path,
    kind: str,
    check_header: Callable[[dict[str, Any], str], None],
    layout_of: Callable[[dict[str, Any]], Layout],
    derived_of: Callable[[dict[str, Any]], Derived] | None = None,
) -> Replay:
    """Read a file of `kind` (a word for messages, e.g. "replay"): `check_header(header,
    source)` vets the header (without `arrays`) before `layout_of(header)` says which arrays,
    of which shapes and dtypes, the file must hold. `derived_of(header)` names arrays an older
    file may lack, each worked out from the others after reading (and checked against the
    layout). Returns them unchecked in meaning."""
    path = Path(path)
    if not path.is_file():
        raise EvalError(f"path: {kind} file {str(path)!r} does not exist or is not a file")
    if path.stat().st_size > MAX_TOTAL_BYTES:
        raise EvalError(f"{path.name}: {path.stat().st_size} bytes, more than {MAX_TOTAL_BYTES}")
    check_zip_directory(path, MAX_MEMBERS, f"a {kind}")
    try:
        with zipfile.ZipFile(path) as zf:
            return _read(zf, path.name, check_header, layout_of, derived_of)
    except EvalError:
        raise
    except Exception as err:  # a damaged zip: name the file, not the parser's internals
        raise EvalError(
            f"{path.name}: not a readable {kind} zip ({type(err).__name__}: {err})"
        ) from None


def _read(
    zf: zipfile.ZipFile,
    source: str,
    check_header: Callable[[dict[str, Any], str], None],
    layout_of: Callable[[dict[str, Any]], Layout],
    derived_of: Callable[[dict[str, Any]], Derived] | None,
) -> Replay:
    infos = _check_members(zf.infolist(), source)
    raw = read_bounded(zf, infos[HEADER], MAX_HEADER_BYTES, source)
    header = _parse_json(raw, source)
    manifest = header.pop("arrays", None)
    check_header(header, source)
    layout = layout_of(header)
    derived = derived_of(header) if derived_of else {}
    listed = manifest if isinstance(manifest, dict) else layout  # else the manifest check fails
    lacking = [n for n in derived if n in layout and n not in listed]
    want = {k: v for k, v in layout.items() if k not in lacking}
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
        if checksum(data) != manifest[name]["sha256"]:
            raise EvalError(f"{where}: checksum mismatch (the array was changed after writing)")
        arrays[name] = parse_npy(data, shape, dtype, where)
    for name in lacking:
        made, (shape, dtype) = np.asarray(derived[name](arrays)), layout[name]
        if made.shape != shape or made.dtype != dtype:
            raise EvalError(f"{source}: {name} worked out as {made.dtype}{list(made.shape)}, "
                            f"expected {np.dtype(dtype)}{list(shape)}")  # fmt: skip
        arrays[name] = made
    return Replay(header=header, arrays={k: arrays[k] for k in layout})


def _check_members(infos: list[zipfile.ZipInfo], source: str) -> dict[str, zipfile.ZipInfo]:
    """Names, methods and declared sizes, before anything is read."""
    names = [i.filename for i in infos]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise EvalError(f"{source}: member(s) {repeated[:5]} appear more than once")
    for info in infos:
        where = f"{source}: member {shown(info.filename)}"
        if ODD_NAME.search(info.filename):
            raise EvalError(f"{where}: a path or odd name; only plain names like 'actions.npy'")
        check_member(info, MAX_MEMBER_BYTES, where)
    total = sum(i.file_size for i in infos)
    if total > MAX_TOTAL_BYTES:
        raise EvalError(f"{source}: declares {total} bytes in all, more than {MAX_TOTAL_BYTES}")
    if HEADER not in names:
        raise EvalError(f"{source}: no {HEADER} (not a replay file?)")
    return {i.filename: i for i in infos}


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
                raise EvalError(f"{where}.{name}.{k}: expected {v}, got {shown(entry[k])}")
        if not isinstance(entry["sha256"], str) or not SHA256.fullmatch(entry["sha256"]):
            raise EvalError(f"{where}.{name}.sha256: expected 64 hex digits")
