"""What the `marl-bgs-train` commands share: their option types, joining a job of several
hosts, time limits and validation settings from the command line."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from marl_bgs_eval import console as ui

if TYPE_CHECKING:  # imported where a command runs, so --help needs no JAX
    from jax.sharding import Mesh

    from marl_bgs_train.config import ValidationSettings


Panel = Annotated[
    list[str] | None,
    typer.Option(help="A validation opponent by System name (repeatable; default: the scripted "
                 "three)"),
]  # fmt: skip
ValidationGames = Annotated[
    int | None,
    typer.Option(help="Validation games per layout and opponent (default: the mode's, tdm 4)"),
]
Mode = Annotated[str, typer.Option(help="The game mode (a mode id or alias, e.g. tdm)")]
Layouts = Annotated[
    str | None,
    typer.Option(
        "--layouts", "--maps", "--variant",
        help="The mode's layouts to train on (tdm: maps, e.g. 0-39; two-bridge: variants, e.g. "
        "V1_Navigate)",
    ),
]  # fmt: skip


Devices = Annotated[
    int | None,
    typer.Option(help="Devices each run's games are split over (default: all of them on GPUs, "
                 "TPUs or across hosts; 1 on a CPU)"),
]  # fmt: skip
Split = Annotated[
    str,
    typer.Option(help="With several runs and devices: split each run's games over the devices "
                 "(games) or give each device whole runs (runs)"),
]  # fmt: skip
Hours = Annotated[
    float | None,
    typer.Option(
        min=0.0,
        help="Stop after the first update past this many hours, saved (a time-limited job or "
        "lease); continue with `resume` (population: the same command)",
    ),
]
Coordinator = Annotated[
    str | None,
    typer.Option(envvar="MARL_BGS_COORDINATOR", help="HOST:PORT of process 0 of a job on several "
                 "hosts (with --num-processes and --process-id; jax.distributed)"),
]  # fmt: skip
NumProcesses = Annotated[
    int | None,
    typer.Option(envvar="MARL_BGS_NUM_PROCESSES", help="Processes (hosts) of the job"),
]
ProcessId = Annotated[
    int | None,
    typer.Option(envvar="MARL_BGS_PROCESS_ID", help="This process's number in the job, from 0"),
]


def job_mesh(devices: int | None, coordinator: str | None, processes: int | None,
          process_id: int | None) -> Mesh | None:  # fmt: skip
    """Join the job of several hosts (if one is given), then the mesh of `--devices`."""
    from marl_bgs_train.devices import join_job, training_mesh

    join_job(coordinator, processes, process_id)
    return training_mesh(devices)


def deadline_after(hours: float | None) -> float | None:
    """The `time.monotonic()` reading `hours` from now (None: no limit)."""
    return None if hours is None else time.monotonic() + hours * 3600


def said_if_stopped(run_dirs: list[Path], hours: float | None, target: Path) -> bool:
    """Whether a time limit stopped any of the runs before its last update (said, with how to
    continue: `resume target`, by the job's first process)."""
    if hours is None:
        return False
    import jax

    from marl_bgs_train.runs import finished

    left = [d for d in run_dirs if not finished(d)]
    if left and jax.process_index() == 0:
        ui.out.print(f"stopped after {hours} hours: {len(left)} of {len(run_dirs)} runs not "
                      f"finished; continue: marl-bgs-train resume {target}")  # fmt: skip
    return bool(left)


def validation_settings(
    panel: list[str] | None, games: int | None, mode: str
) -> ValidationSettings:
    """Validation settings from the command line, checked (`validation.check_settings`; the
    layouts, and the panel and games unless given, are the run's mode's own)."""
    from marl_bgs_train.config import ValidationSettings
    from marl_bgs_train.modes import parts
    from marl_bgs_train.validation import check_settings

    own = parts(mode).validation or ValidationSettings()
    chosen = dataclasses.replace(
        own, panel=tuple(panel or own.panel),
        games_per_map=own.games_per_map if games is None else games,
    )  # fmt: skip
    return check_settings(chosen, mode, names=OPTION_NAMES)


OPTION_NAMES = {"games_per_map": "--validation-games", "panel": "--panel"}  # as options say them


def resumed_settings(
    dirs: list[Path], validate_each: bool, panel: list[str] | None, games: int | None
) -> list[ValidationSettings | None]:
    """How each resumed run is validated, checked before anything is written: with
    `--validate`, the options' settings; else each run's record (None: not validated)."""
    from marl_bgs import ConfigError
    from marl_bgs_train import checkpoints
    from marl_bgs_train.validation import read_settings

    if validate_each:
        return [validation_settings(panel, games, checkpoints.load_config(d).mode) for d in dirs]
    if panel or games is not None:
        raise ConfigError("--panel and --validation-games: only with --validate")
    return [read_settings(d) for d in dirs]


def validating_runs(
    dirs: list[Path], settings: list[ValidationSettings | None], record: bool = True
) -> list[Callable[[int], object] | None]:
    """Each run's `on_save` (`validation.validating`; None: not validated), its settings
    recorded first (`validation.record_settings`; None removes an earlier record) unless
    `record` is off (a resumed run's own record, read back)."""
    from marl_bgs_train.validation import record_settings, validating

    if record:
        for d, s in zip(dirs, settings, strict=True):
            record_settings(d, s)
    return [None if s is None else validating(d, s) for d, s in zip(dirs, settings, strict=True)]


def batch_on_save(
    checks: list[Callable[[int], object] | None],
) -> Callable[[int, int], None] | None:
    """A batch's `on_save(run, update)` from its runs' own (`validating_runs`); None when no run
    is validated."""
    if not any(checks):
        return None

    def on_save(run: int, update: int) -> None:
        if (check := checks[run]) is not None:
            check(update)

    return on_save
