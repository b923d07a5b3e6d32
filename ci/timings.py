"""Where a run of the test command spent its time: the table `nox -s timings` prints last.

The noxfile records each session's wall time and outcome as `session-<name>.tsv` (one line:
seconds, outcome, name) and each package's pytest run as `junit-<package>.xml`, all in one
reports folder. `report` reads the files written since the run started (older ones belong to an
earlier command) and returns plain text: every session's wall time, then each package's slowest
tests. Tested by `ci/test_timings.py` (`nox -s ci-checks`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SessionTime", "TestTime", "report", "session_times", "slowest_tests"]


@dataclass(frozen=True)
class SessionTime:
    """One nox session's wall time in seconds and how it ended ("success" or "failed")."""

    name: str
    seconds: float
    outcome: str


@dataclass(frozen=True)
class TestTime:
    """One test's time in seconds (setup, call and teardown) as its JUnit report gives it."""

    test_id: str
    seconds: float


def _fresh(paths: list[Path], since: float) -> list[Path]:
    return [p for p in paths if p.stat().st_mtime >= since]


def session_times(reports: Path, since: float) -> list[SessionTime]:
    """The sessions recorded in `reports` since `since` (a `time.time()`), in the order they
    ended. A line that is not `seconds<TAB>outcome<TAB>name` raises ValueError naming the file."""
    rows = []
    for path in sorted(_fresh(list(reports.glob("session-*.tsv")), since), key=_mtime):
        parts = path.read_text().rstrip("\n").split("\t")
        if len(parts) != 3:
            raise ValueError(f"{path}: expected 'seconds<TAB>outcome<TAB>name', got {parts!r}")
        try:
            seconds = float(parts[0])
        except ValueError:
            raise ValueError(f"{path}: seconds must be a number, got {parts[0]!r}") from None
        rows.append(SessionTime(name=parts[2], seconds=seconds, outcome=parts[1]))
    return rows


def _mtime(path: Path) -> float:
    return path.stat().st_mtime


def slowest_tests(junit: Path, count: int) -> list[TestTime]:
    """The `count` slowest test cases of one JUnit XML report, slowest first."""
    root = ET.parse(junit).getroot()
    times = []
    for case in root.iter("testcase"):
        module = (case.get("classname") or "").rsplit(".", 1)[-1]
        times.append(TestTime(f"{module}::{case.get('name')}", float(case.get("time") or 0.0)))
    return sorted(times, key=lambda t: -t.seconds)[:count]


def _clock(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes:d}:{rest:02d}"


def report(reports: Path, since: float, count: int = 15) -> str:
    """The whole table as text: sessions with wall times and their sum, then the `count` slowest
    tests of every package whose JUnit report this run wrote."""
    lines = ["Wall time per nox session (m:ss)"]
    sessions = session_times(reports, since)
    if not sessions:
        lines.append("  (no session of this run recorded its time)")
    width = max((len(s.name) for s in sessions), default=0)
    for s in sessions:
        lines.append(f"  {s.name:<{width}}  {_clock(s.seconds):>6}  {s.outcome}")
    if sessions:
        lines.append(f"  {'total':<{width}}  {_clock(sum(s.seconds for s in sessions)):>6}")
    junits = _fresh(sorted(reports.glob("junit-*.xml")), since)  # none where the folder is missing
    for junit in junits:
        package = junit.stem.removeprefix("junit-")
        lines += ["", f"Slowest {count} tests of {package} (seconds, setup + call + teardown)"]
        lines += [f"  {t.seconds:8.2f}  {t.test_id}" for t in slowest_tests(junit, count)]
    return "\n".join(lines)
