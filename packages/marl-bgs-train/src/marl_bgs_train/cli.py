"""The `marl-bgs-train` command line: one command per baseline of any mode, `resume`, `validate`,
`suite`, `population`, `presets`, and the commands a mode adds (entry-point group
`marl_bgs_train.commands`).

marl-bgs-train ippo-rnn --steps 2e6 --envs 64 --out runs/ippo --set gamma=0.99 --validate
marl-bgs-train ippo-rnn --mode tdm --maps 0-11 --curriculum builtin
marl-bgs-train mappo --mode two-bridge --variant V1_Navigate --seeds 3 --validate
marl-bgs-train resume runs/ippo [--steps 6e6]
marl-bgs-train validate runs/ippo --panel tdm-alpha --panel ckpt:runs/other
marl-bgs-train population --budget cpu --out runs/population
"""

from __future__ import annotations

import dataclasses
import math
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from marl_bgs_eval import console as ui
from marl_bgs_train.cli_options import (
    Coordinator,
    Devices,
    Hours,
    Layouts,
    Mode,
    NumProcesses,
    Panel,
    ProcessId,
    Split,
    ValidationGames,
    batch_on_save,
    deadline_after,
    job_mesh,
    resumed_settings,
    said_if_stopped,
    validating_runs,
    validation_settings,
)

if TYPE_CHECKING:  # imported where a command runs, so --help needs no JAX
    from marl_bgs_train.config import C

# One command per baseline of `marl_bgs_train.config.LEARNERS` (a test keeps the two equal): the
# names are written here so that the command list needs no JAX.
PRESET_NAMES = (
    "ippo-rnn", "ippo-ff", "mappo-rnn", "mappo-ff", "pqn-vdn", "qmix", "maskppo", "mappo",
)  # fmt: skip
OUTCOMES_CSV = "outcomes.csv"  # a suite's final validation, per layout and learner
COMMANDS = "marl_bgs_train.commands"  # entry points: `register(app)` adds a mode's commands

# ValueError too: a run folder's files (config, checkpoints) refuse bad content with it.
app = ui.App("marl-bgs-train", errors=(ValueError,), help="Train MARL-BattleGrounds baselines.",
             no_args_is_help=True)  # fmt: skip
console = ui.out


def _overrides(items: list[str] | None, mode: str, layouts: str | None = None) -> list[str]:
    """`--set` items (after `--layouts` as the mode's layout setting), that setting read with
    the layout grammar (`game.maps=0-39`, `game.maps=train`, `game.variants=V1_Navigate`)."""
    from marl_bgs_train.modes import parts

    setting = f"game.{parts(mode).layout_setting}"
    given = [f"{setting}={layouts}"] if layouts is not None else []
    read = []
    for item in [*given, *(items or [])]:
        key, sep, value = item.partition("=")
        if sep and key.strip() == setting:
            chosen = ui.layouts(value, mode, f"--set {setting}")
            item = f"{setting}=" + ",".join(str(i) for i in chosen)
        read.append(item)
    return read


def _sweep(items: list[str] | None, mode: str) -> dict[str, list[str]]:
    """`--sweep setting=v1,v2` items as {setting: [values]} (a setting once); values split at
    `;` where the item has one (a value may then be a list: `game.maps=0-9;10-19`), else at `,`;
    the mode's layout setting read with the layout grammar (`_overrides`)."""
    from marl_bgs import ConfigError

    swept: dict[str, list[str]] = {}
    for item in items or []:
        key, sep, values = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--sweep {item!r}: expected setting=v1,v2,... or setting=v1;v2;...")
        if key in swept:
            raise ConfigError(f"--sweep {key!r}: given twice")
        split = [v.strip() for v in values.split(";" if ";" in values else ",")]
        if not values.strip():
            split = []  # `plan` names the setting that has no value
        elif not all(split):
            raise ConfigError(f"--sweep {key!r}: an empty value in {values!r}")
        swept[key] = [_overrides([f"{key}={v}"], mode)[0].partition("=")[2] for v in split]
    return swept


def _train_command(preset: str) -> None:
    def command(
        steps: Annotated[float | None, typer.Option(help="Game steps to train (e.g. 2e6)")] = None,
        envs: Annotated[int | None, typer.Option(help="Games per update")] = None,
        rollout: Annotated[int | None, typer.Option(help="Ticks per game per update")] = None,
        seed: Annotated[
            int, typer.Option(help="Root seed of the run (the first, with --seeds)")
        ] = 0,
        seeds: Annotated[
            int, typer.Option(help="Runs from seeds SEED, SEED+1, ...: one program, a folder each")
        ] = 1,
        sweep: Annotated[
            list[str] | None,
            typer.Option(
                help="setting=v1,v2,... (or v1;v2;... when a value is a list): a run per value "
                "(per seed); one program over learning rates, entropy_coef, clip, gae_lambda, "
                "td_lambda, game.reward shaping weights and same-size game.maps / game.variants, "
                "one program per value of any other setting"
            ),
        ] = None,
        mode: Mode = "tdm",
        layouts: Layouts = None,
        out: Annotated[Path | None, typer.Option(help="Run folder (default runs/PRESET)")] = None,
        override: Annotated[
            list[str] | None,
            typer.Option(
                "--set", help="section.field=value, e.g. opponents.current=0.5, game.maps=0-39"
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
        validation_games: ValidationGames = None,
        curriculum: Annotated[
            str | None,
            typer.Option(
                help="The mode's curriculum: 'builtin' (tdm: maps 0-11, 1v1 -> 5v5) or a JSON "
                "file of stages"
            ),
        ] = None,
        tensorboard: Annotated[
            bool, typer.Option(help="Also log for TensorBoard (RUN/tensorboard)")
        ] = False,
        quiet: Annotated[bool, typer.Option(help="No progress bar")] = False,
        devices: Devices = None,
        split: Split = "games",
        coordinator: Coordinator = None,
        num_processes: NumProcesses = None,
        process_id: ProcessId = None,
        hours: Hours = None,
    ) -> None:
        deadline = deadline_after(hours)
        mesh = job_mesh(devices, coordinator, num_processes, process_id)  # before other JAX work
        from marl_bgs import ConfigError
        from marl_bgs_train.batch import CURVES, plan, train_batch
        from marl_bgs_train.config import apply_overrides, preset_of, validate
        from marl_bgs_train.modes import parts
        from marl_bgs_train.players import named_policy, save_players
        from marl_bgs_train.runs import CURVE, train_run
        from marl_bgs_train.validation import BEST, VALIDATION_CSV

        config = preset_of(mode, preset)
        sizes = {"total_steps": steps, "num_envs": envs, "rollout": rollout}
        config = dataclasses.replace(
            config, **{k: int(v) for k, v in sizes.items() if v is not None}
        )
        if curriculum is not None:
            config = parts(mode).with_curriculum(config, curriculum)
        config = validate(apply_overrides(config, _overrides(override, mode, layouts)))
        pool = [named_policy(name, "--frozen") for name in frozen or []]
        mate = named_policy(teammate, "--teammate") if teammate else None
        settings = validation_settings(panel, validation_games, mode)
        chosen = settings if validate_each else None  # recorded; None: not validated
        run_dir = out or Path("runs") / preset
        if seeds < 1:
            raise ConfigError(f"--seeds: at least 1, got {seeds}")
        console.print(f"{preset}: {config.num_updates} updates of {config.steps_per_update:,} "
                      f"game steps into {run_dir}")  # fmt: skip
        run_dir.mkdir(parents=True, exist_ok=True)
        save_players(run_dir, frozen or [], teammate)
        if seeds > 1 or sweep:
            runs = plan(config, range(seed, seed + seeds), _sweep(sweep, mode))
            dirs = [run_dir / r.name for r in runs]
            for d in dirs:
                d.mkdir(parents=True, exist_ok=True)
                save_players(d, frozen or [], teammate)
            checks = validating_runs(dirs, [chosen] * len(dirs))
            train_batch(runs, run_dir, frozen=pool, teammate=mate, save_every=save_every,
                        progress=not quiet, on_save=batch_on_save(checks),
                        tensorboard=tensorboard, mesh=mesh, split=split,
                        deadline=deadline)  # fmt: skip
            if not said_if_stopped(dirs, hours, run_dir):
                console.print(f"done: {len(runs)} runs in {run_dir} ({run_dir / CURVES})")
            return
        on_save = validating_runs([run_dir], [chosen])[0]
        train_run(config, run_dir, seed=seed, frozen=pool, teammate=mate, save_every=save_every,
                  progress=not quiet, on_save=on_save, tensorboard=tensorboard,
                  mesh=mesh, deadline=deadline)  # fmt: skip
        if said_if_stopped([run_dir], hours, run_dir):
            return
        console.print(f"done: {run_dir / 'log.csv'}, {run_dir / CURVE}, {run_dir / 'checkpoints'}")
        if validate_each:
            console.print(f"validation: {run_dir / VALIDATION_CSV}, best: {run_dir / BEST}")

    command.__doc__ = f"Train {preset} (defaults: the mode's preset; see `presets`)."
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
    tensorboard: Annotated[
        bool, typer.Option(help="Also log for TensorBoard (RUN/tensorboard)")
    ] = False,
    validate_each: Annotated[
        bool,
        typer.Option(
            "--validate",
            help="Validate each checkpoint from now on with --panel and --validation-games "
            "(recorded in RUN/validation.json); without it, as the run recorded",
        ),
    ] = False,
    panel: Panel = None,
    validation_games: ValidationGames = None,
    devices: Devices = None,
    split: Split = "games",
    coordinator: Coordinator = None,
    num_processes: NumProcesses = None,
    process_id: ProcessId = None,
    hours: Hours = None,
) -> None:
    """Continue a run of any mode from its newest saved state (it repeats the uninterrupted run
    exactly, and a run trained with `--validate` goes on validating each checkpoint with the
    settings it was started with); with `--steps`, to a new total (the same as a run started
    with that total). A run split over devices resumes on as many (`--devices`, the job's
    processes)."""
    deadline = deadline_after(hours)
    mesh = job_mesh(devices, coordinator, num_processes, process_id)  # before other JAX work
    from marl_bgs_train import checkpoints
    from marl_bgs_train.batch import is_batch, load_batch, train_batch
    from marl_bgs_train.players import load_players
    from marl_bgs_train.runs import train_run

    pool, mate = load_players(run_dir)
    if is_batch(run_dir):  # every run of the batch, in one program
        runs = load_batch(run_dir)
        dirs = [run_dir / r.name for r in runs]
        settings = resumed_settings(dirs, validate_each, panel, validation_games)
        if steps is not None:
            runs = [dataclasses.replace(r, config=_longer(r.config, steps)) for r in runs]
            for r in runs:
                checkpoints.save_config(run_dir / r.name, r.config)
        checks = validating_runs(dirs, settings, record=validate_each)
        train_batch(runs, run_dir, resume=True, frozen=pool, teammate=mate,
                    save_every=save_every, progress=not quiet, on_save=batch_on_save(checks),
                    tensorboard=tensorboard, mesh=mesh, split=split,
                    deadline=deadline)  # fmt: skip
        said_if_stopped([run_dir / r.name for r in runs], hours, run_dir)
        return
    config = checkpoints.load_config(run_dir)
    settings = resumed_settings([run_dir], validate_each, panel, validation_games)
    if steps is not None:
        config = _longer(config, steps)
        checkpoints.save_config(run_dir, config)
    train_run(config, run_dir, seed=seed, resume=True, frozen=pool, teammate=mate,
              save_every=save_every, progress=not quiet,
              on_save=validating_runs([run_dir], settings, record=validate_each)[0],
              tensorboard=tensorboard, mesh=mesh, deadline=deadline)  # fmt: skip
    said_if_stopped([run_dir], hours, run_dir)


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
    run_dir: Path, panel: Panel = None, validation_games: ValidationGames = None
) -> None:
    """Score a run's saved checkpoints against the panel on the validation layouts (the mode's:
    tdm maps 42, 43, 44, 46; two-bridge the run's variants); keep the best in RUN_DIR/best (a
    System: ckpt:RUN_DIR/best)."""
    from marl_bgs_train import checkpoints
    from marl_bgs_train.validation import BEST, VALIDATION_CSV, validate_run

    mode = checkpoints.load_config(run_dir).mode
    table = validate_run(run_dir, validation_settings(panel, validation_games, mode))
    console.print(ui.table(table, floats=".2f"))
    console.print(f"best: {run_dir / BEST} ({run_dir / VALIDATION_CSV})")


def whole_steps(steps: float) -> int:
    """`--steps` as a whole number of environment steps (or a `ConfigError`)."""
    from marl_bgs import ConfigError

    if not math.isfinite(steps) or steps != int(steps):
        raise ConfigError(f"steps: expected a whole number of environment steps, got {steps}")
    return int(steps)


@app.command()
def suite(
    seeds: Annotated[int, typer.Option(help="Runs of each learner, from seeds 0, 1, ...")] = 3,
    learner: Annotated[
        list[str] | None, typer.Option(help="A learner (repeatable; default: the mode's all)")
    ] = None,
    steps: Annotated[float | None, typer.Option(help="Game steps of each run (e.g. 2e6)")] = None,
    envs: Annotated[int | None, typer.Option(help="Games per update, in each run")] = None,
    rollout: Annotated[int | None, typer.Option(help="Ticks per game per update")] = None,
    out: Annotated[Path, typer.Option(help="A batch folder per learner: OUT/<learner>")] = Path(
        "runs/suite"
    ),
    override: Annotated[
        list[str] | None,
        typer.Option("--set", help="section.field=value for every learner that has the setting"),
    ] = None,
    mode: Mode = "tdm",
    layouts: Layouts = None,
    each_layout: Annotated[
        bool, typer.Option(help="A suite per chosen layout, in OUT/<layout>/<learner>")
    ] = False,
    validate_each: Annotated[
        bool,
        typer.Option("--validate", help="Validate each checkpoint; OUT/outcomes.csv at the end"),
    ] = False,
    check_every: Annotated[
        float | None,
        typer.Option(help="Game steps between checkpoints (default: every 50 updates)"),
    ] = None,
    validation_games: ValidationGames = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar")] = False,
    devices: Devices = None,
    split: Split = "games",
) -> None:
    """Every baseline of a mode with SEEDS runs each, its batch folder OUT/<learner>, or with
    --each-layout OUT/<layout>/<learner> per layout, a learner's layouts of one size trained as
    one program (`resume` continues a batch folder); every learner's curves in one figure
    (suite.png: the mean over its runs, the range shaded) and, with --validate, the final
    checkpoints' validation (the mean over seeds) in OUT/outcomes.csv.

    The Two-Bridge paper's protocol: `suite --mode two-bridge --variant all --each-layout
    --validate --check-every 50000` (every variant, algorithm and seed; 32 greedy episodes per
    checkpoint)."""
    mesh = job_mesh(devices, None, None, None)
    import pandas as pd

    from marl_bgs import ConfigError
    from marl_bgs_train.batch import final_validation, plan, plot_suite, train_batches
    from marl_bgs_train.config import apply_overrides, has_setting, validate
    from marl_bgs_train.config import presets as mode_presets
    from marl_bgs_train.modes import parts

    chosen = mode_presets(mode)
    names = learner or list(chosen)
    unknown = [n for n in names if n not in chosen]
    if unknown:
        raise ConfigError(f"--learner {unknown[0]!r}: allowed for {mode}: {list(chosen)}")
    if seeds < 1:
        raise ConfigError(f"--seeds: at least 1, got {seeds}")
    settings = validation_settings(None, validation_games, mode)
    given = settings if validate_each else None  # recorded; None: not validated
    sizes = {"total_steps": steps, "num_envs": envs, "rollout": rollout}
    setting = parts(mode).layout_setting
    batches = []  # (layout folder, learner, runs, save_every)
    items = _overrides(override, mode, layouts)
    applied: set[str] = set()  # the --set items some learner has
    for name in names:  # every config checked before the first trains
        config = dataclasses.replace(
            chosen[name], **{k: int(v) for k, v in sizes.items() if v is not None}
        )
        mine = [item for item in items if has_setting(config, item.partition("=")[0])]
        applied |= set(mine)
        config = apply_overrides(config, mine)  # with --each-layout: layouts of any size
        every = 50 if check_every is None else max(1, round(check_every / config.steps_per_update))
        if not each_layout:
            batches.append(("", name, plan(validate(config), range(seeds)), every))
            continue
        for index in getattr(config.game, setting):
            one = validate(apply_overrides(config, [f"game.{setting}={index}"]))
            label = (parts(mode).own_layouts(one.game) or (index,))[0]
            batches.append((str(label), name, plan(one, range(seeds)), every))
    unused = [item for item in items if item not in applied]
    apply_overrides(chosen[names[0]], unused)  # a setting no learner has: named, with the known
    for name in names:  # a learner's layouts of one size train as one program
        mine = [(out / label / name, runs, every) for label, n, runs, every in batches if n == name]
        for folder, runs, every in mine:
            console.print(f"{folder.relative_to(out)}: {len(runs)} runs of "
                          f"{runs[0].config.total_steps:,} game steps, a checkpoint every "
                          f"{every} updates")  # fmt: skip
        folders = [(folder, runs) for folder, runs, _ in mine]
        per_batch = [
            batch_on_save(validating_runs([f / r.name for r in runs], [given] * len(runs)))
            for f, runs in folders
        ]

        def check(b: int, i: int, step: int, per_batch: list = per_batch) -> None:
            if (on_save := per_batch[b]) is not None:
                on_save(i, step)

        train_batches(folders, progress=not quiet, save_every=mine[0][2],
                      on_save=check if validate_each else None, mesh=mesh,
                      split=split)  # fmt: skip
    for label in dict.fromkeys(label for label, *_ in batches):
        drawn = plot_suite(out / label, names)
        console.print(f"curves: {drawn}" if drawn else f"done: {out / label}")
    if validate_each:
        table = pd.DataFrame([
            {"layout": label, "learner": name, **final_validation(out / label / name)}
            for label, name, _, _ in batches
        ])  # fmt: skip
        table.drop(columns="layout" if not each_layout else []).to_csv(
            out / OUTCOMES_CSV, index=False
        )
        console.print(ui.table(table, floats=".3g"))
        console.print(f"outcomes: {out / OUTCOMES_CSV}")


@app.command()
def population(
    out: Annotated[
        Path, typer.Option(help="The population folder (continued if it exists)")
    ] = Path("runs/population"),
    budget: Annotated[
        str, typer.Option(help="paper (250M steps a learner; a GPU), cpu (1M) or tiny (tests)")
    ] = "cpu",
    learner: Annotated[
        list[str] | None, typer.Option(help="A learner (repeatable; default: the mode's all)")
    ] = None,
    seeds: Annotated[int, typer.Option(help="Runs of each learner (one program)")] = 1,
    override: Annotated[
        list[str] | None,
        typer.Option("--set", help="section.field=value for every learner that has the setting"),
    ] = None,
    frozen: Annotated[
        list[str] | None,
        typer.Option(help="A System name for the frozen opponent pool (repeatable)"),
    ] = None,
    panel: Panel = None,
    validation_games: ValidationGames = None,
    mode: Mode = "tdm",
    quiet: Annotated[bool, typer.Option(help="No progress bar")] = False,
    devices: Devices = None,
    split: Split = "games",
    hours: Hours = None,
) -> None:
    """Train the population: every baseline of the mode at one budget (the paper's settings and
    opponent mix), each checkpoint validated on the mode's panel, the best kept in RUN/best and
    the milestone checkpoint (the paper's 40M-step one, scaled with the budget) in
    RUN/milestone. Run it again to continue; `marl-bgs-tournament release OUT` makes the
    System files."""
    deadline = deadline_after(hours)
    mesh = job_mesh(devices, None, None, None)
    from marl_bgs_train.population import BUDGETS, budget_of, train_population, unfinished

    tier = budget_of(budget)
    validation = None
    if panel or validation_games is not None:  # the tier's validation, with what was given
        given = validation_settings(panel, validation_games, mode)
        validation = dataclasses.replace(
            tier.validation,
            panel=given.panel if panel else tier.validation.panel,
            games_per_map=tier.validation.games_per_map if validation_games is None
            else given.games_per_map,
        )  # fmt: skip
    console.print(f"population ({budget}: {BUDGETS[budget].about}) into {out}")
    record = train_population(
        out, budget, mode=mode, learners=learner, seeds=seeds, overrides=override or [],
        frozen=frozen or [], validation=validation, progress=not quiet, mesh=mesh, split=split,
        deadline=deadline,
    )  # fmt: skip
    left = unfinished(out)
    if left:
        console.print(f"stopped after {hours} hours: {', '.join(left)} not finished in {out}; "
                      "the same command continues")  # fmt: skip
        return
    console.print(f"done: {', '.join(record['learners'])} in {out} ({out / 'suite.png'}); "
                  f"release them: marl-bgs-tournament release {out}")  # fmt: skip


@app.command("population-join")
def population_join(
    out: Annotated[Path, typer.Argument(help="The joined population folder (new)")],
    sources: Annotated[list[Path], typer.Argument(help="Populations of other learners")],
) -> None:
    """One population from populations of other learners asked for alike (each learner trained
    on its own machine, say): their folders copied, the record their union."""
    from marl_bgs_train.population import join_populations

    record = join_populations(out, sources)
    console.print(f"{', '.join(record['learners'])} in {out}; release them: "
                  f"marl-bgs-tournament release {out}")  # fmt: skip


@app.command()
def presets(mode: Mode = "tdm") -> None:
    """A mode's baselines and their settings."""
    import pandas as pd

    from marl_bgs_train.config import presets as mode_presets
    from marl_bgs_train.config import to_dict

    chosen = mode_presets(mode)
    flat = {name: _flat(to_dict(c)) for name, c in chosen.items()}
    keys = list(dict.fromkeys(k for settings in flat.values() for k in settings))
    rows = [[key, *(str(flat[name].get(key, "-")) for name in chosen)] for key in keys]
    console.print(ui.table(pd.DataFrame(rows, columns=["setting", *chosen])))


def _flat(settings: dict, prefix: str = "") -> dict[str, object]:
    """Nested settings as `section.field` keys; a long list of numbers as its range."""
    out: dict[str, object] = {}
    for key, value in settings.items():
        if isinstance(value, dict):
            out |= _flat(value, f"{prefix}{key}.")
        elif isinstance(value, list) and len(value) > 6 and all(isinstance(v, int) for v in value):
            out[prefix + key] = f"{value[0]}-{value[-1]} ({len(value)})"
        else:
            out[prefix + key] = value
    return out


for _commands in entry_points(group=COMMANDS):  # a mode's own commands
    _commands.load()(app)


if __name__ == "__main__":
    app()
