"""A progress bar over games that moves while they play, not only when they end (or over any
other unit of work)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn


@contextlib.contextmanager
def progress_bar(
    enabled: bool, total: int, label: str, unit: str = "games"
) -> Iterator[Callable[[float, int], None]]:
    """A rich bar over `total` games (or other `unit`s). Call the yielded function with the work
    done (a float: finished games plus the played share of running ones) and the number
    finished. A no-op when disabled."""
    if not enabled:
        yield lambda done, finished: None
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn(f"{{task.fields[games]}} {unit}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task(label, total=total, games=f"0/{total}")
        yield lambda done, finished: bar.update(task, completed=done, games=f"{finished}/{total}")
