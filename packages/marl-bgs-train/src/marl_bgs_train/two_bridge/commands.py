"""Two-Bridge's commands of `marl-bgs-train` (registered through the entry-point group
`marl_bgs_train.commands`): `two-bridge` trains the paper's baselines with their own runner
(`marl_bgs_train.two_bridge.run`), which `marl-bgs-train resume` continues (entry-point group
`marl_bgs_train.runs`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from marl_bgs_eval import console as ui


def register(app: typer.Typer) -> None:
    """Add Two-Bridge's commands to the training command line."""
    app.command(name="two-bridge")(two_bridge)


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
    from marl_bgs_train.cli import whole_steps
    from marl_bgs_train.config import apply_overrides
    from marl_bgs_train.two_bridge import config as bridge_config
    from marl_bgs_train.two_bridge import run as bridge_run

    base = bridge_config.paper_defaults(algo, variant=variant, total_steps=whole_steps(steps),
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
    ui.out.print(ui.table(last, floats=".3g"))
