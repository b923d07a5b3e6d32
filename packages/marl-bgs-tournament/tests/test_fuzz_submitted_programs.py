"""Fuzz family "submitted programs": what a hostile or broken submitted program can do to the
service, tried against the real sandbox. Each case ends with a refusal that names its cause (or,
for the report-line streams, with exactly the deadline the rules give); the service process
itself never runs the program.

- report streams: random sequences of the child's report lines (valid, malformed, at random
  times) fed to the watchdog, which must refuse every malformed line and keep every deadline
  within its limit
- real programs in the real child: one that plays like random and then never ends a move from
  tick 41 (past the old checks' 32 ticks), one that allocates beyond the memory limit, and one
  that keeps the rules (accepted: the table comes back whole)
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from marl_bgs_eval.watch import INIT_END, INIT_START, TICK_END, TICK_START
from marl_bgs_tournament.sandbox import Limits, RefusedError, check_file
from marl_bgs_tournament.sandbox.watchdog import Watchdog, games_line, phase_line, tick_line

pytestmark = pytest.mark.fuzz_family("submitted programs")
LIMITS = Limits(move_seconds=2.0, game_seconds=30.0, host_seconds=60.0)
MALFORMED = [b"tick 7 1", b"tick 1", b"tick a b", b"games x who", b"exit 0", b"\xff\xfe",
             b"tick 2 3 4", b""]  # fmt: skip


def _stream(rng: np.random.Generator) -> list[tuple[bytes, float, bool]]:
    """(line, seconds since the last line, malformed?) for one child's reports."""
    out: list[tuple[bytes, float, bool]] = [(phase_line("loading"), 0.5, False)]
    tick = 0
    for _ in range(int(rng.integers(5, 60))):
        r = rng.random()
        if r < 0.05:
            out.append((MALFORMED[int(rng.integers(len(MALFORMED)))], 0.1, True))
            break
        if r < 0.1:
            out.append((games_line(int(rng.integers(1, 50)), "a vs b"), 0.2, False))
        elif r < 0.15:
            out.append((phase_line(f"step {tick}"), 0.3, False))
        else:
            start, end = (INIT_START, INIT_END) if tick == 0 else (TICK_START, TICK_END)
            out.append((tick_line(start, tick), float(rng.uniform(0, 0.2)), False))
            out.append((tick_line(end, tick), float(rng.uniform(0, 2.5)), False))
            tick += 1
    return out


@pytest.mark.parametrize("seed", range(120))
def test_report_streams_keep_every_deadline_within_its_limit(seed, record_property) -> None:
    rng = np.random.default_rng(seed)
    dog, now = Watchdog(LIMITS, "mine", 20, now=0.0), 0.0
    for line, wait, malformed in _stream(rng):
        if dog.expired(now + wait):  # the child took too long: the service ends it here
            assert wait > (dog.deadline - now) >= 0
            assert "exceeded" in dog.reason
            record_property("outcome", "error")
            return
        now += wait
        if malformed:
            with pytest.raises((ValueError, UnicodeDecodeError)):
                dog.line(line, now)
            record_property("outcome", "error")
            return
        dog.line(line, now)
        limit = LIMITS.host_seconds if dog.started is None else LIMITS.move_seconds
        assert now <= dog.deadline <= now + limit
    record_property("outcome", "accepted")


# --- real programs in the real child --------------------------------------------------------


def _exported(system, path: Path) -> Path:
    from marl_bgs_tournament import export_system

    export_system(system, path, team="lab", training={"maps": [0], "scenarios": []},
                  batch_sizes=(16,))  # fmt: skip
    return path


def test_a_time_bomb_after_the_old_horizon_is_refused_at_its_tick(
    hostile, tmp_path, record_property, monkeypatch
) -> None:
    """It plays 41 ticks as random (the old checks ran 32), then hangs: the full_games check
    plays whole games under the watchdog, which ends the child and names the tick."""
    from marl_bgs_tournament.cli import app

    path = _exported(hostile.time_bomb(41), tmp_path / "bomb.mbgs")
    # The child's working folder goes to a temporary folder of this test alone (another test
    # process may run a sandbox at the same time in the shared one).
    own = tmp_path / "tmp"
    own.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(own))
    result = CliRunner().invoke(app, ["check", str(path), "--tick-limit", "45"])
    assert result.exit_code == 1, result.output
    assert "refused: bomb41 exceeded 2 s per tick at tick 41" in result.stdout
    assert "sandbox: rulebook check full_games" in result.stderr
    assert not [p for p in os.listdir(own) if p.startswith("marl-bgs-sandbox-")]  # it is gone
    record_property("outcome", "error")


def test_an_allocation_beyond_the_memory_limit_is_refused(
    hostile, tmp_path, record_property
) -> None:
    path = _exported(hostile.memory_hog(1 << 27), tmp_path / "hog.mbgs")  # 16 games x 512 MiB
    with pytest.raises(RefusedError, match=r"exceeded the memory limit \(5 GiB\) during rulebook "
                       "check full_games: .*RESOURCE_EXHAUSTED"):  # fmt: skip
        check_file(path, checks=("full_games",), tick_limit=4, limits=Limits(memory_bytes=5 << 30))
    record_property("outcome", "error")


def test_a_rule_abiding_program_passes_in_the_child(hostile, tmp_path, record_property) -> None:
    """The same time bomb, 41 ticks from going off: whole games of 40 ticks pass, and the
    child's table comes back as `check_entrant` makes it."""
    from marl_bgs_tournament import rulebook

    path = _exported(hostile.time_bomb(41), tmp_path / "calm.mbgs")
    checks = ("full_games", "memory_reset", "training_declared")
    table = check_file(path, checks=checks, tick_limit=40)
    assert list(table.columns) == list(rulebook.COLUMNS)
    assert list(table["check"]) == list(checks)
    assert bool(table["passed"].all()), table.to_string()
    assert table["detail"].iat[0] == "16 games of 40 ticks against random at batch sizes [16]"
    assert table["value"].iat[1] == 4  # its memory: one int32 per game
    record_property("outcome", "accepted")
