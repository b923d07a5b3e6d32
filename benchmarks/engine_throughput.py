"""Engine throughput, measured side by side: MARL-BattleGrounds TDM against JaxMARL's SMAX.

    JAX_PLATFORMS=cpu python benchmarks/engine_throughput.py            # the CPU curve
    python benchmarks/engine_throughput.py --quick                      # smoke test, seconds
    python benchmarks/engine_throughput.py --gpu                        # the GPU curve to 8192

Every figure runs in its own fresh process (`--worker FIGURE --num-envs N`), so compiles and caches
never leak between figures; at each `num_envs` TDM runs, then SMAX, so both see the same load. The
ratio TDM/SMAX is the result; absolute numbers depend on the machine and its load. Results go to a
JSON file and to a generated section of docs/performance.md. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CPU_NUM_ENVS = (32, 128, 512, 1024, 4096)  # the speed goal's range
GPU_NUM_ENVS = (32, 128, 512, 1024, 2048, 4096, 8192)
PEER = "smax"
# Rows beyond the TDM/SMAX curve, each at the largest num_envs of the run. Metric levels live in
# marl-bgs-eval and are measured through evaluation by benchmarks/metrics_cost.py.
EXTRA_FIGURES = ("tdm-no-reset", "tdm-scripted", "two-bridge")
LEARNER_FIGURES = ("tdm-learn", "smax-learn")  # --learner: the training-shaped pair
LEARNER_NUM_ENVS = (128, 1024)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="smoke test: 2 sizes, 20 ticks, 2 calls")
    p.add_argument("--gpu", action="store_true", help="GPU curve up to 8192 games, GPU memory")
    p.add_argument("--num-envs", type=int, nargs="+", help="batch sizes (default: 32 .. 4096)")
    p.add_argument("--ticks", type=int, help="ticks per timed rollout (default 500)")
    p.add_argument("--repeats", type=int, help="timed calls per figure, median taken (default 5)")
    p.add_argument(
        "--processes", type=int,
        help="fresh processes per figure and size, TDM and the peer alternating; the best is"
        " reported, every one listed (default 3 on the CPU, 1 with --quick or --gpu)",
    )  # fmt: skip
    p.add_argument("--no-extras", action="store_true", help="skip the reset_done-cost rows")
    p.add_argument("--no-profile", action="store_true", help="skip the per-phase TDM profile")
    p.add_argument(
        "--learner", action="store_true",
        help="only the training-shaped pair (a minimal learner loop, TDM vs SMAX), 128 and 1024",
    )  # fmt: skip
    p.add_argument("--out", type=Path, help="JSON results (default benchmarks/results/<kind>.json)")
    p.add_argument("--doc", type=Path, default=ROOT / "docs" / "performance.md")
    p.add_argument("--no-doc", action="store_true", help="do not touch docs/performance.md")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def _settings(args: argparse.Namespace) -> tuple[list[int], int, int, int]:
    if args.num_envs:
        sizes = list(args.num_envs)
    elif args.learner:
        sizes = [32] if args.quick else list(LEARNER_NUM_ENVS)
    elif args.quick:
        sizes = [32, 128]
    else:
        sizes = list(GPU_NUM_ENVS if args.gpu else CPU_NUM_ENVS)
    ticks = args.ticks or (20 if args.quick else 500)
    repeats = args.repeats or (2 if args.quick else 5)
    processes = args.processes or (1 if args.quick or args.gpu else 3)
    if processes < 1:
        raise SystemExit(f"--processes: at least 1, got {processes}")
    return sizes, ticks, repeats, processes


def _spawn(figure: str, num_envs: int, ticks: int, repeats: int, gpu: bool) -> dict[str, Any]:
    """Run one figure in a fresh interpreter; its last stdout line is the JSON result."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", figure]
    cmd += ["--num-envs", str(num_envs), "--ticks", str(ticks), "--repeats", str(repeats)]
    env = dict(os.environ)
    if not gpu:
        env["JAX_PLATFORMS"] = "cpu"
    else:
        env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # so peak memory means something
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise RuntimeError(f"worker {figure} at num_envs={num_envs} failed ({done.returncode})")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if gpu and result.get("backend") != "gpu":
        raise RuntimeError(f"--gpu: worker {figure} ran on {result.get('backend')}, not on a GPU")
    return result


def _worker(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(HERE))
    if args.worker == "profile":
        import bench_profile

        result = bench_profile.profile(args.num_envs[0], args.repeats or 5)
    else:
        import bench_figures

        result = bench_figures.measure(args.worker, args.num_envs[0], args.ticks, args.repeats)
    print(json.dumps(result))


def _load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    if args.worker:
        _worker(args)
        return 0
    sys.path.insert(0, str(HERE))
    import bench_report

    sizes, ticks, repeats, processes = _settings(args)
    kind = ("gpu" if args.gpu else "cpu") + ("-learner" if args.learner else "")
    if args.quick and not args.out:
        args.no_doc = True  # a smoke test never overwrites the recorded figures
    out = args.out or HERE / "results" / f"{kind}{'-quick' if args.quick else ''}.json"
    command = " ".join(["python", "benchmarks/engine_throughput.py", *(argv or sys.argv[1:])])
    if not args.gpu:
        command = "JAX_PLATFORMS=cpu " + command
    meta = bench_report.machine(kind, command, _load())
    rows: list[dict[str, Any]] = []
    pairs = LEARNER_FIGURES if args.learner else ("tdm", PEER)
    for n in sizes:
        # On a small CPU one compile of the same program may run ~1.7x slower than another for
        # its whole life (the threads' placement; both simulators show it): several fresh
        # processes, alternating, and each figure's best of them.
        runs: dict[str, list[dict[str, Any]]] = {figure: [] for figure in pairs}
        for _ in range(processes):
            for figure in pairs:
                row = _spawn(figure, n, ticks, repeats, args.gpu)
                row["load_after"] = _load()
                print(bench_report.row_line(row), flush=True)
                runs[figure].append(row)
        for figure in pairs:
            best = max(runs[figure], key=lambda r: r["game_steps_per_s"])
            rows.append(best | {"processes": [r["game_steps_per_s"] for r in runs[figure]]})
    if not args.no_extras and not args.learner:
        for figure in EXTRA_FIGURES:
            row = _spawn(figure, sizes[-1], ticks, repeats, args.gpu)
            row["load_after"] = _load()
            print(bench_report.row_line(row), flush=True)
            rows.append(row)
    profile = None
    if not args.no_profile and not args.learner:
        profile = _spawn("profile", sizes[-1], ticks, repeats, args.gpu)
    meta["load_after"] = _load()
    result = {"meta": meta, "rows": rows, "profile": profile}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(bench_report.markdown(result))
    print(f"wrote {out}")
    if not args.no_doc:
        bench_report.write_doc(args.doc, kind, bench_report.markdown(result))
        print(f"updated {args.doc} ({kind} section)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
