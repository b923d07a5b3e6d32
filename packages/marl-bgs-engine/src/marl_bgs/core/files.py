"""Reading JSON data files from disk safely: size limit, no duplicate keys, clear errors."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from marl_bgs.core.checks import shown
from marl_bgs.core.errors import ConfigError


def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A `json` object hook that refuses repeated keys instead of keeping the last one."""
    out = dict(pairs)
    if len(out) != len(pairs):
        dup = sorted(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
        raise json.JSONDecodeError(f"duplicate key(s) {shown(dup[:5], 200)}", "", 0)
    return out


def read_json(
    path: Any, what: str, max_bytes: int, error: type[ValueError] = ConfigError
) -> tuple[Path, Any]:
    """(path, decoded document) of a JSON file of at most `max_bytes`; `error` (naming the file
    as `what`) when it is missing, unreadable, too large or not valid JSON."""
    if not isinstance(path, str | os.PathLike):
        raise error(f"{what}: expected a str or pathlib.Path, got {shown(path)}")
    path = Path(path)
    where = f"{what} {shown(str(path), 300)}"  # a hostile path cannot flood the message
    try:
        exists, regular, data = path.exists(), path.is_file(), b""
        if regular:
            with path.open("rb") as stream:
                data = stream.read(max_bytes + 1)  # never more than the limit and a byte
    except (OSError, ValueError) as err:  # unreadable, a name too long, a NUL in the name
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise error(f"{where} cannot be read: {reason}") from None
    if not exists:
        raise error(f"{where} does not exist")
    if not regular:
        raise error(f"{where} is not a regular file")
    if len(data) > max_bytes:
        raise error(f"{where} is larger than {max_bytes} bytes")
    try:
        raw = json.loads(data.decode("utf-8"), object_pairs_hook=no_duplicates)
    except (ValueError, RecursionError) as err:  # bad UTF-8 or JSON, huge ints, deep nesting
        raise error(f"{where} is not valid JSON: {err}") from None
    return path, raw
