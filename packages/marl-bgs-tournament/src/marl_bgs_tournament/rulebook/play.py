"""Check 1, the play limits: speed and memory at 512 games on a GPU, or the scaled CPU rule (the
package docstring)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from marl_bgs import team_inputs
from marl_bgs_eval import EvalError, System, random_system
from marl_bgs_eval.seeds import action_keys, memory_keys, root_key
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.rulebook import recording
from marl_bgs_tournament.rulebook.limits import (
    CPU_BATCH,
    CPU_MIN_SPEED_RATIO,
    CPU_TICKS,
    GPU_TICKS,
    MAX_DEVICE_BYTES,
    MIN_STEPS_PER_S,
    PLAY_BATCH,
    TIMING_REPEATS,
    Row,
)
from marl_bgs_tournament.rulebook.recording import (
    _act_program,
    _as_system,
    _env,
    _init,
    _loop,
    _loop_args,
    _numbers,
    _starts,
)


def _analysis_bytes(stats: Any) -> int | None:
    if stats is None:
        return None
    return int(
        stats.argument_size_in_bytes + stats.output_size_in_bytes + stats.temp_size_in_bytes
        + stats.generated_code_size_in_bytes - stats.alias_size_in_bytes
    )  # fmt: skip


def _timer(sys: System, batch: int, ticks: int, seed: int) -> Callable[[], float]:
    """Seconds of one run of `ticks` ticks (the loop compiled and run once before)."""
    args = _loop_args(sys, batch, ticks, seed)
    run = _loop(sys, batch, args)
    jax.block_until_ready(run(*args))

    def once() -> float:
        start = time.perf_counter()
        jax.block_until_ready(run(*args))
        return time.perf_counter() - start

    return once


def _gb(n: float) -> str:
    return f"{n / 1e9:.3g} GB"


def act_memory_bytes(sys: System, batch: int = PLAY_BATCH) -> tuple[int | None, str]:
    """Bytes of the System's compiled `act` for `batch` games (XLA's memory_analysis) and how
    they were found: at `batch`, or at `CPU_BATCH` scaled linearly when it cannot be traced at
    `batch` (a file exported without that batch size; then the program the other checks run)."""
    starts = _starts(sys.mode, CPU_BATCH)
    env = _env(sys.mode, CPU_BATCH)
    size = env.spec.team_size
    inputs = jax.eval_shape(lambda s: team_inputs(env, s)[0], starts)
    spec = lambda x: jax.ShapeDtypeStruct((batch, *x.shape[1:]), x.dtype)  # noqa: E731
    keys = jax.ShapeDtypeStruct((batch, size) if sys.per_agent else (batch,),
                                jax.random.key(0).dtype)  # fmt: skip
    try:
        memory = jax.eval_shape(lambda k: _init(sys, k), keys)
        lowered = _act_program(sys).lower(sys.params, keys, memory, jax.tree.map(spec, inputs))
        found = _analysis_bytes(lowered.compile().memory_analysis())
        return found, f"compiled act at {batch} games"
    except (EvalError, TournamentError) as err:
        how = f"compiled act at {CPU_BATCH} games x {batch / CPU_BATCH:g} ({str(err)[:80]})"
    root, numbers = root_key(0), _numbers(CPU_BATCH)
    args = (
        sys.params,
        action_keys(root, numbers, starts.tick, 0, sys.per_agent, size),
        _init(sys, memory_keys(root, numbers, numbers, 0)),
        recording._team_inputs(sys.mode, starts),
    )
    found = _analysis_bytes(_act_program(sys).lower(*args).compile().memory_analysis())
    return (None if found is None else found * batch // CPU_BATCH), how


def play_limits(system: System, *, seed: int = 0) -> Row:
    """Speed and memory at 512 games (GPU), or the scaled CPU rule (the package docstring)."""
    sys = _as_system(system)
    if jax.default_backend() == "gpu":
        return _play_limits_gpu(sys, seed)
    return _play_limits_cpu(sys, seed)


def _play_limits_gpu(sys: System, seed: int) -> Row:
    try:
        once = _timer(sys, PLAY_BATCH, GPU_TICKS, seed)
    except (EvalError, TournamentError) as err:
        return Row(
            "play_limits",
            False,
            None,
            MIN_STEPS_PER_S,
            f"cannot play {PLAY_BATCH} games at once: {err}",
        )
    best = min(once() for _ in range(TIMING_REPEATS))
    steps = PLAY_BATCH * GPU_TICKS / best
    # The compiled loop's own needs: a process-wide device peak would also count what earlier
    # entrants or games left behind.
    args = _loop_args(sys, PLAY_BATCH, GPU_TICKS, seed)
    peak = _analysis_bytes(_loop(sys, PLAY_BATCH, args).memory_analysis())
    how = "compiled loop's memory_analysis"
    fast = steps >= MIN_STEPS_PER_S
    small = peak is not None and peak <= MAX_DEVICE_BYTES
    memory = "unknown" if peak is None else _gb(peak)
    detail = (
        f"{steps:,.0f} game steps/s at {PLAY_BATCH} games x {GPU_TICKS} ticks (>= "
        f"{MIN_STEPS_PER_S:,.0f}{'' if fast else ': too slow'}); memory {memory} ({how}; <= "
        f"{_gb(MAX_DEVICE_BYTES)}{'' if small else ': too much'})"
    )
    return Row("play_limits", bool(fast and small), round(steps, 1), MIN_STEPS_PER_S, detail)


def _play_limits_cpu(sys: System, seed: int) -> Row:
    mine = _timer(sys, CPU_BATCH, CPU_TICKS, seed)
    base = _timer(random_system(sys.mode), CPU_BATCH, CPU_TICKS, seed)
    t_mine, t_base = np.inf, np.inf
    for _ in range(TIMING_REPEATS):  # alternately, so a busy moment slows both
        t_mine, t_base = min(t_mine, mine()), min(t_base, base())
    steps = CPU_BATCH * CPU_TICKS / t_mine
    base_steps = CPU_BATCH * CPU_TICKS / t_base
    ratio = steps / base_steps
    found, how = act_memory_bytes(sys)
    fast = ratio >= CPU_MIN_SPEED_RATIO
    small = found is None or found <= MAX_DEVICE_BYTES
    memory = "not reported by this backend" if found is None else _gb(found)
    detail = (
        f"CPU scaled rule: {steps:,.0f} game steps/s at {CPU_BATCH} games x {CPU_TICKS} ticks, "
        f"{ratio:.3f} of random vs random's {base_steps:,.0f} (>= {CPU_MIN_SPEED_RATIO}"
        f"{'' if fast else ': too slow'}); memory at {PLAY_BATCH} games {memory} ({how}; <= "
        f"{_gb(MAX_DEVICE_BYTES)}{'' if small else ': too much'})"
    )
    return Row("play_limits", bool(fast and small), round(ratio, 4), CPU_MIN_SPEED_RATIO, detail)
