"""Every check of one entrant as one table (`check_entrant`); a crash fails its check, named. The
checks are every mode's (`CHECKS`) and the System's mode's own (`checks_of`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from marl_bgs_eval import System
from marl_bgs_eval.watch import Watch
from marl_bgs_tournament import modes
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable import load_system
from marl_bgs_tournament.rulebook.games import full_games
from marl_bgs_tournament.rulebook.limits import CHECKS, COLUMNS, GAMES, TICK_LIMIT, TICKS, Row
from marl_bgs_tournament.rulebook.memory import memory_reset, weights_unchanged
from marl_bgs_tournament.rulebook.play import play_limits
from marl_bgs_tournament.rulebook.recording import _as_manifest, _as_system
from marl_bgs_tournament.rulebook.training import training_declared


def _guarded(name: str, check: Callable[[], Row]) -> Row:
    """A check's row; a System that crashes it fails it, named. Running out of memory is not
    a check's result but the machine's limit: it ends every check (the sandbox refuses)."""
    try:
        return check()
    except Exception as err:
        if isinstance(err, MemoryError) or "RESOURCE_EXHAUSTED" in str(err):
            raise
        return Row(name, False, None, None, f"error: {type(err).__name__}: {str(err)[:300]}")


def checks_of(mode: str) -> tuple[str, ...]:
    """Every check of a System of `mode`, in order: `CHECKS` with the mode's own after
    play_limits (Team Deathmatch: information_limits)."""
    own = tuple(modes.parts(mode).checks)
    return (*CHECKS[:2], *own, *CHECKS[2:])


def check_names(mode: str, checks: Sequence[str] | None) -> tuple[str, ...]:
    """`checks` (None: all of them) checked against those of `mode`."""
    allowed = checks_of(mode)
    if checks is None:
        return allowed
    unknown = [c for c in checks if c not in allowed]
    if unknown:
        raise TournamentError(
            f"checks: unknown {unknown} for mode {modes.kit(mode).id}; allowed {list(allowed)}"
        )
    return tuple(checks)


def check_entrant(
    system: System | str | Path, manifest: dict[str, Any] | str | Path | None = None, *,
    games: int = GAMES, ticks: int = TICKS, seed: int = 0,
    checks: Sequence[str] | None = None, tick_limit: int = TICK_LIMIT,
    watch: Watch | None = None, before: Callable[[str], None] | None = None,
) -> pd.DataFrame:  # fmt: skip
    """Every check of one entrant: a System (with its manifest, a dict or its file's path) or a
    System file's path. One row per check of `checks` (None: every check of the System's mode,
    `checks_of`): check, passed, value, limit, detail. `watch` hears the moves of `full_games`;
    `before(check)` hears of each check first (the sandbox's clock)."""
    if isinstance(system, str | Path):
        manifest = system if manifest is None else manifest
        system = load_system(system)
    sys = _as_system(system)
    names = check_names(sys.mode, checks)
    m = _as_manifest(manifest)
    own = {name: (lambda check=check: check(sys, games=games, ticks=ticks, seed=seed))
           for name, check in modes.parts(sys.mode).checks.items()}  # fmt: skip
    run = {
        "full_games": lambda: full_games(sys, m, tick_limit=tick_limit, seed=seed, watch=watch),
        "play_limits": lambda: play_limits(sys, seed=seed),
        **own,
        "memory_reset": lambda: memory_reset(sys, games=games, ticks=ticks, seed=seed),
        "weights_unchanged": lambda: weights_unchanged(sys, m, games=games, ticks=ticks,
                                                       seed=seed),
        "training_declared": lambda: training_declared(m),
    }  # fmt: skip
    rows = []
    for name in names:
        if before is not None:
            before(name)
        rows.append(_guarded(name, run[name]))
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    table["passed"] = table["passed"].astype(bool)
    return table
