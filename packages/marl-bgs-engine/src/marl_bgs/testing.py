"""Testing helpers: the conformance suite every mode, pool and adapter must pass (see
`marl_bgs.core.conformance`), and runners for code that needs several devices or processes.

from marl_bgs.testing import check_env
check_env(marl_bgs.make("tdm", map_id=47, num_envs=4), ticks=20)
"""

import copy
import os
import socket
import subprocess
import sys
from typing import Any

from marl_bgs.core.conformance import (
    ConformanceError,
    check_env,
    check_jaxmarl_adapter,
    check_pettingzoo_adapter,
    same_structure,
)


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
    "check_env",
    "check_jaxmarl_adapter",
    "check_pettingzoo_adapter",
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
