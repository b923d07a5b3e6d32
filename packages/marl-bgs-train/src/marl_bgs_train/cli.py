"""The `marl-bgs-train` command line: one command per baseline, `resume`, `presets`.

marl-bgs-train ippo-rnn --steps 2e6 --envs 64 --out runs/ippo --set gamma=0.99
marl-bgs-train resume runs/ippo
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from marl_bgs import ConfigError, Policy
from marl_bgs_eval import EvalError, get_system
from marl_bgs_train import checkpoints
from marl_bgs_train.config import PRESETS, apply_overrides, to_dict, validate
from marl_bgs_train.runs import CURVE, train_run

FROZEN_FILE = "frozen.json"  # the frozen pool's System names, for `resume`
app = typer.Typer(help="Train MARL-BattleGrounds baselines.", no_args_is_help=True)
console = Console(width=120)


def _fail(err: Exception) -> None:
    console.print(f"[red]error:[/red] {err}", highlight=False)
    raise typer.Exit(code=2)


def _train_command(preset: str) -> None:
    def command(
        steps: Annotated[float | None, typer.Option(help="Game steps to train (e.g. 2e6)")] = None,
        envs: Annotated[int | None, typer.Option(help="Games per update")] = None,
        rollout: Annotated[int | None, typer.Option(help="Ticks per game per update")] = None,
        seed: Annotated[int, typer.Option(help="Root seed of the run")] = 0,
        out: Annotated[Path | None, typer.Option(help="Run folder (default runs/PRESET)")] = None,
        override: Annotated[
            list[str] | None,
            typer.Option("--set", help="section.field=value, e.g. opponents.current=0.5"),
        ] = None,
        frozen: Annotated[
            list[str] | None,
            typer.Option(help="A System name for the frozen opponent pool (repeatable)"),
        ] = None,
        save_every: Annotated[int, typer.Option(help="Updates between checkpoints")] = 50,
        quiet: Annotated[bool, typer.Option(help="No progress bar")] = False,
    ) -> None:
        config = PRESETS[preset]
        sizes = {"total_steps": steps, "num_envs": envs, "rollout": rollout}
        try:
            config = dataclasses.replace(
                config, **{k: int(v) for k, v in sizes.items() if v is not None}
            )
            config = validate(apply_overrides(config, override or []))
            pool = [frozen_policy(name) for name in frozen or []]
        except (ConfigError, EvalError) as err:
            _fail(err)
        run_dir = out or Path("runs") / preset
        console.print(f"{preset}: {config.num_updates} updates of {config.steps_per_update:,} "
                      f"game steps into {run_dir}")  # fmt: skip
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / FROZEN_FILE).write_text(json.dumps(frozen or []) + "\n")
        train_run(config, run_dir, seed=seed, frozen=pool, save_every=save_every,
                  progress=not quiet)  # fmt: skip
        console.print(f"done: {run_dir / 'log.csv'}, {run_dir / CURVE}, {run_dir / 'checkpoints'}")

    command.__doc__ = f"Train {preset} (defaults: paper Tables S9-S10; see `presets`)."
    app.command(preset)(command)


def frozen_policy(name: str) -> Policy:
    """A System by name as a frozen opponent (it must run in JAX, not on the host)."""
    system = get_system(name)
    if system.host:
        raise EvalError(f"--frozen: {name!r} runs on the host; the frozen pool needs JAX Systems")
    return Policy(name=system.name, act=system.act, init=system.init)


for _name in PRESETS:
    _train_command(_name)


@app.command()
def resume(
    run_dir: Path,
    seed: Annotated[int, typer.Option(help="Only shapes the restore target")] = 0,
    save_every: Annotated[int, typer.Option(help="Updates between checkpoints")] = 50,
    quiet: Annotated[bool, typer.Option(help="No progress bar")] = False,
) -> None:
    """Continue a run from its newest checkpoint (it repeats the uninterrupted run exactly)."""
    try:
        config = checkpoints.load_config(run_dir)
        names = (
            json.loads((run_dir / FROZEN_FILE).read_text())
            if (run_dir / FROZEN_FILE).exists()
            else []
        )
        pool = [frozen_policy(str(name)) for name in names]
        train_run(config, run_dir, seed=seed, resume=True, frozen=pool, save_every=save_every,
                  progress=not quiet)  # fmt: skip
    except (ConfigError, EvalError, ValueError) as err:
        _fail(err)


@app.command()
def presets() -> None:
    """The baselines and their settings."""
    table = Table("setting", *PRESETS)
    flat = {name: to_dict(c) for name, c in PRESETS.items()}
    for key in flat["ippo-rnn"]:
        values = [flat[name][key] for name in PRESETS]
        if key == "maps":
            values = [f"{v[0]}-{v[-1]} ({len(v)})" for v in values]
        table.add_row(key, *(str(v) for v in values))
    console.print(table)


if __name__ == "__main__":
    app()
