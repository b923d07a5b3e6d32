"""The `marl-bgs-eval` command line: play two Systems, rate results files, show the leaderboard."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer
from rich.console import Console
from rich.table import Table

from marl_bgs import ConfigError
from marl_bgs_eval import registry
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.evaluate import evaluate
from marl_bgs_eval.ratings import rate as rate_games
from marl_bgs_eval.results import load, save

app = typer.Typer(help="Evaluate MARL-BattleGrounds Systems and rate them.", no_args_is_help=True)
console = Console(width=120)
Plugins = Annotated[
    list[str] | None, typer.Option("--plugin", help="Module that registers Systems")
]


def _fail(err: Exception) -> None:
    console.print(f"[red]error:[/red] {err}", highlight=False, markup=True)
    raise typer.Exit(code=2)


def _plugins(modules: list[str] | None) -> None:
    for name in modules or []:
        try:
            importlib.import_module(name)
        except ImportError as err:
            _fail(EvalError(f"--plugin: cannot import {name!r}: {err}"))


def _maps(text: str) -> str | list[int]:
    if text in ("curriculum", "train", "validation", "test"):
        return text
    try:
        return [int(m) for m in text.split(",") if m.strip()]
    except ValueError:
        _fail(EvalError(f"--maps: expected a split name or ids like 47,48; got {text!r}"))
        raise


def _table(df: Any, title: str) -> Table:
    table = Table(title=title)
    for col in df.columns:
        table.add_column(str(col), justify="right" if df[col].dtype.kind in "iuf" else "left")
    for row in df.itertuples(index=False):
        table.add_row(*(f"{v:.1f}" if isinstance(v, float) else str(v) for v in row))
    return table


@app.command()
def play(
    system_a: Annotated[str, typer.Argument(help="Team A's System name")],
    system_b: Annotated[str, typer.Argument(help="Team B's System name")],
    maps: Annotated[str, typer.Option(help="Split name or comma-separated map ids")] = "test",
    split: Annotated[str | None, typer.Option(help="Require maps from this split")] = None,
    games_per_map: Annotated[int, typer.Option(help="Games per map (even)")] = 40,
    seed: Annotated[int, typer.Option(help="Root seed")] = 0,
    batch_size: Annotated[int, typer.Option(help="Games played at once")] = 128,
    metrics: Annotated[str, typer.Option(help="none or priority")] = "priority",
    tick_limit: Annotated[int, typer.Option(help="Draw after this many ticks")] = 300,
    winning_score: Annotated[int, typer.Option(help="Points that win")] = 20,
    out: Annotated[Path | None, typer.Option(help="Save results (.parquet or .csv)")] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar")] = True,
    plugin: Plugins = None,
) -> None:
    """Play SYSTEM_A (team A) against SYSTEM_B and print the results per map."""
    _plugins(plugin)
    try:
        games = evaluate(
            system_a,
            system_b,
            maps=_maps(maps),
            split=split,
            games_per_map=games_per_map,
            seed=seed,
            batch_size=batch_size,
            metrics=metrics,
            tick_limit=tick_limit,
            winning_score=winning_score,
            progress=progress,
        )
        if out is not None:
            save(games, out)
    except (EvalError, ConfigError) as err:
        _fail(err)
        return
    summary = (
        games.assign(
            wins=games["result"] == "win",
            draws=games["result"] == "draw",
            losses=games["result"] == "loss",
        )
        .groupby("map")
        .agg(
            games=("game", "size"),
            wins=("wins", "sum"),
            draws=("draws", "sum"),
            losses=("losses", "sum"),
            points_a=("points_a", "mean"),
            points_b=("points_b", "mean"),
            ticks=("ticks", "mean"),
        )
        .reset_index()
    )
    console.print(_table(summary, f"{system_a} (A) vs {system_b} (B), seed {seed}"))
    if out is not None:
        console.print(f"saved {len(games)} games to {out}")


def _rated(files: list[Path], bootstrap: int, seed: int) -> pd.DataFrame:
    try:
        games = pd.concat([load(f) for f in files], ignore_index=True)
        return rate_games(games, bootstrap=bootstrap, seed=seed)
    except EvalError as err:
        _fail(err)
        raise


Files = Annotated[list[Path], typer.Argument(help="Results files (.parquet or .csv)")]
Boot = Annotated[int, typer.Option(help="Resampled refits for the 95% intervals")]


@app.command()
def rate(files: Files, bootstrap: Boot = 5000, seed: int = 0) -> None:
    """Fit Elo ratings (Bradley-Terry-Davidson) with 95% intervals to results files."""
    r = _rated(files, bootstrap, seed)
    cols = ["rank", "system", "elo", "elo_low", "elo_high", "games", "wins", "draws", "losses"]
    console.print(_table(r[cols], f"Elo (mean 1,200), draw nu = {r.attrs['nu']:.3f}"))


@app.command()
def leaderboard(files: Files, bootstrap: Boot = 5000, seed: int = 0) -> None:
    """The leaderboard: rank, tier and division, Elo with interval, win chance vs average."""
    r = _rated(files, bootstrap, seed)
    r = r.assign(win_chance=(100 * r["win_chance"]).round(1))
    cols = ["rank", "system", "tier", "elo", "elo_low", "elo_high", "win_chance", "games"]
    console.print(_table(r[cols], "Leaderboard"))


@app.command()
def systems(plugin: Plugins = None) -> None:
    """List the registered System names."""
    _plugins(plugin)
    for name in registry.names():
        console.print(name)


def main() -> None:  # pragma: no cover - the console script
    app()
