"""Checks 3 and 4 on a System's memory and weights: memory starts fresh every game and fits the
file format, weights never change in play nor hide in memory."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import jax
import numpy as np

from marl_bgs_eval import System
from marl_bgs_tournament.portable import weight_sha256
from marl_bgs_tournament.rulebook.limits import (
    GAMES,
    MAX_MEMORY_PER_GAME,
    MIN_WEIGHT_SIZE,
    TICKS,
    Row,
)
from marl_bgs_tournament.rulebook.recording import (
    _as_manifest,
    _as_system,
    _differences,
    _host,
    _init,
    _memory_keys,
    _paths,
    _recording,
    _replay,
    _spec,
)


def _bytes_per_game(memory: Any) -> int:
    return sum(int(x[0].nbytes) for x in jax.tree.leaves(_host(memory)))


def memory_reset(system: System, *, games: int = GAMES, ticks: int = TICKS, seed: int = 0) -> Row:
    """`init(key)` gives the same memory for the same key, also after the System played other
    games, and one game's memory fits in `MAX_MEMORY_PER_GAME` bytes (also after playing)."""
    sys = _as_system(system)
    rec = _recording(sys.mode, games, ticks, seed)
    first = _host(_init(sys, _memory_keys(rec)))
    played = _replay(sys, rec, _init(sys, _memory_keys(rec, offset=games)))
    again = _host(_init(sys, _memory_keys(rec)))
    size = _bytes_per_game(first)
    limit = f"same memory for the same key; <= {MAX_MEMORY_PER_GAME} bytes per game"
    problems = []
    if diffs := _differences(first, again):
        leaf, n = diffs[0]
        where = f"in {n} of {games} games" if n >= 0 else "in shape or structure"
        problems.append(
            f"init(key) gave other memory for the same key after play (leaf {leaf} "
            f"{where}): memory does not start fresh every game"
        )
    if _spec(played) != _spec(first):
        problems.append("act returns memory of other leaves, shapes or dtypes than init")
    if size > MAX_MEMORY_PER_GAME:
        problems.append(f"{size} bytes of memory per game, more than {MAX_MEMORY_PER_GAME}")
    detail = "; ".join(problems) or (
        f"init is a function of its key alone ({games} games, before and after {ticks} ticks "
        f"of play); {size} bytes per game"
    )
    return Row("memory_reset", not problems, size, limit, detail)


# --- 4. weights unchanged --------------------------------------------------------------------


def weight_hashes(params: Any) -> list[str]:
    """sha256 of each weight leaf's `.npy` bytes, in leaf order (a System file's member hashes)."""
    return [weight_sha256(_host(x)) for x in jax.tree.leaves(params)]


def _copies(params: Any, memory: Any) -> list[str]:
    """Memory leaves holding an exact copy of a weight leaf (in some game)."""
    found = []
    for p_name, p in _paths(_host(params)):
        if p.size < MIN_WEIGHT_SIZE or np.all(p == p.flat[0]):
            continue  # too small or constant to tell a copy from a coincidence
        for m_name, m in _paths(_host(memory)):
            same_kind = m.ndim and m[0].size == p.size and m.dtype == p.dtype
            if same_kind and (m.reshape(len(m), -1) == p.reshape(1, -1)).all(axis=1).any():
                found.append(f"memory {m_name} holds weights {p_name}")
    return found


def weights_unchanged(
    system: System, manifest: dict[str, Any] | str | Path | None = None, *,
    games: int = GAMES, ticks: int = TICKS, seed: int = 0,
) -> Row:  # fmt: skip
    """A parametric System's weights hash the same before and after `ticks` ticks of play and
    are never copied into its memory; with a manifest (or a System file's path) they equal the
    file's weights (its members' sha256)."""
    sys = _as_system(system)
    m = _as_manifest(manifest)
    if sys.params is None and m is None:
        return Row(
            "weights_unchanged",
            True,
            None,
            "unchanged",
            "not parametric: any weights are compiled into its functions",
        )
    rec = _recording(sys.mode, games, ticks, seed)
    before = weight_hashes(sys.params)
    start = _init(sys, _memory_keys(rec))
    problems = _copies(sys.params, start)
    played = _replay(sys, rec, start)
    problems += [c for c in _copies(sys.params, played) if c not in problems]
    after = weight_hashes(sys.params)
    if after != before:
        changed = [k for k, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
        problems.insert(0, f"weight leaves {changed[:6]} changed during {ticks} ticks of play")
    if m is not None:
        wanted = [m["members"].get(f"param-{k:04d}.npy") for k in range(len(m["params"]))]
        if before != wanted:
            problems.append(
                f"the weights ({len(before)} leaves) are not the file's "
                f"({len(wanted)} leaves; manifest members' sha256 differ)"
            )
    digest = hashlib.sha256("".join(before).encode()).hexdigest()[:16]
    detail = "; ".join(problems) or (
        f"{len(before)} weight leaves hash the same before and after {ticks} ticks, none in "
        f"memory" + ("; they are the file's" if m is not None else "")
    )
    return Row("weights_unchanged", not problems, digest, "unchanged", detail)
