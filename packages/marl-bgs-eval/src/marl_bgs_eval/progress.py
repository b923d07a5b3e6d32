"""Progress of long work, for every command line: a rich bar on a terminal, and plain lines when
stderr is piped or logged, such as `play: 12/48 games, 25%, 41 s elapsed, about 123 s left`.

A plain line is printed when the work starts, at each further tenth of it (at most one every
`PLAIN_MIN_SECONDS`), at least every `PLAIN_EVERY_SECONDS` while it reports, and at the end; each
is flushed at once, so a log shows the work moving. Both go to stderr; results go to stdout.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

PLAIN_EVERY_SECONDS = 30.0  # a plain line at least this often while the work reports
PLAIN_EVERY_SHARE = 0.1  # and one at each further tenth of the work
PLAIN_MIN_SECONDS = 2.0  # but no two tenths' lines closer together than this


class Show(Protocol):
    """Report progress: `done` (a float: finished units plus the done share of running ones),
    `finished` (whole units) and an optional `status` text."""

    def __call__(self, done: float, finished: int, status: str = "") -> None: ...


def on_terminal() -> bool:
    """Whether stderr is a terminal (or a notebook) that redraws a bar in place."""
    console = Console(stderr=True)
    return console.is_terminal or console.is_jupyter


def note(text: str) -> None:
    """One plain line on stderr, flushed (a step of long work, on a terminal or in a log)."""
    print(text, file=sys.stderr, flush=True)


def _tenths(share: float) -> int:
    """How many whole `PLAIN_EVERY_SHARE` steps `share` holds (exact at 0.3, 0.6, ...)."""
    return int(share / PLAIN_EVERY_SHARE + 1e-9)


class PlainLines:
    """The plain-line reporter of `progress_bar`, starting at `start` units done with `status`
    (`clock`: seconds, for tests)."""

    def __init__(
        self, total: int, label: str, unit: str, start: int = 0, status: str = "", *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:  # fmt: skip
        self.total, self.label, self.unit, self.clock = total, label, unit, clock
        self.start = self.last = clock()
        self.state: tuple[float, int, str] = (float(start), start, status)
        self.shown, self.first = self.state, self._share(start)
        self._line()

    def __call__(self, done: float, finished: int, status: str = "") -> None:
        self.state = (done, finished, status)
        now, shown = self.clock(), self._share(self.shown[0])
        tenth = _tenths(self._share(done)) > _tenths(shown) and now - self.last >= PLAIN_MIN_SECONDS
        if tenth or now - self.last >= PLAIN_EVERY_SECONDS:
            self._line()

    def close(self) -> None:
        """The last line, unless the last one shown already says it."""
        if self.state != self.shown:
            self._line()

    def _share(self, done: float) -> float:
        return min(1.0, done / self.total) if self.total > 0 else 1.0

    def _line(self) -> None:
        done, finished, status = self.shown = self.state
        now = self.last = self.clock()
        share, elapsed = self._share(done), now - self.start
        parts = [f"{finished:,}/{self.total:,} {self.unit}", f"{100 * share:.0f}%",
                 f"{elapsed:.0f} s elapsed"]  # fmt: skip
        if self.first < share < 1:  # at the pace since the start
            parts.append(f"about {elapsed * (1 - share) / (share - self.first):.0f} s left")
        if status:
            parts.append(status)
        note(f"{self.label}: {', '.join(parts)}")


@contextlib.contextmanager
def progress_bar(
    enabled: bool, total: int, label: str, unit: str = "games", *, start: int = 0,
    status: str = "", transient: bool = True,
) -> Iterator[Show]:  # fmt: skip
    """Report progress over `total` games (or other `unit`s), `start` of them already done, with
    the yielded `Show`: a rich bar on a terminal (cleared at the end if `transient`), plain lines
    otherwise (see the module docstring). A no-op when not `enabled`."""
    if not enabled:
        yield lambda done, finished, status="": None
        return
    if not on_terminal():
        lines = PlainLines(total, label, unit, start, status)
        yield lines
        lines.close()
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn(f"{{task.fields[count]}} {unit}"),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=transient) as bar:
        count = f"{start:,}/{total:,}"
        task = bar.add_task(label, total=total, completed=start, count=count, status=status)

        def show(done: float, finished: int, status: str = "") -> None:
            bar.update(task, completed=done, count=f"{finished:,}/{total:,}", status=status)

        yield show
