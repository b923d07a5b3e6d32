"""Reading a System file from a stranger: every size is checked before bytes are read, and
members are read one at a time, streamed, hashed as they come and held to their declared size.

In order: the file's bytes (`max_bytes`); the zip's member count from its end record, before the
member list is read (`MAX_MEMBERS`); one manifest and no repeated names; for every member its
method, its declared unpacked size and compression ratio
(`marl_bgs_eval.safe_zip.MAX_RATIO`) and the running total of declared sizes against the whole
file's bound (`MAX_UNPACKED_BYTES`); the manifest (`MAX_MANIFEST_BYTES`) and its every field; the
member names against the manifest; each member's declared size against its own bound
(`format.member_limits`). Only then are members read: a stream that holds more than its member
declares is refused at the first byte past it, so the bounds hold for the bytes actually read.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from marl_bgs.core.checks import shown
from marl_bgs_eval import EvalError
from marl_bgs_eval.safe_zip import (
    CHUNK,
    MemberStream,
    check_member,
    check_zip_directory,
    read_bounded,
    read_npy,
)
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable.format import (
    MANIFEST,
    MAX_FILE_BYTES,
    MAX_MANIFEST_BYTES,
    MAX_MEMBERS,
    MAX_UNPACKED_BYTES,
    check_manifest,
    member_limits,
    weight_name,
)


@contextmanager
def _refusals(where: str) -> Iterator[None]:
    """The zip reader's refusals as TournamentError, and any failure of a damaged member (a bad
    CRC, a cut stream) as one naming `where`."""
    try:
        yield
    except TournamentError:
        raise
    except EvalError as err:
        raise TournamentError(str(err)) from None
    except Exception as err:
        raise TournamentError(f"{where}: unreadable ({type(err).__name__})") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class SystemFile:
    """An open System file whose sizes, member names and manifest passed every check; its
    members are read one at a time, each against its sha256 in the manifest."""

    def __init__(self, path: Path, max_bytes: int = MAX_FILE_BYTES) -> None:
        self.source = source = path.name
        if not path.is_file():
            raise TournamentError(
                f"path: System file {str(path)!r} does not exist or is not a file"
            )
        size = path.stat().st_size
        if size > max_bytes:
            raise TournamentError(f"{source}: {size} bytes, more than the limit {max_bytes}")
        try:
            check_zip_directory(path, MAX_MEMBERS, "a System file")
            self._zf = zipfile.ZipFile(path)
        except EvalError as err:
            raise TournamentError(str(err)) from None
        except Exception as err:
            raise TournamentError(
                f"{source}: not a System file (zip): {type(err).__name__}: {str(err)[:80]}"
            ) from None
        try:
            self.manifest = self._checked()
        except BaseException:
            self._zf.close()
            raise

    def _checked(self) -> dict[str, Any]:
        """The manifest, once the member list, every declared size and the manifest passed."""
        source, infos = self.source, self._zf.infolist()
        self._infos = {i.filename: i for i in infos}
        if len(infos) > MAX_MEMBERS:
            raise TournamentError(
                f"{source}: {len(infos)} members; a System file has at most {MAX_MEMBERS}"
            )
        if len(self._infos) != len(infos) or MANIFEST not in self._infos:
            raise TournamentError(f"{source}: no single {MANIFEST} (not a System file?)")
        total = 0
        for info in infos:
            where = f"{source}: {shown(info.filename)}"
            with _refusals(where):
                check_member(info, MAX_UNPACKED_BYTES, where)
            total += info.file_size
            if total > MAX_UNPACKED_BYTES:
                raise TournamentError(
                    f"{where}: declares {info.file_size} bytes, {total} with the members before "
                    f"it: more than the limit {MAX_UNPACKED_BYTES} of a whole System file"
                )
        with _refusals(f"{source}: {MANIFEST}"):
            raw = read_bounded(self._zf, self._infos[MANIFEST], MAX_MANIFEST_BYTES, source)
        try:
            manifest = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
        except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
            raise TournamentError(
                f"{source}: {MANIFEST} is not JSON ({type(err).__name__})"
            ) from None
        check_manifest(manifest, source)
        limits = member_limits(manifest)
        if set(self._infos) != set(limits):
            extra = sorted(set(self._infos) - set(limits))
            raise TournamentError(
                f"{source}: members do not match the manifest (extra {extra[:5]})"
            )
        for name, info in self._infos.items():
            with _refusals(f"{source}: {name}"):
                check_member(info, limits[name], f"{source}: {name}")
        return manifest

    @contextmanager
    def _stream(self, member: str) -> Iterator[MemberStream]:
        """The member, streamed; on leaving, read to its end and checked against its sha256."""
        where = f"{self.source}: {member}"
        with _refusals(where), MemberStream(self._zf, self._infos[member], where) as stream:
            yield stream
            if stream.finish() != self.manifest["members"][member]:
                raise TournamentError(
                    f"{where}: sha256 differs from the manifest (the file was changed after export)"
                )

    def verify(self, member: str) -> None:
        """Read a member through, keeping nothing but its hash."""
        with self._stream(member):
            pass

    def program(self, member: str) -> bytearray:
        """A serialized program's bytes (what `jax.export.deserialize` takes)."""
        data = bytearray()
        with self._stream(member) as stream:
            while chunk := stream.read(CHUNK):
                data += chunk
        return data

    def weight(self, k: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """The k-th weight leaf, read straight into an array of its manifest's shape."""
        with self._stream(weight_name(k)) as stream:
            return read_npy(stream, shape, dtype, f"{self.source}: {weight_name(k)}")

    def close(self) -> None:
        """Close the zip."""
        self._zf.close()

    def __enter__(self) -> SystemFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def read_manifest(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> dict[str, Any]:
    """The checked manifest of a System file, every member's hash verified (streamed: nothing
    is kept); TournamentError names what is wrong (too large, not a zip, a field, a bound, a
    changed member)."""
    with SystemFile(Path(path), max_bytes) as sf:
        for member in sf.manifest["members"]:
            sf.verify(member)
        return sf.manifest


def file_sha256(path: str | Path) -> str:
    """The published identity of a System file: the sha256 of its bytes."""
    h = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
