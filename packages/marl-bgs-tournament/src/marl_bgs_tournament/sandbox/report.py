"""The child's side of the report pipe (lines `watchdog.Watchdog` reads)."""

from __future__ import annotations

import os

from marl_bgs_tournament.sandbox.watchdog import games_line, phase_line, tick_line


class Report:
    """Writes report lines to file descriptor `fd` (each line one atomic write)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def phase(self, label: str) -> None:
        """Host work `label` begins."""
        os.write(self.fd, phase_line(label))

    def games(self, who: str, tick_limit: int) -> None:
        """The games that follow are played by `who` with `tick_limit` ticks."""
        os.write(self.fd, games_line(tick_limit, who))

    def tick(self, event: int, tick: int) -> None:
        """A tick starts or ends (a `marl_bgs_eval.watch.Watch`)."""
        os.write(self.fd, tick_line(event, tick))
