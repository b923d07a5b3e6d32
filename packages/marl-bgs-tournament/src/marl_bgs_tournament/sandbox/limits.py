"""The sandbox's limits: rulebook values, one owner (docs, the leaderboard and the child read
them here).

A submitted program runs in a child process (`marl_bgs_tournament.sandbox`) that the service
times from outside and that the kernel bounds from inside. The service times each tick of a
batch of games (every game of a batch moves at once: both teams' actions, the engine's step
and the memory of games that start) and the first games' memory; a game lasts at most
`tick_limit` ticks, so `game_seconds` over any `tick_limit` ticks in a row bounds every game.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from marl_bgs_tournament.errors import TournamentError

MIB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """What one child process may use (rulebook v2 by default: `LIMITS`)."""

    move_seconds: float = 2.0  # wall clock of one tick of a batch of games (both teams, engine)
    game_seconds: float = 150.0  # wall clock of any tick_limit ticks in a row (any one game)
    host_seconds: float = 300.0  # any stretch with no move running: loading, compiling, a check
    cpu_seconds: int = 3600  # CPU time of the whole child (RLIMIT_CPU), every thread together
    memory_bytes: int = 16 << 30  # address space of the child (RLIMIT_AS; CPU backend)
    file_bytes: int = 1 << 30  # the largest file it may write (RLIMIT_FSIZE), and its folder
    open_files: int = 256  # open files at once (RLIMIT_NOFILE)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if not number or not math.isfinite(value) or value <= 0:
                raise TournamentError(f"limits.{f.name}: expected a positive number, got {value!r}")
            if f.type == "int" and not isinstance(value, int):
                raise TournamentError(f"limits.{f.name}: expected a whole number, got {value!r}")
        if self.move_seconds > self.game_seconds:
            raise TournamentError(
                f"limits.move_seconds: {self.move_seconds} is more than game_seconds "
                f"{self.game_seconds}"
            )

    def as_dict(self) -> dict[str, Any]:
        """The limits as JSON values (what a child is given)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, value: Any) -> Limits:
        """Limits from `as_dict`'s form (TournamentError naming a bad or unknown field)."""
        names = [f.name for f in dataclasses.fields(cls)]
        if not isinstance(value, dict) or set(value) - set(names):
            extra = sorted(set(value) - set(names)) if isinstance(value, dict) else value
            raise TournamentError(f"limits: unknown fields {extra!r}; allowed {names}")
        return cls(**value)

    def rows(self) -> list[tuple[str, str, str]]:
        """(limit, value, what it bounds) for the docs and the leaderboard."""
        return [
            ("tick", f"{self.move_seconds:g} s", "one tick of a batch of games (both teams' "
             "moves, the engine's step), or the first games' memory"),
            ("game", f"{self.game_seconds:g} s", "any tick_limit ticks in a row (so any one "
             "game)"),
            ("host work", f"{self.host_seconds:g} s", "loading and vetting a file, compiling, "
             "each rulebook check: any stretch with no timed move"),
            ("CPU time", f"{self.cpu_seconds:,} s", "the whole child process, all threads"),
            ("memory", size_text(self.memory_bytes), "the child's address space (CPU hosts)"),
            ("files", size_text(self.file_bytes), "the largest file it writes, and its working "
             "folder"),
            ("open files", f"{self.open_files}", "at once"),
        ]  # fmt: skip


def size_text(n: int) -> str:
    """Bytes as GiB or MiB (how the limits are shown)."""
    return f"{n / (1 << 30):g} GiB" if n >= 1 << 30 else f"{n / MIB:g} MiB"


LIMITS = Limits()  # the rulebook's
