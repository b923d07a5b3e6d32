"""The sandbox: submitted programs run in a child process, timed from outside (the watchdog's
deadlines, at their edges) and bounded from inside (the kernel's limits). Real hostile programs
in the real child: `test_fuzz_submitted_programs.py` and the web service's test."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from marl_bgs_eval.watch import INIT_END, INIT_START, TICK_END, TICK_START
from marl_bgs_tournament import TournamentError
from marl_bgs_tournament.sandbox import LIMITS, Limits, RefusedError
from marl_bgs_tournament.sandbox.run import _ending, child_env
from marl_bgs_tournament.sandbox.watchdog import (
    Watchdog,
    games_line,
    phase_line,
    tick_line,
)

TEST_LIMITS = Limits(move_seconds=2.0, game_seconds=10.0, host_seconds=60.0)


# --- the watchdog's deadlines, at their edges (a clock of our own) ----------------------------


def _dog(tick_limit: int = 300) -> Watchdog:
    dog = Watchdog(TEST_LIMITS, "mine", tick_limit, now=0.0)
    dog.line(phase_line("compiling mine vs random"), 1.0)
    return dog


def test_a_tick_may_take_exactly_the_move_limit_and_no_more() -> None:
    dog = _dog()
    dog.line(tick_line(TICK_START, 41), 10.0)
    assert not dog.expired(10.0 + TEST_LIMITS.move_seconds)  # exactly at the limit: passes
    assert dog.expired(10.0 + TEST_LIMITS.move_seconds + 1e-6)
    assert dog.reason == "mine exceeded 2 s per tick at tick 41"
    dog.line(tick_line(TICK_END, 41), 12.0)  # ended in time: host work's clock again
    assert not dog.expired(12.0 + TEST_LIMITS.host_seconds)
    assert dog.expired(12.0 + TEST_LIMITS.host_seconds + 1e-6)
    assert dog.reason == "exceeded 60 s of host work (compiling mine vs random)"


def test_the_first_games_memory_has_the_move_limit() -> None:
    dog = _dog()
    dog.line(tick_line(INIT_START, 0), 5.0)
    assert not dog.expired(7.0)
    assert dog.expired(7.0 + 1e-6)
    assert dog.reason == "mine exceeded 2 s to start the games' memory"
    dog.line(tick_line(INIT_END, 0), 6.0)
    assert not dog.expired(7.5)


def test_a_game_may_take_exactly_the_game_limit_over_its_ticks() -> None:
    dog = _dog(tick_limit=11)  # a game: 11 ticks; 10 s at most, 2 s per tick at most
    now = 0.0
    for t in range(10):  # ten ticks of 0.875 s: 8.75 s, 1.25 s left for the eleventh
        dog.line(tick_line(TICK_START, t), now)
        dog.line(tick_line(TICK_END, t), now + 0.875)
        now += 1.0
    dog.line(tick_line(TICK_START, 10), now)
    assert not dog.expired(now + 1.25)  # exactly 10 s of the game's ticks: passes
    assert dog.expired(now + 1.25 + 1e-6)
    assert dog.reason == "mine exceeded 10 s per game: 11 ticks in a row took longer, to tick 10"
    dog.line(tick_line(TICK_END, 10), now + 0.5)
    dog.line(tick_line(TICK_START, 11), now + 1.0)  # tick 0 left the window: 9 x 0.875 + 0.5
    assert dog.deadline == now + 1.0 + (10.0 - 8.375)


def test_new_games_get_their_own_window_and_name() -> None:
    dog = _dog(tick_limit=5)
    for t in range(4):
        dog.line(tick_line(TICK_START, t), float(t))
        dog.line(tick_line(TICK_END, t), t + 1.9)
    dog.line(games_line(5, "a vs b"), 10.0)
    dog.line(tick_line(TICK_START, 0), 11.0)
    assert dog.deadline == 13.0
    assert dog.reason == "a vs b exceeded 2 s per tick at tick 0"


@pytest.mark.parametrize("line", [b"tick 9 3", b"tick 1", b"rm -rf /", b"tick x y", b"\xff"])
def test_a_malformed_report_line_is_refused(line) -> None:
    with pytest.raises((ValueError, UnicodeDecodeError)):
        _dog().line(line, 2.0)


@pytest.mark.parametrize(
    ("changes", "field"),
    [({"move_seconds": 0}, "move_seconds"), ({"cpu_seconds": 1.5}, "cpu_seconds"),
     ({"memory_bytes": -1}, "memory_bytes"), ({"game_seconds": float("nan")}, "game_seconds"),
     ({"move_seconds": 20.0, "game_seconds": 10.0}, "move_seconds"),
     ({"open_files": True}, "open_files")],
)  # fmt: skip
def test_bad_limits_are_refused_by_name(changes, field) -> None:
    with pytest.raises(TournamentError, match=f"limits.{field}"):
        Limits(**changes)
    with pytest.raises(TournamentError, match="unknown fields"):
        Limits.from_dict({**LIMITS.as_dict(), "wall": 3})
    assert Limits.from_dict(LIMITS.as_dict()) == LIMITS


def test_the_child_inherits_no_secret_and_lives_in_its_folder(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", "s3cret")
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    env = child_env(tmp_path)
    assert "SERVICE_TOKEN" not in env
    assert "s3cret" not in env.values()
    assert env["HOME"] == env["TMPDIR"] == str(tmp_path)
    assert env["JAX_PLATFORMS"] == "cpu"


# --- the kernel's limits on a confined process -------------------------------------------------

CONFINED = """
import os, sys
from marl_bgs_tournament.sandbox.child import confine
from marl_bgs_tournament.sandbox.limits import Limits
confine(Limits(cpu_seconds={cpu}, memory_bytes={memory}, file_bytes={file}, open_files={files}))
if sys.argv[1] == "cpu":
    while True:
        pass
for what in sys.argv[1:]:
    try:
        if what == "memory":
            block = bytearray({memory})  # the whole address space at once: more than is left
        if what.startswith("file"):  # "file": one byte over the limit, "file-at": at it
            with open(what, "wb") as f:
                f.write(b"x" * ({file} + (what == "file")))
        if what == "files":
            handles = [open(os.devnull) for _ in range({files})]
            del handles
        print(what, "allowed")
    except OSError as err:
        print(what, "refused", err.errno)
    except MemoryError:
        print(what, "refused memory")
"""


def _confined(folder: Path, *what: str, cpu: int = 60) -> subprocess.Popen:
    values = {"cpu": cpu, "memory": 3 << 30, "file": 1 << 20, "files": 64}
    return subprocess.Popen([sys.executable, "-c", CONFINED.format(**values), *what], cwd=folder,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip


def test_the_kernel_ends_a_program_past_its_cpu_time(tmp_path) -> None:
    proc = _confined(tmp_path, "cpu", cpu=1)
    dog = Watchdog(LIMITS, "spinner", 300, now=0.0)
    with pytest.raises(RefusedError, match="exceeded the CPU-time limit of 1 s"):
        _ending(proc, Limits(cpu_seconds=1), tmp_path, dog)
    assert proc.returncode == -signal.SIGXCPU


def test_the_kernel_refuses_memory_file_size_and_open_files_past_their_limits(tmp_path) -> None:
    out, _ = _confined(tmp_path, "memory", "file-at", "file", "files").communicate(timeout=60)
    assert out.splitlines() == [
        "memory refused memory",
        "file-at allowed",
        f"file refused {errno.EFBIG}",
        f"files refused {errno.EMFILE}",
    ], out
    assert os.path.getsize(tmp_path / "file") == 1 << 20  # nothing beyond the limit


def test_the_documented_limits_are_the_rulebooks() -> None:
    """docs/tournament.md's table of limits says what `LIMITS` holds (the one owner)."""
    doc = (Path(__file__).resolve().parents[3] / "docs" / "tournament.md").read_text()
    table = doc[doc.index("**The limits**") :]
    for limit, value, _ in LIMITS.rows():
        assert f"| {limit} | {value} |" in table, limit


def test_what_the_child_leaves_is_read_as_untrusted(tmp_path) -> None:
    from marl_bgs_tournament.sandbox.run import _json_record

    for bad in (b"", b"[1, 2]", b'{"kind": "memory"', b"\xff" * 10, b'{"a": 1}' + b" " * 100):
        (tmp_path / "result.json").write_bytes(bad)
        with pytest.raises(RefusedError, match=r"left no readable result\.json"):
            _json_record(tmp_path / "result.json", 64)
    (tmp_path / "result.json").write_bytes(b'{"table": []}')
    assert _json_record(tmp_path / "result.json", 64) == {"table": []}


def test_a_file_changed_after_the_service_checked_it_is_not_loaded(tmp_path) -> None:
    from marl_bgs_tournament.portable import file_sha256
    from marl_bgs_tournament.sandbox.jobs import system_of

    path = tmp_path / "entry.mbgs"
    path.write_bytes(b"as checked")
    sha = file_sha256(path)
    path.write_bytes(b"swapped after the check")
    with pytest.raises(TournamentError, match=r"entry\.mbgs: changed since the service checked it"):
        system_of(f"file:{sha}:{path}")
    with pytest.raises(TournamentError, match=r"source: expected builtin:<name> or file:"):
        system_of("http://example.org/x.mbgs")
