"""The sandbox: submitted programs run in a child process, timed from outside (the watchdog's
deadlines, at their edges) and bounded from inside (the kernel's limits), so a program that
hangs, loops from a late tick, or allocates beyond the limit is refused with its reason."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from marl_bgs_eval.watch import INIT_END, INIT_START, TICK_END, TICK_START
from marl_bgs_tournament import TournamentError
from marl_bgs_tournament.sandbox import LIMITS, Limits, RefusedError, check_file
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


def _confined(folder: Path, *what: str) -> subprocess.Popen:
    values = {"cpu": 1, "memory": 3 << 30, "file": 1 << 20, "files": 64}
    return subprocess.Popen([sys.executable, "-c", CONFINED.format(**values), *what], cwd=folder,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip


def test_the_kernel_ends_a_program_past_its_cpu_time(tmp_path) -> None:
    proc = _confined(tmp_path, "cpu")
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


# --- real programs in the real child --------------------------------------------------------


def _exported(system, path: Path) -> Path:
    from marl_bgs_tournament import export_system

    export_system(system, path, team="lab", training={"maps": [0], "scenarios": []},
                  batch_sizes=(16,))  # fmt: skip
    return path


def time_bomb(at: int):
    """Plays like random, then from tick `at` (counted in its memory) never ends a move."""
    import jax
    import jax.numpy as jnp

    import marl_bgs_eval as ev
    from marl_bgs import TeamDeathmatch

    def act(keys, memory, inputs):
        legal = jax.vmap(TeamDeathmatch().sample_legal)(keys, inputs.masks)

        def forever(x):  # |x| >= 0 for ever: XLA cannot know it
            return jax.lax.while_loop(lambda c: c >= 0, jnp.abs, x)

        late = jnp.max(memory)
        stuck = jax.lax.cond(late >= at, forever, lambda x: x, late)
        return jnp.where(stuck == -7, 0, legal).astype(jnp.int32), memory + 1

    return ev.system(act, name=f"bomb{at}", init=lambda key: jnp.int32(0))


def memory_hog(floats: int):
    """Carries `floats` float32 per game through a loop (XLA must hold them all at once)."""
    import jax
    import jax.numpy as jnp

    import marl_bgs_eval as ev

    def act(keys, memory, inputs):
        big = jnp.zeros((inputs.obs.shape[0], floats), jnp.float32) + inputs.obs[:, 0, :1]
        _, big = jax.lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1] * 2.0),
                                    (0, big))  # fmt: skip
        return jnp.where(big[:, :1, None] > 1e30, 1, 0).astype(jnp.int32) * jnp.ones(
            (1, 5, 3), jnp.int32
        ), memory

    return ev.system(act, name="hog")


def _sandbox_folders() -> set[str]:
    return {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("marl-bgs-sandbox-")}


def test_a_time_bomb_after_the_old_horizon_is_refused_at_its_tick(tmp_path) -> None:
    """It plays 41 ticks as random (the old checks ran 32), then hangs: the full_games check
    plays whole games under the watchdog, which ends the child and names the tick."""
    from marl_bgs_tournament.cli import app

    path = _exported(time_bomb(41), tmp_path / "bomb.mbgs")
    before = _sandbox_folders()
    result = CliRunner().invoke(app, ["check", str(path), "--tick-limit", "45"])
    assert result.exit_code == 1, result.output
    assert "refused: bomb41 exceeded 2 s per tick at tick 41" in result.stdout
    assert "sandbox: rulebook check full_games" in result.stderr
    assert _sandbox_folders() <= before  # its working folder is gone


def test_an_allocation_beyond_the_memory_limit_is_refused(tmp_path) -> None:
    path = _exported(memory_hog(1 << 27), tmp_path / "hog.mbgs")  # 16 games x 512 MiB
    limits = Limits(memory_bytes=5 << 30)
    with pytest.raises(RefusedError, match=r"exceeded the memory limit \(5 GiB\) during rulebook "
                       "check full_games: .*RESOURCE_EXHAUSTED"):  # fmt: skip
        check_file(path, checks=("full_games",), tick_limit=4, limits=limits)
