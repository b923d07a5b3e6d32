"""The `marl-bgs-train` command line: one command per baseline, `resume`, `validate`, `presets`.

marl-bgs-train ippo-rnn --steps 2e6 --envs 64 --out runs/ippo --set gamma=0.99 --validate
marl-bgs-train resume runs/ippo [--steps 6e6]
marl-bgs-train validate runs/ippo --panel tdm-alpha --panel ckpt:runs/other
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from marl_bgs_eval import console as ui

if TYPE_CHECKING:  # imported where a command runs, so --help needs no JAX
    from marl_bgs_train.config import C, ValidationSettings

# One command per baseline of `marl_bgs_train.config.PRESETS` (a test keeps the two equal): the
# names are written here so that the command list needs no JAX.
PRESET_NAMES = ("ippo-rnn", "ippo-ff", "mappo-rnn", "mappo-ff", "pqn-vdn", "qmix")

# ValueError too: a run folder's files (config, checkpoints) refuse bad content with it.
app = ui.App("marl-bgs-train", errors=(ValueError,), help="Train MARL-BattleGrounds baselines.",
             no_args_is_help=True)  # fmt: skip
console = ui.out


Panel = Annotated[
    list[str] | None,
    typer.Option(help="A validation opponent by System name (repeatable; default: the scripted "
                 "three)"),
]  # fmt: skip
ValidationGames = Annotated[int, typer.Option(help="Validation games per map and opponent")]


def _settings(panel: list[str] | None, games: int) -> ValidationSettings:
    """Validation settings from the command line (checked: even games, known Systems)."""
    from marl_bgs import ConfigError
    from marl_bgs_eval import get_system
    from marl_bgs_train.config import ValidationSettings, check_training_maps

    if games < 2 or games % 2:
        raise ConfigError(f"--validation-games: a positive even number, got {games}")
    for name in panel or []:
        get_system(name)
    defaults = ValidationSettings()
    check_training_maps(defaults.maps)
    return ValidationSettings(panel=tuple(panel) if panel else defaults.panel, games_per_map=games)


def _overrides(items: list[str] | None) -> list[str]:
    """`--set` items, a `maps=` value read with the map grammar (`maps=0-39`, `maps=train`)."""
    read = []
    for item in items or []:
        key, sep, value = item.partition("=")
        if sep and key.strip() == "maps":  # the baselines play Team Deathmatch
            item = "maps=" + ",".join(str(i) for i in ui.layouts(value, "tdm", "--set maps"))
        read.append(item)
    return read


def _train_command(preset: str) -> None:
    def command(
        steps: Annotated[float | None, typer.Option(help="Game steps to train (e.g. 2e6)")] = None,
        envs: Annotated[int | None, typer.Option(help="Games per update")] = None,
        rollout: Annotated[int | None, typer.Option(help="Ticks per game per update")] = None,
        seed: Annotated[int, typer.Option(help="Root seed of the run")] = 0,
        out: Annotated[Path | None, typer.Option(help="Run folder (default runs/PRESET)")] = None,
        override: Annotated[
            list[str] | None,
            typer.Option(
                "--set", help="section.field=value, e.g. opponents.current=0.5, maps=0-39"
            ),
        ] = None,
        frozen: Annotated[
            list[str] | None,
            typer.Option(help="A System name for the frozen opponent pool (repeatable)"),
        ] = None,
        teammate: Annotated[
            str | None,
            typer.Option(
                help="A System playing team A's teammate_slots (--set teammate_slots=0,1)"
            ),
        ] = None,
        save_every: Annotated[int, typer.Option(help="Updates between checkpoints")] = 50,
        validate_each: Annotated[
            bool,
            typer.Option("--validate", help="Validate each checkpoint; keep the best in RUN/best"),
        ] = False,
        panel: Panel = None,
        validation_games: ValidationGames = 4,
        curriculum: Annotated[
            str | None,
            typer.Option(help="'builtin' (maps 0-11, 1v1 -> 5v5) or a JSON file of stages"),
        ] = None,
        tensorboard: Annotated[
            bool, typer.Option(help="Also log for TensorBoard (RUN/tensorboard)")
        ] = False,
        quiet: Annotated[bool, typer.Option(help="No progress bar")] = False,
    ) -> None:
        from marl_bgs_train.config import PRESETS, apply_overrides, load_curriculum, validate
        from marl_bgs_train.players import named_policy, save_players
        from marl_bgs_train.runs import CURVE, train_run
        from marl_bgs_train.validation import BEST, VALIDATION_CSV, validate_run

        config = PRESETS[preset]
        sizes = {"total_steps": steps, "num_envs": envs, "rollout": rollout}
        config = dataclasses.replace(
            config, **{k: int(v) for k, v in sizes.items() if v is not None}
        )
        if curriculum is not None:
            config = dataclasses.replace(config, curriculum=load_curriculum(curriculum))
        config = validate(apply_overrides(config, _overrides(override)))
        pool = [named_policy(name, "--frozen") for name in frozen or []]
        mate = named_policy(teammate, "--teammate") if teammate else None
        settings = _settings(panel, validation_games)
        run_dir = out or Path("runs") / preset
        on_save = (lambda step: validate_run(run_dir, settings, [step])) if validate_each else None
        console.print(f"{preset}: {config.num_updates} updates of {config.steps_per_update:,} "
                      f"game steps into {run_dir}")  # fmt: skip
        run_dir.mkdir(parents=True, exist_ok=True)
        save_players(run_dir, frozen or [], teammate)
        train_run(config, run_dir, seed=seed, frozen=pool, teammate=mate, save_every=save_every,
                  progress=not quiet, on_save=on_save, tensorboard=tensorboard)  # fmt: skip
        console.print(f"done: {run_dir / 'log.csv'}, {run_dir / CURVE}, {run_dir / 'checkpoints'}")
        if validate_each:
            console.print(f"validation: {run_dir / VALIDATION_CSV}, best: {run_dir / BEST}")

    command.__doc__ = f"Train {preset} (defaults: paper Tables S9-S10; see `presets`)."
    app.command(preset)(command)


for _name in PRESET_NAMES:
    _train_command(_name)


@app.command()
def resume(
    run_dir: Path,
    seed: Annotated[int, typer.Option(help="Only shapes the restore target")] = 0,
    save_every: Annotated[int, typer.Option(help="Updates between checkpoints")] = 50,
    steps: Annotated[
        float | None, typer.Option(help="A new, larger total of game steps: train longer")
    ] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar")] = False,
    tensorboard: Annotated[bool, typer.Option(help="Two-Bridge: also log for TensorBoard")] = False,
) -> None:
    """Continue a run (Team Deathmatch or Two-Bridge) from its newest saved state (it repeats the
    uninterrupted run exactly); with `--steps`, to a new total (the same as a run started with
    that total)."""
    from marl_bgs_train import checkpoints
    from marl_bgs_train.players import load_players
    from marl_bgs_train.runs import train_run
    from marl_bgs_train.two_bridge import run as bridge_run

    if bridge_run.is_run(run_dir):
        total = None if steps is None else _whole_steps(steps)
        bridge_run.resume(run_dir, total, progress=not quiet, tensorboard=tensorboard)
        return
    config = checkpoints.load_config(run_dir)
    if steps is not None:
        config = _longer(config, steps)
        checkpoints.save_config(run_dir, config)
    pool, mate = load_players(run_dir)
    train_run(config, run_dir, seed=seed, resume=True, frozen=pool, teammate=mate,
              save_every=save_every, progress=not quiet)  # fmt: skip


def _longer(config: C, steps: float) -> C:
    """`config` with `total_steps` raised to `steps` (never lowered: ConfigError)."""
    from marl_bgs import ConfigError
    from marl_bgs_train.config import validate

    if not math.isfinite(steps) or int(steps) < config.total_steps:
        raise ConfigError(
            f"steps: {steps:g} is below the run's total of {config.total_steps:,} game steps; "
            "allowed: a larger total"
        )
    return validate(dataclasses.replace(config, total_steps=int(steps)))


@app.command(name="validate")
def validate_command(
    run_dir: Path, panel: Panel = None, validation_games: ValidationGames = 4
) -> None:
    """Score a run's saved checkpoints against the panel on the validation maps (42, 43, 44,
    46); keep the best in RUN_DIR/best (a System: ckpt:RUN_DIR/best)."""
    from marl_bgs_train.validation import BEST, VALIDATION_CSV, validate_run

    table = validate_run(run_dir, _settings(panel, validation_games))
    console.print(ui.table(table, floats=".2f"))
    console.print(f"best: {run_dir / BEST} ({run_dir / VALIDATION_CSV})")


@app.command(name="two-bridge")
def two_bridge(
    algo: Annotated[str, typer.Option(help="maskppo, mappo or qmix")] = "mappo",
    variant: Annotated[str, typer.Option(help="V1_Base ... V3_Navigate")] = "V2_Base",
    steps: Annotated[float, typer.Option(help="Environment steps")] = 10e6,
    seed: Annotated[list[int] | None, typer.Option(help="A seed (repeatable; default 0)")] = None,
    envs: Annotated[int, typer.Option(help="Games stepped together")] = 64,
    out: Annotated[Path, typer.Option(help="Runs go to OUT/<algo>-<variant>-s<seed>")] = Path(
        "runs/two-bridge"
    ),
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="name=value over the paper's settings")
    ] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar")] = False,
    tensorboard: Annotated[
        bool, typer.Option(help="Also log losses and outcome shares for TensorBoard")
    ] = False,
) -> None:
    """Train a Two-Bridge baseline as the paper does: checkpoints every 50K steps, each scored
    by 32 deterministic episodes (OUT/.../checkpoints.csv); prints the last outcome shares.
    `marl-bgs-train resume OUT/<run>` continues a run that was stopped."""
    import pandas as pd

    from marl_bgs import ConfigError
    from marl_bgs_train.config import apply_overrides
    from marl_bgs_train.two_bridge import config as bridge_config
    from marl_bgs_train.two_bridge import run as bridge_run

    base = bridge_config.paper_defaults(algo, variant=variant, total_steps=_whole_steps(steps),
                                        num_envs=envs)  # fmt: skip
    base = bridge_config.validate(apply_overrides(base, set_ or []))
    if base.algo != algo:  # the defaults came from --algo
        raise ConfigError(f"algo: choose it with --algo, not --set (got --algo {algo})")
    seeds = seed or [base.seed]  # --seed, else a seed given by --set, else 0
    rows = {}
    for s in seeds:
        config = bridge_config.validate(dataclasses.replace(base, seed=s))
        log = bridge_run.train(config, out / f"{algo}-{variant}-s{s}", progress=not quiet,
                               tensorboard=tensorboard)  # fmt: skip
        if len(log):
            rows[s] = log.iloc[-1]
    last = pd.DataFrame.from_dict(rows, orient="index").rename_axis("seed").reset_index()
    console.print(ui.table(last, floats=".3g"))


def _whole_steps(steps: float) -> int:
    from marl_bgs import ConfigError

    if not math.isfinite(steps) or steps != int(steps):
        raise ConfigError(f"steps: expected a whole number of environment steps, got {steps}")
    return int(steps)


@app.command()
def presets() -> None:
    """The baselines and their settings."""
    import pandas as pd

    from marl_bgs_train.config import PRESETS, to_dict

    flat = {name: to_dict(c) for name, c in PRESETS.items()}
    keys = list(dict.fromkeys(k for settings in flat.values() for k in settings))
    rows = []
    for key in keys:
        values = [flat[name].get(key, "-") for name in PRESETS]
        if key == "maps":
            values = [f"{v[0]}-{v[-1]} ({len(v)})" for v in values]
        rows.append([key, *(str(v) for v in values)])
    console.print(ui.table(pd.DataFrame(rows, columns=["setting", *PRESETS])))


if __name__ == "__main__":
    app()
