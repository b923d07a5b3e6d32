"""Evidence of learning: a trained run against Random, `rush` and the scripted teams on the
validation maps, with the share of games it was ahead on points.

    marl-bgs-train ippo-rnn --steps 2.2e6 --envs 64 --out runs/evidence --quiet
    python benchmarks/learning_evidence.py runs/evidence --games-per-map 10
    python benchmarks/learning_evidence.py runs/evidence --opponents random --maps 0 10 20 30 40

For each opponent: games on the maps (default the validation maps 42, 43, 44 and 46;
spawn-swapped pairs), the share of games the run was ahead on points at the end (won, or
leading when the tick limit ended the game), the mean point margin, mean kills and deaths, and
the official W-D-L; then the margin per map and opponent, which shows where a policy that wins
on average still fails. Prints markdown tables and writes the rows as JSON beside the run
(`evidence.json`, or `evidence-maps-...json` for other maps).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd

import marl_bgs_eval as ev

OPPONENTS = ("random", "rush", "tdm-alpha", "tdm-beta", "tdm-gamma")
VALIDATION_MAPS = [42, 43, 44, 46]


def summary(opponent: str, games: pd.DataFrame, seconds: float) -> dict:
    """One opponent's row: games, share ahead, mean margin, kills, deaths, W-D-L."""
    margin = games["points_a"] - games["points_b"]
    counts = games["result"].value_counts()
    return {
        "opponent": opponent,
        "games": len(games),
        "ahead_share": float((margin > 0).mean()),
        "mean_margin": float(margin.mean()),
        "kills": float(games["a_kills"].mean()),
        "deaths": float(games["a_deaths"].mean()),
        "wins": int(counts.get("win", 0)),
        "draws": int(counts.get("draw", 0)),
        "losses": int(counts.get("loss", 0)),
        "seconds": seconds,
        "margin_by_map": {str(k): float(v) for k, v in margin.groupby(games["map"]).mean().items()},
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("run", type=Path, help="a training run folder (its newest checkpoint plays)")
    p.add_argument("--games-per-map", type=int, default=10)
    p.add_argument("--opponents", nargs="+", default=list(OPPONENTS))
    p.add_argument("--maps", nargs="+", type=int, default=VALIDATION_MAPS)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    rows = []
    print("| opponent | games | ahead on points | mean margin | kills | deaths | W-D-L | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for opponent in args.opponents:
        started = time.perf_counter()
        games = ev.evaluate(
            f"ckpt:{args.run}", opponent, maps=args.maps,
            games_per_map=args.games_per_map, seed=args.seed, metrics="none", batch_size=40,
        )  # fmt: skip
        row = summary(opponent, games, time.perf_counter() - started)
        rows.append(row)
        print(f"| {opponent} | {row['games']} | {row['ahead_share']:.0%} | "
              f"{row['mean_margin']:+.1f} | {row['kills']:.1f} | {row['deaths']:.1f} | "
              f"{row['wins']}-{row['draws']}-{row['losses']} | {row['seconds']:.0f} |",
              flush=True)  # fmt: skip
    print("\nMean point margin per map:\n")
    print("| opponent | " + " | ".join(f"map {m}" for m in args.maps) + " |")
    print("|---|" + "---|" * len(args.maps))
    for row in rows:
        cells = " | ".join(f"{row['margin_by_map'][str(m)]:+.1f}" for m in args.maps)
        print(f"| {row['opponent']} | {cells} |")
    maps = "-".join(map(str, args.maps))
    name = "evidence.json" if args.maps == VALIDATION_MAPS else f"evidence-maps-{maps}.json"
    (args.run / name).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
