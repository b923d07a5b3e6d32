"""Which compiled kernels one TDM tick spends its time in, from a `jax.profiler` trace.

    JAX_PLATFORMS=cpu python benchmarks/bench_trace.py --num-envs 1024 --ticks 20 --top 30
    JAX_PLATFORMS=cpu python benchmarks/bench_trace.py --figure tdm-scripted   # scripted teams

Compiles a rollout of `bench_figures` (`--figure`; the default `tdm` is the paper's Listing S1
under one `jit`), runs it once to warm up, then once under `jax.profiler`, and prints the XLA
kernels (fusions) that took the most time per tick, each with the JAX operation it came from
(`jit(transition)/...`, `jit(_observe)/...`). `bench_profile.py` times the engine's phases one by
one; this shows what XLA actually runs inside the whole step, after fusion. The trace is kept
under `--out` and opens in Perfetto (ui.perfetto.dev) or TensorBoard.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import jax

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_figures  # noqa: E402


def _kernel_sources(hlo: str) -> dict[str, tuple[str, str]]:
    """{instruction name: (result shape, JAX op name)} from optimised HLO text."""
    out = {}
    for line in hlo.splitlines():
        m = re.match(r"\s*(?:ROOT )?%?([\w.\-]+) = (\S+) .*?metadata=\{([^}]*)\}", line)
        if m:
            op = re.search(r'op_name="([^"]*)"', m.group(3))
            out[m.group(1)] = (m.group(2), op.group(1) if op else "")
    return out


_CONTROL = re.compile(r"(while|conditional|call)(\.\d+)?$")  # spans around other kernels


class Traced(NamedTuple):
    """One call under `jax.profiler`: each compiled kernel's total microseconds (`total`), how
    many times kernels ran (`launches`), the kernels' sources (`_kernel_sources`), the trace."""

    total: collections.Counter[str]
    launches: int
    sources: dict[str, tuple[str, str]]
    path: Path


def traced_kernels(call: Callable[[], Any], hlo: str, out: Path) -> Traced:
    """Run `call` (a warmed-up compiled program; `hlo` its optimised HLO text) once under
    `jax.profiler` and read the trace back. Kernel events are matched by their `hlo_op`
    argument where the runtime gives one (GPU kernels, named otherwise); else by their names,
    never both (a GPU trace also has a line of events named after the ops). Control flow
    (`while`, `conditional`, `call`) is left out: its span holds its body's kernels."""
    jax.profiler.start_trace(str(out), create_perfetto_trace=True)
    jax.block_until_ready(call())
    jax.profiler.stop_trace()
    traces = sorted(out.glob("**/*.trace.json.gz"), key=lambda f: f.stat().st_mtime)
    if not traces:
        raise SystemExit(f"no trace written under {out}")
    events = json.loads(gzip.decompress(traces[-1].read_bytes()))["traceEvents"]
    sources = {k: v for k, v in _kernel_sources(hlo).items() if not _CONTROL.match(k)}
    spans = [e for e in events if e.get("ph") == "X"]
    by_op = [((e.get("args") or {}).get("hlo_op"), e.get("dur", 0)) for e in spans]
    matched = [(op, dur) for op, dur in by_op if op in sources]
    if not matched:
        matched = [(e.get("name"), e.get("dur", 0)) for e in spans if e.get("name") in sources]
    total: collections.Counter[str] = collections.Counter()
    for op, dur in matched:
        total[op] += dur
    return Traced(total, len(matched), sources, traces[-1])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--num-envs", type=int, default=1024)
    p.add_argument("--ticks", type=int, default=20)
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--figure", default="tdm", choices=sorted(bench_figures.FIGURES))
    p.add_argument("--out", type=Path, default=Path("/tmp/marl-bgs-trace"))
    p.add_argument(
        "--group", type=int, default=0,
        help="also total the kernels by the first N parts of their JAX operation (inside the tick)",
    )  # fmt: skip
    args = p.parse_args(argv)

    run = bench_figures.FIGURES[args.figure](args.num_envs, args.ticks)
    compiled = run.lower(jax.random.key(0)).compile()  # type: ignore[attr-defined]
    compiled(jax.random.key(0)).block_until_ready()
    traced = traced_kernels(lambda: compiled(jax.random.key(1)), compiled.as_text(), args.out)
    total, sources = traced.total, traced.sources
    tick_us = sum(total.values()) / args.ticks
    print(f"{args.num_envs} games, {args.ticks} ticks: kernels {tick_us / 1e3:.1f} ms per tick")
    print(f"{'ms/tick':>8} {'share':>6}  {'kernel':34} {'result':28} JAX operation")
    for name, us in total.most_common(args.top):
        shape, op = sources[name]
        share = us / args.ticks / tick_us
        print(f"{us / 1e3 / args.ticks:8.2f} {share:6.1%}  {name:34} {shape[:28]:28} {op[-90:]}")
    if args.group:
        _print_groups(total, sources, args.group, args.ticks, tick_us)
    print(f"trace: {traced.path}")


def _print_groups(
    total: collections.Counter[str], sources: dict[str, tuple[str, str]], depth: int, ticks: int,
    tick_us: float,
) -> None:  # fmt: skip
    """The kernels' time summed by the first `depth` parts of their JAX operation, the rollout's
    own scan and call wrappers left out."""
    groups: collections.Counter[str] = collections.Counter()
    for name, us in total.items():
        parts = [p for p in sources[name][1].split("/") if p not in _WRAPPERS]
        groups["/".join(parts[:depth]) or "(unnamed)"] += us
    print(f"\nby operation (first {depth} parts):")
    for group, us in groups.most_common():
        print(f"{us / 1e3 / ticks:8.2f} {us / ticks / tick_us:6.1%}  {group[-110:]}")


_WRAPPERS = {"jit(run)", "while", "body", "closed_call"}


if __name__ == "__main__":
    main()
