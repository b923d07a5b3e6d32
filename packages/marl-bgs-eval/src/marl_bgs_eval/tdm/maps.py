"""Which maps an evaluation plays: split names, shipped ids or names, map files or MapSpecs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from marl_bgs import ConfigError
from marl_bgs.tdm.maps import SPLITS, MapSpec
from marl_bgs.tdm.maps import load as load_map
from marl_bgs.tdm.maps import split as split_ids
from marl_bgs_eval.errors import EvalError

MapsLike = str | int | Path | MapSpec | Sequence[int | str | Path | MapSpec]


def resolve_maps(maps: MapsLike, split: str | None = None) -> list[MapSpec]:
    """The maps to play, in order: split names ("test"), shipped ids or names, map files
    (`.json` paths) or MapSpecs, alone or in a list; each checked against `split` if given.
    Maps are told apart by content, so a file whose id equals a shipped id plays its own map."""
    refs = [maps] if isinstance(maps, str | int | Path | MapSpec) else maps
    if isinstance(refs, np.ndarray):
        refs = refs.tolist()
    if not isinstance(refs, Sequence) or isinstance(refs, str):
        raise EvalError(f"maps: expected a split name, a map or a list of them, got {maps!r}")
    specs: list[MapSpec] = []
    try:
        for ref in refs:
            if isinstance(ref, str) and ref in SPLITS:
                specs += [load_map(i) for i in split_ids(ref)]
            else:
                specs.append(load_map(ref))
        allowed = None if split is None else set(split_ids(split))
    except ConfigError as err:
        raise EvalError(f"maps: {err}") from None
    if not specs:
        raise EvalError("maps: expected at least one map")
    hashes = [s.content_hash for s in specs]
    twice = sorted({s.name for s, h in zip(specs, hashes, strict=True) if hashes.count(h) > 1})
    if twice:
        raise EvalError(f"maps: {twice} listed more than once (maps are compared by content)")
    if allowed is not None:
        outside = [
            s.name if s.split == "custom" else s.id
            for s in specs
            if s.split == "custom" or s.id not in allowed
        ]
        if outside:
            raise EvalError(f"maps: {outside} are not in split {split!r} ({sorted(allowed)})")
    return specs
