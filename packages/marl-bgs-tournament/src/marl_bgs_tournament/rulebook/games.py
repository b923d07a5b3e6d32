"""Check 6, full games: whole games of the tick limit against random at every batch size a file
declares, so a failure late in a game shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from marl_bgs.tdm.config import LIMITS as RULE_LIMITS
from marl_bgs_eval import System, evaluate, random_system
from marl_bgs_eval.watch import Watch
from marl_bgs_tournament.rulebook.limits import CPU_BATCH, TEST_MAPS, TICK_LIMIT, Row
from marl_bgs_tournament.rulebook.recording import _as_manifest, _as_system


def _spread(batch: int) -> tuple[list[int], int]:
    """Test maps and games per map that fill one batch of `batch` games (at least 2 games)."""
    for m in range(len(TEST_MAPS), 0, -1):
        if batch % (2 * m) == 0:
            return list(TEST_MAPS[:m]), batch // m
    return list(TEST_MAPS[:1]), batch + batch % 2


def full_games(
    system: System, manifest: dict[str, Any] | str | Path | None = None, *,
    tick_limit: int = TICK_LIMIT, seed: int = 0, watch: Watch | None = None,
) -> Row:  # fmt: skip
    """Games of `tick_limit` ticks against random, none ending early, at every batch size the
    manifest declares (without one: `CPU_BATCH`); `watch` hears every move (the sandbox)."""
    sys = _as_system(system)
    m = _as_manifest(manifest)
    sizes = [CPU_BATCH] if m is None else [int(b) for b in m["batch_sizes"]]
    limit = f"{tick_limit} ticks at batch sizes {sizes}"
    played = 0
    for b in sizes:
        maps, per_map = _spread(b)
        games = evaluate(sys, random_system(), maps=maps, games_per_map=per_map, batch_size=b,
                         tick_limit=tick_limit, winning_score=RULE_LIMITS["winning_score"][1],
                         metrics="none", seed=seed, watch=watch)  # fmt: skip
        ticks = games["ticks"].to_numpy()
        if (ticks < tick_limit).any():
            k = int(np.argmax(ticks < tick_limit))
            return Row("full_games", False, played, limit,
                       f"game {int(games['game'].to_numpy()[k])} at batch {b} ended after "
                       f"{int(ticks[k])} of {tick_limit} ticks")  # fmt: skip
        played += len(games)
    detail = f"{played} games of {tick_limit} ticks against random at batch sizes {sizes}"
    return Row("full_games", True, played, limit, detail)
