"""The service's side: one child process per job, timed from outside and removed afterwards.

`run_job` starts `python -m marl_bgs_tournament.sandbox.child` in a new session (so the whole
process group can be ended), in a fresh temporary working folder that is also its HOME and
TMPDIR, with a cleaned environment (`CHILD_ENV` only: no tokens, keys or passwords the service
holds), no inherited descriptors but stdin (the job) and its report pipe, and stdout/stderr
into a log in that folder. A `Watchdog` reads the report pipe; when a deadline passes, the
group is killed and `RefusedError` names the limit ("tdm-x exceeded 2 s per tick at tick 41").
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from marl_bgs_eval.progress import note
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.sandbox.child import ERROR, MAX_JOB_BYTES, RESULT
from marl_bgs_tournament.sandbox.limits import LIMITS, Limits, size_text
from marl_bgs_tournament.sandbox.watchdog import MAX_LINE, Watchdog

T = TypeVar("T")
# What a child inherits of the service's environment: how to find Python, JAX's platform and
# compilation cache as the operator set them; nothing else (the service's secrets stay out).
CHILD_ENV = ("PATH", "PYTHONPATH", "LANG", "LC_ALL", "LC_CTYPE", "JAX_PLATFORMS",
             "JAX_COMPILATION_CACHE_DIR", "XLA_FLAGS", "CUDA_VISIBLE_DEVICES")  # fmt: skip
LOG = "child.log"
MAX_RESULT_BYTES = 64 << 20
LOG_TAIL = 2000
MEMORY_SIGNS = re.compile(r"RESOURCE_EXHAUSTED|bad_alloc|MemoryError|Cannot allocate memory")


class RefusedError(TournamentError):
    """A job the sandbox ended or refused: `reason` says which limit or check."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def child_env(folder: Path) -> dict[str, str]:
    """The child's environment: `CHILD_ENV` from ours, and `folder` as HOME and TMPDIR."""
    env = {k: os.environ[k] for k in CHILD_ENV if k in os.environ}
    return env | {"HOME": str(folder), "TMPDIR": str(folder), "PYTHONDONTWRITEBYTECODE": "1"}


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _json_record(path: Path, limit: int) -> dict[str, Any]:
    """A JSON object of at most `limit` bytes the child left (RefusedError when it is not)."""
    try:
        with path.open("rb") as f:
            data = f.read(limit + 1)
        value = json.loads(data) if len(data) <= limit else None
    except (OSError, ValueError):
        value = None
    if not isinstance(value, dict):
        raise RefusedError(f"the sandbox's child left no readable {path.name}")
    return value


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _clean(text: str, folder: Path) -> str:
    """A child's message without the sandbox folder's path."""
    return text.replace(str(folder) + os.sep, "").replace(str(folder), "<sandbox>")


def _watch(proc: subprocess.Popen, pipe: int, dog: Watchdog, progress: bool) -> None:
    """Read report lines until the child closes the pipe; kill it and raise RefusedError when a
    deadline passes or a line is malformed. With `progress`, each new phase is printed."""
    pending, phase = b"", dog.phase
    while True:
        now = time.monotonic()
        if dog.expired(now):
            _kill(proc)
            raise RefusedError(dog.reason)
        wait = dog.deadline - now
        ready, _, _ = select.select([pipe], [], [], max(wait, 0.001))
        if not ready:
            continue
        data = os.read(pipe, 1 << 16)
        if not data:
            return
        pending += data
        *lines, pending = pending.split(b"\n")
        try:
            if len(pending) > MAX_LINE:
                raise ValueError("report line too long")
            for line in lines:
                dog.line(line, time.monotonic())
                if progress and dog.phase != phase:
                    note(f"sandbox: {dog.phase}")
                phase = dog.phase
        except (ValueError, UnicodeDecodeError):
            _kill(proc)
            raise RefusedError("the sandbox's child sent a malformed report") from None


def _ending(proc: subprocess.Popen, limits: Limits, folder: Path, dog: Watchdog) -> None:
    """Why a finished child failed (RefusedError), or nothing when it succeeded."""
    _, status, usage = os.wait4(proc.pid, 0)
    code = proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    if (folder / ERROR).is_file() and code != 0:
        error = _json_record(folder / ERROR, 8000)
        message = _clean(str(error.get("message", "")), folder)
        if error.get("kind") == "memory":
            memory = size_text(limits.memory_bytes)
            raise RefusedError(f"exceeded the memory limit ({memory}) during {dog.phase}: "
                               f"{message[:300]}")  # fmt: skip
        raise RefusedError(message)
    if code in (-signal.SIGXCPU, -signal.SIGKILL) and cpu >= limits.cpu_seconds:
        raise RefusedError(f"exceeded the CPU-time limit of {limits.cpu_seconds:,} s")
    if code != 0:
        tail = (
            (folder / LOG).read_text(errors="replace")[-LOG_TAIL:]
            if (folder / LOG).exists()
            else ""
        )
        if MEMORY_SIGNS.search(tail):
            memory = size_text(limits.memory_bytes)
            raise RefusedError(f"exceeded the memory limit ({memory}) during {dog.phase}")
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        raise RefusedError(f"the program's process ended with {how} during {dog.phase}")
    if _folder_bytes(folder) > limits.file_bytes:
        raise RefusedError(f"wrote more than the file limit ({size_text(limits.file_bytes)})")
    if not (folder / RESULT).is_file() or (folder / RESULT).stat().st_size > MAX_RESULT_BYTES:
        raise RefusedError("the sandbox's child left no readable result")


def run_job(
    job: dict[str, Any], collect: Callable[[dict[str, Any], Path], T], *,
    who: str = "the program", tick_limit: int = 300,
    limits: Limits = LIMITS, progress: bool = False,
) -> T:  # fmt: skip
    """Run `job` in a child; `collect(result, folder)` reads what it left (its files are
    removed afterwards). `who` and `tick_limit`: who plays its first games; `progress`
    prints each phase of its work on stderr."""
    text = json.dumps({**job, "limits": limits.as_dict()}).encode()
    if len(text) > MAX_JOB_BYTES:
        raise TournamentError(f"job: {len(text)} bytes, more than {MAX_JOB_BYTES}")
    with tempfile.TemporaryDirectory(prefix="marl-bgs-sandbox-") as tmp:
        folder = Path(tmp)
        read_end, write_end = os.pipe()
        try:
            with (folder / LOG).open("wb") as log:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "marl_bgs_tournament.sandbox.child", str(write_end)],
                    stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, cwd=folder,
                    env=child_env(folder), pass_fds=(write_end,), start_new_session=True,
                )  # fmt: skip
            os.close(write_end)
            write_end = -1
            dog = Watchdog(limits, who, tick_limit, time.monotonic())
            try:
                assert proc.stdin is not None
                proc.stdin.write(text)
                proc.stdin.close()
                _watch(proc, read_end, dog, progress)
                _ending(proc, limits, folder, dog)
            finally:
                if proc.poll() is None:
                    _kill(proc)
            return collect(_json_record(folder / RESULT, MAX_RESULT_BYTES), folder)
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)
