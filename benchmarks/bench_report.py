"""Tables for the terminal, JSON metadata and the generated sections of docs/performance.md."""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGES = ("jax", "jaxlib", "jaxmarl", "marl-bgs-engine", "jax-cuda12-plugin", "jax-cuda13-plugin")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _gpu_model() -> str | None:
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"],
            capture_output=True, text=True, check=False, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip().replace("\n", "; ") or None


def _versions() -> dict[str, str]:
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def _commit() -> str | None:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or None


def machine(kind: str, command: str, load_before: str) -> dict[str, Any]:
    """What the figures were measured on, and how."""
    meta: dict[str, Any] = {
        "kind": kind,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "versions": _versions(),
        "commit": _commit(),
        "command": command,
        "load_before": load_before,
    }
    if kind.startswith("gpu"):
        meta["gpu"] = _gpu_model()
    return meta


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def row_line(row: dict[str, Any]) -> str:
    """One progress line per finished figure."""
    return (
        f"{row['figure']:>13} n={row['num_envs']:>5}  {_fmt(row['game_steps_per_s']):>10} game"
        f" steps/s  {_fmt(row['agent_steps_per_s']):>11} agent steps/s  compile"
        f" {row['compile_s']:.1f} s  load {row['load_after']}"
    )


def _mib(row: dict[str, Any]) -> str:
    mem = row.get("memory") or {}
    peak = mem.get("peak_bytes_in_use")
    return f"{peak / 2**20:,.0f}" if peak is not None else "-"


def _curve(rows: list[dict[str, Any]], gpu: bool) -> list[str]:
    by = {(r["figure"], r["num_envs"]): r for r in rows}
    sizes = sorted({r["num_envs"] for r in rows if r["figure"] == "tdm"})
    head = (
        "| num_envs | TDM game steps/s | TDM agent steps/s | TDM compile s | SMAX game steps/s"
        " | SMAX agent steps/s | SMAX compile s | **TDM/SMAX** | load after TDM, SMAX |"
    )
    if gpu:
        head += " TDM, SMAX peak MiB |"
    several = any(len(r.get("processes", [])) > 1 for r in rows)
    if several:
        head += " every process, TDM; SMAX (K game steps/s) |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for n in sizes:
        t, s = by.get(("tdm", n)), by.get(("smax", n))
        if t is None or s is None:
            continue
        ratio = t["game_steps_per_s"] / s["game_steps_per_s"]
        line = (
            f"| {n} | {_fmt(t['game_steps_per_s'])} | {_fmt(t['agent_steps_per_s'])}"
            f" | {t['compile_s']:.1f} | {_fmt(s['game_steps_per_s'])}"
            f" | {_fmt(s['agent_steps_per_s'])} | {s['compile_s']:.1f} | **{ratio:.2f}**"
            f" | {t['load_after']}; {s['load_after']} |"
        )
        if gpu:
            line += f" {_mib(t)}, {_mib(s)} |"
        if several:
            each = ["/".join(f"{v / 1000:.1f}" for v in r.get("processes", [])) for r in (t, s)]
            line += f" {each[0]}; {each[1]} |"
        lines.append(line)
    return lines


def _extras(rows: list[dict[str, Any]]) -> list[str]:
    by = {(r["figure"], r["num_envs"]): r for r in rows}
    extra = [r for r in rows if r["figure"] not in ("tdm", "smax")]
    if not extra:
        return []
    lines = [
        "",
        "| figure | num_envs | game steps/s | compile s | TDM (reset_done every tick) / this |",
        "|---|---|---|---|---|",
    ]
    for r in extra:
        base = by.get(("tdm", r["num_envs"]))
        rel = f"{base['game_steps_per_s'] / r['game_steps_per_s']:.2f}" if base else "-"
        lines.append(
            f"| {r['figure']} | {r['num_envs']} | {_fmt(r['game_steps_per_s'])}"
            f" | {r['compile_s']:.1f} | {rel} |"
        )
    lines.append(
        "| metric levels | - | measured through evaluation: `nox -s bench-metrics`"
        " (docs/performance.md, Metric levels) | | |"
    )
    return lines


def _profile(prof: dict[str, Any] | None) -> list[str]:
    if not prof:
        return []
    step_ms = prof["step_ms"]
    lines = [
        "",
        f"### Where one TDM tick spends its time ({prof['num_envs']} games, {prof['backend']})",
        "",
        "Each phase is jitted and vmapped on its own over a mid-game batch (after"
        f" {prof['warmup_ticks']} random ticks) and timed as the median of {prof['repeats']} calls;"
        " XLA fuses across phase boundaries inside the full step, so shares are approximate.",
        "",
        "| phase | ms per call | share of full tick | GFLOP per call (XLA cost analysis) |",
        "|---|---|---|---|",
    ]
    for p in prof["phases"]:
        flops = p.get("flops")
        gf = f"{flops / 1e9:.3f}" if flops is not None else "-"
        lines.append(f"| {p['name']} | {p['ms']:.2f} | {p['ms'] / step_ms:.0%} | {gf} |")
    lines.append(f"| **full tick** (sample + step + reset_done) | {step_ms:.2f} | 100% | |")
    for note in prof.get("notes", []):
        lines += ["", note]
    return lines


def _largest(largest: dict[str, Any] | None) -> list[str]:
    if not largest:
        return []
    if largest["num_envs"] is None:
        why = (
            f"{largest['failed_at']} games did not fit"
            if largest["failed_at"]
            else f"doubling the curve's last size passes the probe's limit, {largest['limit']}"
        )
        return ["", f"Largest TDM batch: none ran past the curve ({why})."]
    per_game = largest.get("bytes_per_game")
    memory = (
        f", {largest['peak_bytes'] / 2**30:.2f} GiB of device memory at its peak,"
        f" **{per_game:,.0f} bytes per game**"
        if per_game is not None
        else " (this device reports no memory figures)"
    )
    stop = (
        f"; {largest['failed_at']} games ran out of memory"
        if largest.get("failed_at")
        else f"; the probe stops at {largest['limit']} games"
    )
    return [
        "",
        f"Largest TDM batch that ran (doubling past the curve): **{largest['num_envs']} games**,"
        f" {_fmt(largest['game_steps_per_s'])} game steps/s{memory}{stop}.",
    ]


def markdown(result: dict[str, Any]) -> str:
    """The generated section for one kind (cpu or gpu) of run."""
    meta = result["meta"]
    rows = result["rows"]
    if meta["kind"].endswith("-learner"):
        return learner_markdown(result)
    gpu = meta["kind"] == "gpu"
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    device = f"{meta.get('gpu')} (host CPU {meta['cpu']})" if gpu else meta["cpu"]
    ticks = rows[0]["ticks"] if rows else "-"
    repeats = rows[0]["repeats"] if rows else "-"
    processes = len(rows[0].get("processes", [0])) if rows else 1
    fresh = (
        "one fresh process per figure; TDM then SMAX at each size"
        if processes == 1
        else f"{processes} fresh processes per figure and size, TDM and SMAX alternating, each"
        " figure the best of its processes (one compile of the same program can run ~1.7x slower"
        " than another for its whole life on this CPU, in both simulators; every process is"
        " listed)"
    )
    lines = [
        f"## {'GPU' if gpu else 'CPU'}: TDM (map 47) vs SMAX (smacv2_5_units), side by side",
        "",
        f"- machine: {device}, {meta['cores']} cores; Python {meta['python']}; {versions};"
        f" commit {meta['commit']}; {meta['date']}",
        f"- load average (1, 5, 15 min): before {meta['load_before']}, after {meta['load_after']}",
        f"- command: `{meta['command']}`",
        f"- protocol: random legal actions, {ticks}-tick `lax.scan` rollouts under one `jit`,"
        " finished games restarted every tick (TDM: `env.reset_done`; SMAX: JaxMARL's auto-reset"
        f" in `step`); compile timed apart; median of {repeats} timed calls; {fresh}."
        " Game steps/s = num_envs x ticks / s; agent steps/s"
        " = x10. **The ratio is the figure; absolute numbers move with the machine and its load.**",
        "",
        *_curve(rows, gpu),
        *_extras(rows),
        *_largest(result.get("largest")),
        *_profile(result.get("profile")),
    ]
    return "\n".join(lines) + "\n"


def learner_markdown(result: dict[str, Any]) -> str:
    """The training-shaped section: the minimal learner loop on TDM and SMAX per size."""
    meta, rows = result["meta"], result["rows"]
    by = {(r["figure"], r["num_envs"]): r for r in rows}
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    device = meta.get("gpu") or meta["cpu"]
    lines = [
        "## Training-shaped: a minimal learner loop on TDM and on SMAX, side by side",
        "",
        f"- machine: {device}, {meta['cores']} cores; Python {meta['python']}; {versions};"
        f" commit {meta['commit']}; {meta['date']}",
        f"- load average (1, 5, 15 min): before {meta['load_before']}, after {meta['load_after']}",
        f"- command: `{meta['command']}`",
        "- protocol (`benchmarks/bench_learner.py`): one MLP policy (64, 64) shared by the ten"
        " agents, masked sampling over the flat actions, 32-tick rollouts with finished games"
        " restarted, one Adam step of a REINFORCE loss over each stored rollout; game steps of the"
        " rollouts per second of the whole loop, gradient included. Compile timed apart; median"
        f" of {rows[0]['repeats'] if rows else '-'} calls; fresh process per figure.",
        "",
        "| num_envs | TDM game steps/s | TDM compile s | SMAX game steps/s | SMAX compile s"
        " | **TDM/SMAX** |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sorted({r["num_envs"] for r in rows}):
        t, s = by.get(("tdm-learn", n)), by.get(("smax-learn", n))
        if t is None or s is None:
            continue
        ratio = t["game_steps_per_s"] / s["game_steps_per_s"]
        lines.append(
            f"| {n} | {_fmt(t['game_steps_per_s'])} | {t['compile_s']:.1f}"
            f" | {_fmt(s['game_steps_per_s'])} | {s['compile_s']:.1f} | **{ratio:.2f}** |"
        )
    return "\n".join(lines) + "\n"


def _markers(kind: str) -> tuple[str, str]:
    return (
        f"<!-- BEGIN GENERATED {kind} by benchmarks/engine_throughput.py; do not edit by hand -->",
        f"<!-- END GENERATED {kind} -->",
    )


def write_doc(path: Path, kind: str, section: str) -> None:
    """Replace (or append) this kind's generated section, keeping everything else in the file."""
    text = path.read_text() if path.exists() else "# Performance\n"
    begin, end = _markers(kind)
    block = f"{begin}\n{section}{end}\n"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end) + r"\n?", re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip("\n") + "\n\n" + block
    path.write_text(text)
