"""Testing helpers: the conformance suite every mode, pool and adapter must pass (see
`marl_bgs.core.conformance`), and a runner for code that needs several devices.

from marl_bgs.testing import check_env
check_env(marl_bgs.make("tdm", map_id=47, num_envs=4), ticks=20)
"""

import os
import subprocess
import sys

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


__all__ = [
    "ConformanceError",
    "check_env",
    "check_jaxmarl_adapter",
    "check_pettingzoo_adapter",
    "run_on_host_devices",
    "same_structure",
]
