"""`view`, `watch` and `play` check their inputs and the display before any window: the real
console scripts, run with no display at all and with SDL's dummy driver, end a missing file, a
corrupt file, a bad option or no display with one line on stderr and exit code 2, fast (a
hang fails the test through the subprocess timeout, not CI's)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from marl_bgs_clients import preflight
from marl_bgs_clients.cli import app
from marl_bgs_clients.viewer import ReplayViewer
from marl_bgs_clients.window import display_problem
from marl_bgs_eval.tdm import replays

BIN = Path(sys.executable).parent
FAST = 5.0  # seconds: the checks take ~0.3 s on 2 busy cores; a hang is cut at HANG
HANG = 30
DISPLAYS = {
    "no display": {},
    "dummy driver": {"SDL_VIDEODRIVER": "dummy"},
}


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")}  # fmt: skip
    return {**env, **extra}


def _run(args: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    done = subprocess.run([str(BIN / args[0]), *args[1:]], env=env, capture_output=True,
                          text=True, timeout=HANG, stdin=subprocess.DEVNULL)  # fmt: skip
    return done, time.monotonic() - start


@pytest.fixture(scope="module")
def files(demo, tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("files")
    corrupt = folder / "corrupt.replay.zip"
    corrupt.write_bytes(b"these bytes are no zip archive")
    return {
        "valid": replays.save(demo, folder / "demo.replay.zip"),
        "missing": folder / "missing.replay.zip",
        "corrupt": corrupt,
    }


CASES = [  # run with no display and with the dummy driver
    (["marl-bgs-clients", "view", "{missing}"], "missing.replay.zip: no such file"),
    (["marl-bgs-clients", "view", "{corrupt}"], "corrupt.replay.zip: not a replay file"),
    (["marl-bgs-clients", "view", "{valid}"], "no display: "),
    (["marl-bgs-watch", "tdm-alpha", "tdm-beta"], "no display: "),
    (["marl-bgs-clients", "play", "tdm-alpha", "tdm-beta", "--human", "2"], "no display: "),
]
OPTIONS = [  # bad options: refused the same way whatever the display (run once)
    (["marl-bgs-clients", "view", "{valid}", "--pov", "10"], "--pov: expected slots in [0, 9]"),
    (["marl-bgs-clients", "watch", "tdm-alpha", "tdm-beta", "--gif", "x.png"], "--gif: expected"),
    (["marl-bgs-clients", "play", "tdm-alpha", "tdm-beta", "--human", "12"], "--human: expected"),
]


@pytest.mark.parametrize("display", list(DISPLAYS))
def test_refusals_are_one_line_and_exit_2_before_any_window(files, display) -> None:
    for args, said in CASES + (OPTIONS if display == "no display" else []):
        args = [a.format(**files) for a in args]
        done, took = _run(args, _env(DISPLAYS[display]))
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2, (args, done.stderr)
        assert len(lines) == 1, (args, done.stderr)
        assert lines[0].startswith("error: "), (args, lines)
        assert said in lines[0], (args, lines)
        assert done.stdout == ""
        assert took < FAST, (args, took)


def test_with_a_display_the_full_checks_run_before_the_window(files, monkeypatch, tmp_path) -> None:
    """A zip that fails the replay checks is refused in one line; a good file reaches the window
    (here: a display is pretended and the window's loop replaced)."""
    monkeypatch.setattr(preflight, "display_problem", lambda: None)
    opened = []
    monkeypatch.setattr(ReplayViewer, "run", lambda self: opened.append(self))
    bad = tmp_path / "header-only.replay.zip"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("header.json", "{}")
    result = CliRunner().invoke(app, ["view", str(bad)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: cannot open {bad}: ")
    assert len(result.stderr.splitlines()) == 1
    assert not opened
    result = CliRunner().invoke(app, ["view", str(files["valid"]), "--pov", "7"])
    assert result.exit_code == 0, result.output
    assert [(v.name, v.observer, v.replay.ticks) for v in opened] == [
        ("demo.replay.zip", 7, replays.load(files["valid"]).ticks)
    ]


def test_the_display_is_judged_from_the_environment(monkeypatch) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    assert display_problem() == "no display: neither DISPLAY nor WAYLAND_DISPLAY is set"
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    assert display_problem() == "no display: WAYLAND_DISPLAY is set but XDG_RUNTIME_DIR is not"
    for driver in ("dummy", "offscreen", " Dummy "):
        monkeypatch.setenv("SDL_VIDEODRIVER", driver)
        assert display_problem() == f"no display: SDL_VIDEODRIVER={driver.strip().lower()} " \
                                    "draws into no window"  # fmt: skip


def test_a_stale_display_is_found_out_by_sdl(files) -> None:
    """DISPLAY names an X server that is not there: SDL cannot start, and says so in one line."""
    done, took = _run(["marl-bgs-clients", "view", str(files["valid"])],
                      _env({"DISPLAY": ":97"}))  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: no display: SDL could not start its video")
    assert took < FAST
