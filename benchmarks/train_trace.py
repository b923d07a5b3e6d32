"""Where one update of a learner spends its time, from a `jax.profiler` trace, on any device.

    JAX_PLATFORMS=cpu python benchmarks/train_trace.py --preset mappo-rnn --num-envs 512
    python benchmarks/train_trace.py --num-envs 1024 --out-json train-trace-1024.json   # a GPU

Compiles one update of `--preset` (the learner `train_throughput.py` times: its rollout with both
teams acting, then the learning), times `--repeats` calls after a warm-up, then runs one more
under `jax.profiler` and prints: the update's wall time, the time its compiled kernels ran
(summed; above the wall time where kernels overlap, below it where the device waits between
them), how many kernels ran (on a GPU each is a launch: a learner that runs thousands of small
kernels an update is paced by launches, not arithmetic), the kernels' time by phase (the
`rollout` and `learning` scopes of `marl_bgs_train.selfplay`; `other` is the advantages, the
batch's layout and the update's end) and the kernels that took the most time, each with the JAX
operation it came from. The trace is kept under `--out` for Perfetto or TensorBoard.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import time
from pathlib import Path

import jax

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_trace import traced_kernels  # noqa: E402
from train_throughput import build_trainer  # noqa: E402

PHASES = ("rollout", "learning")  # the named scopes of an update, in order


def phase_of(op: str) -> str:
    """The phase a kernel belongs to, from its JAX operation's named scopes."""
    parts = op.split("/")
    return next((p for p in PHASES if p in parts), "other")


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--mode", default="tdm")
    p.add_argument("--preset", default="mappo-rnn")
    p.add_argument("--num-envs", type=int, default=512)
    p.add_argument("--rollout", type=int, default=32)
    p.add_argument("--repeats", type=int, default=3, help="timed calls, the median reported")
    p.add_argument("--top", type=int, default=20)
    p.add_argument("--out", type=Path, default=Path("/tmp/marl-bgs-train-trace"))
    p.add_argument("--out-json", type=Path, help="also write the figures as JSON")
    args = p.parse_args(argv)

    trainer = build_trainer(args.mode, args.preset, args.num_envs, args.rollout, False)
    hyper = trainer.hyper()
    state = jax.jit(trainer.init)(jax.random.key(0))
    started = time.perf_counter()
    update = jax.jit(trainer.update).lower(state, hyper).compile()
    compile_s = time.perf_counter() - started
    state = jax.block_until_ready(update(state, hyper))[0]
    seconds = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        state = jax.block_until_ready(update(state, hyper))[0]
        seconds.append(time.perf_counter() - started)
    wall_ms = statistics.median(seconds) * 1e3
    traced = traced_kernels(lambda: update(state, hyper), update.as_text(), args.out)

    kernel_ms = sum(traced.total.values()) / 1e3
    steps = args.num_envs * args.rollout
    phases: collections.Counter[str] = collections.Counter()
    for name, us in traced.total.items():
        phases[phase_of(traced.sources[name][1])] += us / 1e3
    device = str(jax.devices()[0])
    print(
        f"{args.preset} on {args.mode}, {args.num_envs} games x {args.rollout} ticks, {device}: "
        f"update {wall_ms:.1f} ms ({steps / wall_ms * 1e3:,.0f} game steps/s), compile "
        f"{compile_s:.0f} s; kernels {kernel_ms:.1f} ms in {traced.launches:,} runs"
    )
    if not kernel_ms:  # a runtime whose trace names kernels neither way `traced_kernels` reads
        print(f"no kernel in the trace matched the program's HLO; see {traced.path}")
        kernel_ms = float("nan")
    for phase in (*PHASES, "other"):
        print(f"  {phase:9} {phases[phase]:9.1f} ms {phases[phase] / kernel_ms:6.1%}")
    print(f"{'ms':>8} {'share':>6}  {'phase':9} {'kernel':30} {'result':26} JAX operation")
    for name, us in traced.total.most_common(args.top):
        shape, op = traced.sources[name]
        print(
            f"{us / 1e3:8.2f} {us / 1e3 / kernel_ms:6.1%}  {phase_of(op):9} {name[:30]:30} "
            f"{shape[:26]:26} {op[-80:]}"
        )
    print(f"trace: {traced.path}")
    figures = {
        "preset": args.preset, "mode": args.mode, "num_envs": args.num_envs,
        "rollout": args.rollout, "device": device, "update_ms": wall_ms,
        "game_steps_per_s": steps / wall_ms * 1e3, "compile_s": compile_s,
        "kernel_ms": kernel_ms if traced.launches else None, "kernel_runs": traced.launches,
        "phases_ms": {phase: phases[phase] for phase in (*PHASES, "other")},
        "top": [
            {"kernel": name, "ms": us / 1e3, "op": traced.sources[name][1]}
            for name, us in traced.total.most_common(args.top)
        ],
    }  # fmt: skip
    if args.out_json:
        args.out_json.write_text(json.dumps(figures, indent=1) + "\n")
    return figures


if __name__ == "__main__":
    main()
