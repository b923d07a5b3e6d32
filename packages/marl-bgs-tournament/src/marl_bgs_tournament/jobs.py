"""A season played by a job of several hosts (`jax.distributed`): every process plays the same
games (each batch split over every host's devices, the results gathered on each), process 0
decides what all of them decide and writes the season folder; the others write a throwaway
copy."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import jax
import numpy as np
from jax.experimental import multihost_utils


def lead_refuses(ok: bool) -> bool:
    """Whether process 0's `ok` is false, told to every process (so all refuse together, not
    one refusing while the others wait for it)."""
    if jax.process_count() == 1:
        return not ok
    return not bool(multihost_utils.broadcast_one_to_all(np.int32(ok)))


def own_folder(out: Path) -> Path:
    """Where this process writes: `out` for process 0 (or a lone process), a fresh temporary
    folder for the others (their copy of the same season)."""
    if jax.process_index() == 0:
        return out
    return Path(tempfile.mkdtemp(prefix="season-copy-"))


def discard_copy(folder: Path) -> None:
    """Remove a process's throwaway copy (`own_folder`); process 0's folder stays."""
    if jax.process_index() != 0:
        shutil.rmtree(folder, ignore_errors=True)


def shared_seed(seed: int) -> int:
    """Process 0's root seed (63 bits) on every process: each may have drawn its own."""
    if jax.process_count() == 1:
        return seed
    halves = np.asarray([seed >> 32, seed & 0xFFFFFFFF], np.uint32)
    hi, lo = (int(x) for x in multihost_utils.broadcast_one_to_all(halves))
    return (hi << 32) | lo
