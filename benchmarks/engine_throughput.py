"""Engine throughput, measured side by side: MARL-BattleGrounds TDM against JaxMARL's SMAX.

    JAX_PLATFORMS=cpu python benchmarks/engine_throughput.py            # the CPU curve
    python benchmarks/engine_throughput.py --quick                      # smoke test, seconds
    python benchmarks/engine_throughput.py --gpu                        # the GPU curve, 1024-65536

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
GPU_NUM_ENVS = (1024, 2048, 4096, 8192, 16384, 32768, 65536)  # the GPU goal's range
PEER = "smax"
BESIDE_ON_GPU = "two-bridge"  # measured at every size of the GPU curve, beside TDM and SMAX
LARGEST_CAP = 1 << 22  # the probe for the largest batch that fits stops doubling here
# Rows beyond the TDM/SMAX curve, each at the largest num_envs of the run. Metric levels live in
# marl-bgs-eval and are measured through evaluation by benchmarks/metrics_cost.py.
EXTRA_FIGURES = ("tdm-no-reset", "tdm-unobserved", "tdm-scripted", "two-bridge")
LEARNER_FIGURES = ("tdm-learn", "smax-learn")  # --learner: the training-shaped pair
LEARNER_NUM_ENVS = (128, 1024)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="smoke test: 2 sizes, 20 ticks, 2 calls")
    p.add_argument(
        "--gpu", action="store_true",
        help="GPU curve from 1024 to 65536 games (Two-Bridge beside), GPU memory, and --largest",
    )  # fmt: skip
    p.add_argument(
        "--largest", action="store_true",
        help="after the curve, double TDM's batch until a worker runs out of memory: the largest"
        " batch that ran and its peak bytes per game (on with --gpu)",
    )  # fmt: skip
    p.add_argument(
        "--largest-limit", type=int, default=LARGEST_CAP,
        help=f"stop doubling past this many games (default {LARGEST_CAP})",
    )  # fmt: skip
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
    p.add_argument(
        "--resume", action="store_true",
        help="keep what --out already holds (saved after every size and stage) and measure the"
        " rest: a run cut off by a time limit goes on where it stopped",
    )  # fmt: skip
    p.add_argument(
        "--report", type=Path,
        help="write the section of --doc from a saved results file (e.g. one a GPU machine made)",
    )  # fmt: skip
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


_OUT_OF_MEMORY = ("RESOURCE_EXHAUSTED", "Out of memory", "out of memory", "MemoryError")


class OutOfMemoryError(RuntimeError):
    """A worker ran out of (device or host) memory."""


def _spawn(figure: str, num_envs: int, ticks: int, repeats: int, gpu: bool) -> dict[str, Any]:
    """Run one figure in a fresh interpreter; its last stdout line is the JSON result (an
    `OutOfMemoryError` where the worker died for want of memory)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", figure]
    cmd += ["--num-envs", str(num_envs), "--ticks", str(ticks), "--repeats", str(repeats)]
    env = dict(os.environ)
    if not gpu:
        env["JAX_PLATFORMS"] = "cpu"
    else:
        env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # so peak memory means something
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        failure = f"worker {figure} at num_envs={num_envs} failed ({done.returncode})"
        if any(mark in done.stderr for mark in _OUT_OF_MEMORY) or done.returncode == -9:
            raise OutOfMemoryError(failure)
        sys.stderr.write(done.stderr)
        raise RuntimeError(failure)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if gpu and result.get("backend") != "gpu":
        raise RuntimeError(f"--gpu: worker {figure} ran on {result.get('backend')}, not on a GPU")
    return result


def _read_results(path: Path) -> dict[str, Any]:
    """A results file this script wrote (for --report and --resume), or a SystemExit naming what
    is wrong with it."""
    try:
        result = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise SystemExit(f"{path}: not a readable JSON results file ({error})") from None
    kinds = ("cpu", "gpu", "cpu-learner", "gpu-learner")
    if not isinstance(result, dict) or not isinstance(result.get("meta"), dict):
        raise SystemExit(f"{path}: meta: expected an object (a results file of this script)")
    if result["meta"].get("kind") not in kinds:
        raise SystemExit(
            f"{path}: meta.kind: expected one of {kinds}, got {result['meta'].get('kind')!r}"
        )
    rows = result.get("rows")
    fields = ("figure", "num_envs", "game_steps_per_s")
    if not isinstance(rows, list) or not all(
        isinstance(r, dict) and all(f in r for f in fields) for r in rows
    ):
        raise SystemExit(f"{path}: rows: expected a list of measured figures, each with {fields}")
    return result


def _largest_line(row: dict[str, Any]) -> str:
    """The progress line of one step of the largest-batch probe."""
    peak = (row.get("memory") or {}).get("peak_bytes_in_use")
    mib = f"{peak / 2**20:,.0f} MiB peak" if peak is not None else "no device memory figure"
    steps = f"{row['game_steps_per_s']:,.0f} game steps/s"
    return f"  largest: {row['num_envs']} games ran, {steps}, {mib}"


def _largest(start: int, limit: int, ticks: int, gpu: bool) -> dict[str, Any]:
    """Double TDM's batch from `start` until a worker runs out of memory or `limit` is passed:
    the largest batch that ran, with its peak device bytes per game where the device reports
    them, and the batch that did not fit (None if `limit` came first)."""
    ran: dict[str, Any] | None = None
    n = start
    while n <= limit:
        try:
            row = _spawn("tdm", n, ticks, 1, gpu)
        except OutOfMemoryError as failure:
            print(f"  largest: {n} games did not fit ({failure})", flush=True)
            break
        ran = row
        print(_largest_line(row), flush=True)
        n *= 2
    failed_at = n if n <= limit else None
    if ran is None:
        return {"num_envs": None, "failed_at": failed_at, "limit": limit}
    peak = (ran.get("memory") or {}).get("peak_bytes_in_use")
    return {
        "num_envs": ran["num_envs"],
        "game_steps_per_s": ran["game_steps_per_s"],
        "peak_bytes": peak,
        "bytes_per_game": peak / ran["num_envs"] if peak is not None else None,
        "failed_at": failed_at,
        "limit": limit,
    }


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

    if args.report:
        result = _read_results(args.report)
        bench_report.write_doc(args.doc, result["meta"]["kind"], bench_report.markdown(result))
        print(f"updated {args.doc} ({result['meta']['kind']} section) from {args.report}")
        return 0
    sizes, ticks, repeats, processes = _settings(args)
    kind = ("gpu" if args.gpu else "cpu") + ("-learner" if args.learner else "")
    if args.quick and not args.out:
        args.no_doc = True  # a smoke test never overwrites the recorded figures
    out = args.out or HERE / "results" / f"{kind}{'-quick' if args.quick else ''}.json"
    command = " ".join(["python", "benchmarks/engine_throughput.py", *(argv or sys.argv[1:])])
    if not args.gpu:
        command = "JAX_PLATFORMS=cpu " + command
    meta = bench_report.machine(kind, command, _load())
    saved = _read_results(out) if args.resume and out.exists() else {}
    result: dict[str, Any] = {"meta": meta, "rows": [], "profile": None, "largest": None}
    result |= {k: saved[k] for k in ("rows", "profile", "largest") if saved.get(k) is not None}
    rows: list[dict[str, Any]] = result["rows"]
    measured = {(r["figure"], r["num_envs"]) for r in rows}
    out.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        meta["load_after"] = _load()
        out.write_text(json.dumps(result, indent=1) + "\n")

    pairs = LEARNER_FIGURES if args.learner else ("tdm", PEER)
    if args.gpu and not args.learner:
        pairs = (*pairs, BESIDE_ON_GPU)
    for n in sizes:
        todo = [figure for figure in pairs if (figure, n) not in measured]
        # On a small CPU one compile of the same program may run ~1.7x slower than another for
        # its whole life (the threads' placement; both simulators show it): several fresh
        # processes, alternating, and each figure's best of them.
        runs: dict[str, list[dict[str, Any]]] = {figure: [] for figure in todo}
        for _ in range(processes if todo else 0):
            for figure in todo:
                row = _spawn(figure, n, ticks, repeats, args.gpu)
                row["load_after"] = _load()
                print(bench_report.row_line(row), flush=True)
                runs[figure].append(row)
        for figure in todo:
            best = max(runs[figure], key=lambda r: r["game_steps_per_s"])
            rows.append(best | {"processes": [r["game_steps_per_s"] for r in runs[figure]]})
        save()
    if not args.no_extras and not args.learner:
        for figure in EXTRA_FIGURES:
            if figure in pairs or (figure, sizes[-1]) in measured:
                continue
            row = _spawn(figure, sizes[-1], ticks, repeats, args.gpu)
            row["load_after"] = _load()
            print(bench_report.row_line(row), flush=True)
            rows.append(row)
            save()
    if (args.largest or args.gpu) and not args.learner and result["largest"] is None:
        ticks_largest = max(ticks // 10, 10)
        result["largest"] = _largest(sizes[-1] * 2, args.largest_limit, ticks_largest, args.gpu)
        save()
    if not args.no_profile and not args.learner and result["profile"] is None:
        result["profile"] = _spawn("profile", sizes[-1], ticks, repeats, args.gpu)
    save()
    print(bench_report.markdown(result))
    print(f"wrote {out}")
    if not args.no_doc:
        bench_report.write_doc(args.doc, kind, bench_report.markdown(result))
        print(f"updated {args.doc} ({kind} section)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
