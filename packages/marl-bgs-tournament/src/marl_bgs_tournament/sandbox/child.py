"""The child process: `python -m marl_bgs_tournament.sandbox.child <report fd>`.

It reads one job (JSON) from stdin, confines itself (`confine`: CPU time, address space, file
size, open files, no core dumps), runs the job (`jobs.JOBS`) in its working folder and leaves
`result.json`, or `error.json` ({"kind": "refused" | "memory" | "error", "message"}) and exit
status 3. Its report lines go to the inherited descriptor only.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
from pathlib import Path
from typing import Any

from marl_bgs_tournament.sandbox.limits import Limits

MAX_JOB_BYTES = 16 << 20
RESULT, ERROR = "result.json", "error.json"
REFUSED_EXIT = 3


def confine(limits: Limits) -> None:
    """The kernel's bounds on this process (soft = hard: a program cannot raise them). The
    address space is bounded on a CPU backend only: a GPU runtime maps device memory into it."""
    import jax

    cpu = int(limits.cpu_seconds)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))  # SIGXCPU, then SIGKILL
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-large write fails instead
    if jax.default_backend() == "cpu":
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))


def _kind(err: BaseException) -> str:
    from marl_bgs_eval import EvalError
    from marl_bgs_tournament.errors import TournamentError

    if isinstance(err, MemoryError) or "RESOURCE_EXHAUSTED" in str(err):
        return "memory"
    return "refused" if isinstance(err, TournamentError | EvalError) else "error"


def main() -> None:
    """Run the job on stdin; see the module docstring."""
    fd = int(sys.argv[1])
    job: dict[str, Any] = json.loads(sys.stdin.buffer.read(MAX_JOB_BYTES))
    try:
        confine(Limits.from_dict(job.pop("limits")))
        from marl_bgs_tournament.sandbox.jobs import JOBS
        from marl_bgs_tournament.sandbox.report import Report

        result = JOBS[job.pop("kind")](job, Report(fd))
        Path(RESULT).write_text(json.dumps(result, default=str))
    except BaseException as err:  # every failure is reported, none escapes unnamed
        message = f"{type(err).__name__}: {err}" if _kind(err) == "error" else str(err)
        Path(ERROR).write_text(json.dumps({"kind": _kind(err), "message": message[:4000]}))
        os._exit(REFUSED_EXIT)
    os._exit(0)


if __name__ == "__main__":
    main()
