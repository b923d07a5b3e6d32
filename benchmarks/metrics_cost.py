"""What each metric level costs: seconds and bytes per game of `evaluate` at none, priority, full.

Random legal play on both sides on test map 47 (every game runs to the tick limit, so each level
plays exactly the same ticks), at each batch size. The levels run interleaved, `--repeats`
times each, after one untimed warm-up call that compiles the program; the median counts.
Bytes per game: the counters the device holds per scheduled game, the results row in pandas,
and the row in a saved Parquet file.

    python benchmarks/metrics_cost.py --batch 128 1024 --ticks 100 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import pandas as pd

import marl_bgs_eval as ev
from marl_bgs_eval.tdm import metrics as mt

LEVELS = ("none", "priority", "full")


def _play(level: str, batch: int, ticks: int, seed: int) -> tuple[float, pd.DataFrame]:
    start = time.perf_counter()
    games = ev.evaluate(
        ev.random_system(), ev.random_system(), maps=[47], games_per_map=batch, seed=seed,
        metrics=level, batch_size=batch, tick_limit=ticks,
    )  # fmt: skip
    return time.perf_counter() - start, games


def _parquet_bytes(games: pd.DataFrame) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        path = ev.save(games, Path(tmp) / "g.parquet")
        return path.stat().st_size


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, nargs="+", default=[128, 1024])
    p.add_argument("--ticks", type=int, default=100, help="tick limit (every game reaches it)")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    rows = []
    for batch in args.batch:
        seconds: dict[str, list[float]] = {level: [] for level in LEVELS}
        last: dict[str, pd.DataFrame] = {}
        for level in LEVELS:
            _play(level, batch, args.ticks, seed=0)  # compile
        for r in range(args.repeats):
            for level in LEVELS:
                s, last[level] = _play(level, batch, args.ticks, seed=r + 1)
                seconds[level].append(s)
        base = statistics.median(seconds["priority"])
        for level in LEVELS:
            g = last[level]
            sec = statistics.median(seconds[level])
            rows.append(
                {
                    "games at once": batch,
                    "level": level,
                    "columns": mt.width(level),
                    "ms per game": 1000 * sec / len(g),
                    "x priority": sec / base,
                    "game steps/s": int(g["ticks"].sum() / sec),
                    "device bytes per game": 4 * mt.width(level),
                    "pandas bytes per game": int(g.memory_usage(deep=True).sum() / len(g)),
                    "parquet bytes per game": int(_parquet_bytes(g) / len(g)),
                }
            )
    table = pd.DataFrame(rows)
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    load = f"load {os.getloadavg()[0]:.2f}"
    print(f"machine: {machine}, {load}; {args.ticks} ticks per game, median of {args.repeats}")
    print("| " + " | ".join(table.columns) + " |")
    print("|" + "---|" * len(table.columns))
    for row in table.itertuples(index=False):
        print(
            "| "
            + " | ".join(
                f"{v:,.2f}" if isinstance(v, float) else f"{v:,}" if isinstance(v, int) else str(v)
                for v in row
            )
            + " |"
        )


if __name__ == "__main__":
    main()
