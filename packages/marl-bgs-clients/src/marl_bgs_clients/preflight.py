"""The checks `view`, `watch` and `play` run before anything heavy is imported or a window opens:
bad options, a missing or unreadable replay file and no display each end the command with one
line on stderr and exit code 2 (`marl_bgs_eval.console.fail`), within a second. Only the
standard library, typer and rich are imported here; the full replay checks
(`marl_bgs_eval.replay_files.load`) run after these, still before any window.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable
from pathlib import Path

from marl_bgs_clients.window import display_problem
from marl_bgs_eval.console import fail

# The clients' own refusals, besides eval's and the engine's (reported as one `error:` line).
ERRORS = ("marl_bgs_clients.export:ExportError", "marl_bgs_clients.window:NoDisplayError")

SLOTS = range(10)


def replay_file_problem(path: Path) -> str | None:
    """Why `path` cannot be a replay file at a glance (missing, a folder, unreadable, not a
    zip), or None; the full checks are `marl_bgs_eval.replay_files.load`'s."""
    if not path.exists():
        return f"{path}: no such file"
    if not path.is_file():
        return f"{path}: not a file"
    try:
        is_zip = zipfile.is_zipfile(path)
    except OSError as err:
        return f"{path}: cannot be read ({err.strerror or err})"
    return None if is_zip else f"{path}: not a replay file (not a zip archive)"


def _slots(field: str, values: Iterable[int]) -> None:
    bad = [v for v in values if v not in SLOTS]
    if bad:
        fail(f"{field}: expected slots in [0, 9], got {bad}")


def _suffix(field: str, path: Path | None, suffix: str) -> None:
    if path is not None and path.suffix.lower() != suffix:
        fail(f"{field}: expected a file ending in {suffix}, got {path}")


def _display(needs: str) -> None:
    problem = display_problem()
    if problem:
        fail(f"{problem}; {needs}")


def view(path: Path, pov: int | None) -> None:
    """`marl-bgs-clients view`: the POV slot, the file at a glance, then the display."""
    _slots("--pov", [] if pov is None else [pov])
    problem = replay_file_problem(path)
    if problem:
        fail(problem)
    _display("the Replay Viewer needs a window")


def export(path: Path, pov: int | None, out: Path) -> None:
    """`marl-bgs-clients export`: the POV slot, the output's suffix, the file at a glance."""
    _slots("--pov", [] if pov is None else [pov])
    if out.suffix.lower() not in (".gif", ".mp4", ".png"):
        fail(f"--out: expected a file ending in .gif, .mp4 or .png, got {out}")
    problem = replay_file_problem(path)
    if problem:
        fail(problem)


def watch(pov: int | None, gif: Path | None, mp4: Path | None) -> None:
    """`marl-bgs-watch`: the POV slot and animation names; the display when a window opens."""
    _slots("--pov", [] if pov is None else [pov])
    _suffix("--gif", gif, ".gif")
    _suffix("--mp4", mp4, ".mp4")
    if gif is None and mp4 is None:
        _display("the Replay Viewer needs a window (--gif or --mp4 writes an animation instead)")


def play(human: Iterable[int]) -> None:
    """`marl-bgs-clients play`: the person's slots, then the display."""
    _slots("--human", human)
    _display("the BattleClient needs a window")
