"""Reading a season folder's files without trusting them: inside the folder, bounded, cached.

Every read goes through `inside` (the path must stay in the season folder, links included) and
`read_bytes` (a regular file of at most `limit` bytes). `FileCache` keeps what a parser made of a
file until the file's size, inode or modification time change, so rewritten results show at once.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from marl_bgs_tournament.errors import TournamentError

T = TypeVar("T")
Signature = tuple[int, int, int]  # st_ino, st_size, st_mtime_ns


class SeasonDataError(TournamentError):
    """A season file is missing, too large or not what the season format says."""


def inside(root: Path, relative: str | Path) -> Path:
    """`root / relative`, refused unless it stays inside `root` once links are resolved."""
    base = root.resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        raise SeasonDataError(f"{relative}: lies outside the season folder")
    return path


def signature(path: Path) -> Signature:
    """What changes when a file is rewritten (a replace makes a new inode; a write, a new time)."""
    try:
        st = path.stat()
    except OSError as err:
        raise SeasonDataError(f"{path.name}: missing ({err.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise SeasonDataError(f"{path.name}: not a regular file")
    return st.st_ino, st.st_size, st.st_mtime_ns


def read_bytes(path: Path, limit: int) -> bytes:
    """The bytes of regular file `path`, refused if it holds more than `limit`."""
    size = signature(path)[1]
    if size > limit:
        raise SeasonDataError(f"{path.name}: {size} bytes, more than the {limit} allowed")
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as err:
        raise SeasonDataError(f"{path.name}: cannot be read ({err.strerror})") from None
    if len(data) > limit:
        raise SeasonDataError(f"{path.name}: grew past the {limit} bytes allowed while read")
    return data


@dataclass
class _Entry:
    signature: Signature
    value: Any = None
    error: SeasonDataError | None = None


class FileCache:
    """Parsed files by path, re-parsed when the file changes; failures are remembered too (a bad
    file is not parsed again until it changes). At most `max_entries` are kept, the oldest
    dropped first. One lock per path: parsing one file never waits for another."""

    def __init__(self, max_entries: int = 256) -> None:
        self.max_entries = max_entries
        self._entries: dict[tuple[Path, str], _Entry] = {}
        self._locks: dict[tuple[Path, str], threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, path: Path, parse: Callable[[Path], T]) -> T:
        """`parse(path)`, or its remembered result while `path` is unchanged. Raises
        SeasonDataError for a missing or bad file (anything `parse` raises becomes one)."""
        key = (path, getattr(parse, "__qualname__", "parse"))
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            sig = signature(path)
            entry = self._entries.get(key)
            if entry is None or entry.signature != sig:
                entry = _Entry(sig)
                try:
                    entry.value = parse(path)
                except SeasonDataError as err:
                    entry.error = err
                except Exception as err:  # a parser's surprise on hostile bytes is a refusal too
                    entry.error = SeasonDataError(f"{path.name}: {type(err).__name__}: {err}")
                if signature(path) == sig:  # changed while parsed: parse again next time
                    self._remember(key, entry)
            if entry.error is not None:
                raise entry.error
            return entry.value

    def _remember(self, key: tuple[Path, str], entry: _Entry) -> None:
        with self._guard:
            self._entries.pop(key, None)
            self._entries[key] = entry
            while len(self._entries) > self.max_entries:  # the oldest goes first
                del self._entries[next(iter(self._entries))]


def is_plain_dir(path: Path) -> bool:
    """A folder that is not a link (links could lead out of the season folder)."""
    return path.is_dir() and not path.is_symlink()


def atomic_write(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all (a temporary file beside it, then a rename)."""
    tmp = path.with_name(f".{path.name}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
