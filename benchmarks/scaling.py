"""Scaling of the games axis over 1, 2, 4 and 8 devices: the same TDM rollout, sharded (or,
with `--learner`, the same training run, its games split over the devices).

    JAX_PLATFORMS=cpu python benchmarks/scaling.py [--num-envs 1024] [--devices 1 2 4 8]
    JAX_PLATFORMS=cpu python benchmarks/scaling.py --learner ippo-rnn --num-envs 64 --ticks 32

Each device count runs in a fresh process. On a CPU host the devices are simulated
(`--xla_force_host_platform_device_count`): they share the host's cores, so the figure shows the
cost of sharding (partitioning, per-device programs), not a speedup beyond the core count; on a
machine with several accelerators the same command measures real scaling. Efficiency =
(game steps/s on d devices) / (d x game steps/s on 1 device).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _train_worker(
    learner: str, devices: int, num_envs: int, ticks: int, repeats: int
) -> dict[str, float]:
    """Game steps/s of `learner`'s updates (`num_envs` games x `ticks`), the median of `repeats`
    updates after the first (compiling) one, its games split over `devices` devices."""
    import dataclasses
    import statistics
    import time

    import jax

    from marl_bgs_train import make_train
    from marl_bgs_train.config import preset_of
    from marl_bgs_train.devices import training_mesh

    config = dataclasses.replace(preset_of("tdm", learner), num_envs=num_envs, rollout=ticks)
    trainer = make_train(config, mesh=training_mesh(devices))
    state, _ = trainer.run(jax.jit(trainer.init)(jax.random.key(0)), 1)
    jax.block_until_ready(state)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        state, _ = trainer.run(state, 1)
        jax.block_until_ready(state)
        times.append(time.perf_counter() - start)
    return {"devices": devices, "game_steps_per_s": num_envs * ticks / statistics.median(times)}


def _worker(devices: int, num_envs: int, ticks: int, repeats: int) -> dict[str, float]:
    import statistics
    import time

    import jax

    sys.path.insert(0, str(HERE))
    import bench_figures

    mesh = jax.make_mesh((devices,), ("games",))
    run = bench_figures.tdm_rollout(num_envs, ticks, mesh=mesh)
    key = jax.random.key(0)
    compiled = run.lower(key).compile()  # type: ignore[attr-defined]
    compiled(key).block_until_ready()
    times = []
    for i in range(repeats):
        start = time.perf_counter()
        compiled(jax.random.fold_in(key, i + 1)).block_until_ready()
        times.append(time.perf_counter() - start)
    return {"devices": devices, "game_steps_per_s": num_envs * ticks / statistics.median(times)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num-envs", type=int, default=1024)
    p.add_argument("--ticks", type=int, default=100)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--devices", type=int, nargs="+", default=[1, 2, 4, 8])
    p.add_argument("--learner", help="a Team Deathmatch preset: time its training instead")
    p.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        sizes = (args.worker, args.num_envs, args.ticks, args.repeats)
        row = _train_worker(args.learner, *sizes) if args.learner else _worker(*sizes)
        print(json.dumps(row))
        return 0
    rows = []
    for d in args.devices:
        env = {**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count={d}"}
        cmd = [sys.executable, __file__, "--worker", str(d), "--num-envs", str(args.num_envs)]
        cmd += ["--ticks", str(args.ticks), "--repeats", str(args.repeats)]
        cmd += ["--learner", args.learner] if args.learner else []
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    base = rows[0]["game_steps_per_s"] / rows[0]["devices"]
    print("| devices | game steps/s | speedup | efficiency |")
    print("|---:|---:|---:|---:|")
    for r in rows:
        speedup = r["game_steps_per_s"] / rows[0]["game_steps_per_s"]
        eff = r["game_steps_per_s"] / (r["devices"] * base)
        print(f"| {r['devices']} | {r['game_steps_per_s']:,.0f} | {speedup:.2f} | {eff:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
