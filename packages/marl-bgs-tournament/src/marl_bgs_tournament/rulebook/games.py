"""Check 6, full games: whole games of the tick limit against random at every batch size a file
declares, so a failure late in a game shows. In a mode with settings under which no game ends
early (`RulebookParts.full_length`: Team Deathmatch's highest winning score) every game must
last its tick limit; in others games may end sooner, and must end without error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from marl_bgs_eval import System, evaluate, random_system
from marl_bgs_eval.watch import Watch
from marl_bgs_tournament import modes
from marl_bgs_tournament.rulebook.limits import CPU_BATCH, TICK_LIMIT, Row
from marl_bgs_tournament.rulebook.recording import _as_manifest, _as_system, _layouts


def _spread(layouts: list[int], batch: int) -> tuple[list[int], int]:
    """Layouts and games per layout that fill one batch of `batch` games (at least 2 games)."""
    for m in range(len(layouts), 0, -1):
        if batch % (2 * m) == 0:
            return layouts[:m], batch // m
    return layouts[:1], batch + batch % 2


def full_games(
    system: System, manifest: dict[str, Any] | str | Path | None = None, *,
    tick_limit: int = TICK_LIMIT, seed: int = 0, watch: Watch | None = None,
) -> Row:  # fmt: skip
    """Games of `tick_limit` ticks against random (a single-team mode: against its own enemies),
    at every batch size the manifest declares (without one: `CPU_BATCH`); none may end early
    where the mode can keep them going (see the module docstring). `watch` hears every move."""
    sys = _as_system(system)
    m = _as_manifest(manifest)
    sizes = [CPU_BATCH] if m is None else [int(b) for b in m["batch_sizes"]]
    full = dict(modes.parts(sys.mode).full_length)
    two = modes.kit(sys.mode).controlled_teams == 2
    limit = f"{tick_limit} ticks at batch sizes {sizes}"
    played = 0
    for b in sizes:
        maps, per_map = _spread([layout.id for layout in _layouts(sys.mode)], b)
        games = evaluate(sys, random_system(sys.mode) if two else None, mode=sys.mode,
                         maps=maps, games_per_map=per_map, batch_size=b, tick_limit=tick_limit,
                         metrics="none", seed=seed, watch=watch, **full)  # fmt: skip
        ticks = games["ticks"].to_numpy()
        if full and (ticks < tick_limit).any():
            k = int(np.argmax(ticks < tick_limit))
            return Row("full_games", False, played, limit,
                       f"game {int(games['game'].to_numpy()[k])} at batch {b} ended after "
                       f"{int(ticks[k])} of {tick_limit} ticks")  # fmt: skip
        played += len(games)
    against = "random" if two else "the mode's own enemies"
    detail = f"{played} games of {tick_limit} ticks against {against} at batch sizes {sizes}"
    return Row("full_games", True, played, limit, detail)
