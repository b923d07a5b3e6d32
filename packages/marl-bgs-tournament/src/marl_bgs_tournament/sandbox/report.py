"""The child's side of the report pipe (lines `watchdog.Watchdog` reads)."""

from __future__ import annotations

import os

from marl_bgs_tournament.sandbox.watchdog import move_line, phase_line, teams_line


class Report:
    """Writes report lines to file descriptor `fd` (each line one atomic write)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def phase(self, label: str) -> None:
        """Host work `label` begins."""
        os.write(self.fd, phase_line(label))

    def teams(self, a: str, b: str, tick_limit: int) -> None:
        """The games that follow are `a` against `b` with `tick_limit` ticks."""
        os.write(self.fd, teams_line(a, b, tick_limit))

    def move(self, event: int, team: int, tick: int) -> None:
        """A fence of a team's move (a `marl_bgs_eval.watch.Watch`)."""
        os.write(self.fd, move_line(event, team, tick))
