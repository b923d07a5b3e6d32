"""Testing helpers: the conformance suite every mode, pool and adapter must pass (see
`marl_bgs.core.conformance`), runners for code that needs several devices or processes, and the
building blocks of the fuzz suites (`mutated` for data files; `Refused`, `holds`,
`case_label` and `check_setting` for a mode's settings).

from marl_bgs.testing import check_env
check_env(marl_bgs.make("tdm", map_id=47, num_envs=4), ticks=20)
"""

import copy
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from marl_bgs.core.conformance import (
    ConformanceError,
    check_env,
    check_jaxmarl_adapter,
    check_pettingzoo_adapter,
    same_structure,
)
from marl_bgs.core.env import MAX_NUM_ENVS
from marl_bgs.core.errors import ConfigError


def run_on_host_devices(script: str, devices: int, timeout: float = 600.0) -> str:
    """Run a Python `script` in a fresh process that sees `devices` simulated CPU devices
    (`--xla_force_host_platform_device_count`); return its stdout, or raise `AssertionError`
    with the end of its stderr when it fails."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise AssertionError(f"script failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def run_local_processes(
    script: str, processes: int, devices: int, env: dict[str, str] | None = None,
    timeout: float = 600.0,
) -> list[str]:  # fmt: skip
    """Run `script` in `processes` local processes of `devices` simulated CPU devices each, as
    hosts of one `jax.distributed` job: each finds `COORDINATOR`, `NUM_PROCESSES` and
    `PROCESS_ID` in its environment (for `jax.distributed.initialize`). Returns their stdouts;
    raises `AssertionError` with a failing process's stderr."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = {**os.environ, **(env or {}), "JAX_PLATFORMS": "cpu"}
    base["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    base |= {"COORDINATOR": f"127.0.0.1:{port}", "NUM_PROCESSES": str(processes)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            env={**base, "PROCESS_ID": str(i)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    outputs = [p.communicate(timeout=timeout) for p in procs]
    for i, (p, (_, stderr)) in enumerate(zip(procs, outputs, strict=True)):
        if p.returncode != 0:
            raise AssertionError(f"process {i} failed ({p.returncode}):\n{stderr[-3000:]}")
    return [stdout for stdout, _ in outputs]


__all__ = [
    "ConformanceError",
    "Refused",
    "case_label",
    "check_env",
    "check_jaxmarl_adapter",
    "check_pettingzoo_adapter",
    "check_setting",
    "holds",
    "run_local_processes",
    "run_on_host_devices",
    "same_structure",
]


DELETE = object()  # `mutated`: remove the key instead of setting it


def mutated(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of a decoded data file (a map, a scenario) with the dotted `path`
    ("units.0.health", list indices as numbers) set to `value`, or removed with `DELETE`: the
    building block of the file fuzz suites."""
    doc = copy.deepcopy(base)
    *parents, last = path.split(".")
    node: Any = doc
    for key in parents:
        node = node[int(key)] if key.isdigit() else node[key]
    slot: Any = int(last) if last.isdigit() else last
    if value is DELETE:
        del node[slot]
    else:
        node[slot] = value
    return doc


# --- settings fuzz suites ---------------------------------------------------------------------

MAX_MESSAGE = 400  # characters: a refusal names the field and the allowed values, no more
FAST_S = 1.0  # a memory refusal comes before anything is allocated


@dataclass(frozen=True)
class Refused:
    """A settings case's expected refusal: exactly `cls`, its message matching `pattern` (from
    the start, at most MAX_MESSAGE characters)."""

    pattern: str
    cls: type[Exception] = ConfigError
    fast: bool = False  # timed: raised within FAST_S once the start pool has compiled


Check = Callable[[Any], None]  # asserts what an accepted environment holds


def holds(**expected: Any) -> Check:
    """A check that an accepted env's attributes (dotted paths; an adapter's `native` env)
    equal the values given, with their types."""

    def check(env: Any) -> None:
        for path, want in expected.items():
            got: Any = getattr(env, "native", env)
            for part in path.split("."):
                got = getattr(got, part)
            assert got == want, (path, got, want)
            assert type(got) is type(want), (path, type(got), type(want))

    return check


_HUGE = {2**31: "2**31", 2**40: "2**40", 2**63: "2**63", -(2**63): "-2**63", 10**8: "10**8",
         10**400: "10**400", 10**5000: "10**5000", MAX_NUM_ENVS: "MAX_NUM_ENVS"}  # fmt: skip


def case_label(value: Any) -> str:
    """A short case id for a value (huge integers by their formula, long values cut)."""
    if type(value) is int and value in _HUGE:
        return _HUGE[value]
    if isinstance(value, np.generic):
        return f"np.{type(value).__name__}({value.item()!r})"
    if isinstance(value, list | tuple) and len(value) > 6:
        return f"{type(value).__name__} of {len(value)} ({case_label(value[0])}, ...)"
    # Without memory addresses, so every process (pytest-xdist's workers) names a case alike.
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))
    return text if len(text) <= 30 else text[:27] + "..."


def check_setting(
    make: Callable[..., Any], kwargs: dict[str, Any], expect: Refused | Check, plain: Check
) -> str:
    """Run one settings case: `make(**kwargs)` must raise what `expect` (a `Refused`) says, or
    build an env that passes `plain` (plain Python values whatever it was given) and `expect`.
    Returns "error" or "accepted" (the fuzz report's outcome)."""
    if not isinstance(expect, Refused):
        env = make(**dict(kwargs))
        plain(getattr(env, "native", env))
        expect(env)
        return "accepted"
    if expect.fast:  # compile the start pool first: only the refusal is timed
        make(**{k: v for k, v in kwargs.items() if k != "num_envs"})
    start = time.perf_counter()
    try:
        make(**dict(kwargs))
    except Exception as err:
        elapsed, error = time.perf_counter() - start, err
    else:
        raise AssertionError(f"accepted; expected {expect.cls.__name__}: {expect.pattern}")
    message = str(error)
    assert type(error) is expect.cls, repr(error)[:300]
    assert len(message) <= MAX_MESSAGE, (len(message), message[:200])
    assert re.match(expect.pattern, message, re.DOTALL), message[:300]
    assert not expect.fast or elapsed < FAST_S, elapsed
    return "error"
