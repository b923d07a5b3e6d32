"""Batches of runs: several seeds and a sweep over settings, each run in a folder of its own.
Runs whose configs differ only in settings read as data (`hypers.sweepable`: learning rates,
entropy and clip coefficients, lambdas, the reward's shaping weights, layouts of one size) and
in their seeds train as one compiled program (`vmap` over runs); a sweep over any other setting
(the opponent mix's weights, which size the opponents' slices of the games, say) gives one such
program per distinct value, trained one after another.

    runs = plan(PRESETS["ippo-rnn"], seeds=[0, 1, 2], sweep={"entropy_coef": ["0.01", "0.003"]})
    train_batch(runs, "runs/ippo")   # runs/ippo/entropy_coef=0.01-s0/, ... and batch.json

`batch.json` in the batch folder lists the runs (folder name and seed); each run folder is an
ordinary run (config, logs, checkpoints, curve), so `ckpt:runs/ippo/s0` is a System and
`validate` scores it. `resume` continues every run of a batch in one program, as uninterrupted.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from marl_bgs import ConfigError, Policy
from marl_bgs.core.checks import shown
from marl_bgs_train import checkpoints
from marl_bgs_train.config import Config, apply_overrides, validate
from marl_bgs_train.runs import moving_average, read_log, train_runs

BATCH_FILE = "batch.json"
CURVES = "curves.png"  # every run's learning curve in one figure
SUITE = "suite.png"  # every learner's curves (mean and range over its runs) in one figure
_NAME = re.compile(r"^[A-Za-z0-9_.,=+-]{1,120}$")  # a run's folder name (no path separators)


@dataclass(frozen=True)
class Run:
    """One run of a batch: its folder name, config and seed."""

    name: str
    config: Config
    seed: int


def plan(
    config: Config, seeds: Sequence[int], sweep: Mapping[str, Sequence[str]] = {}
) -> list[Run]:
    """Every combination of the swept settings' values (as `--set` reads them, `game.maps=0,1,2`
    say), each with every seed. Any setting may be swept; those of `hypers.sweepable` keep one
    program (`train_batch` groups the rest). A run's folder is named by its values
    (`entropy_coef=0.01-s0`; a value longer than 24 characters by its position, `game.maps=v1`)."""
    sweep = sweep or {}
    for name, values in sweep.items():
        if not values:
            raise ConfigError(f"--sweep {shown(name, 40)}: give at least one value")
        apply_overrides(config, [f"{name}={values[0]}"])  # an unknown setting names the known
    if not seeds or len(set(seeds)) != len(seeds):
        raise ConfigError(f"seeds: distinct seeds, at least one, got {list(seeds)}")
    runs = []
    choices = [list(enumerate(values)) for values in sweep.values()]
    for combo in itertools.product(*choices):
        named = list(zip(sweep, combo, strict=True))
        swept = validate(apply_overrides(config, [f"{k}={v}" for k, (_, v) in named]))
        label = ",".join(f"{k}={v if len(v) <= 24 else f'v{j}'}" for k, (j, v) in named)
        runs += [Run(f"{label}-s{seed}" if label else f"s{seed}", swept, seed) for seed in seeds]
    if len({r.name for r in runs}) != len(runs):
        raise ConfigError(f"--sweep: values repeat ({dict(sweep)})")
    return runs


def programs(
    runs: Sequence[Run], frozen: Sequence[Policy] = (), teammate: Policy | None = None
) -> list[list[int]]:
    """The runs (by index) that share one compiled program, in order of first appearance: runs
    whose trainers have one `program_key` (configs that differ only in `hypers.sweepable`
    settings, layouts of one size)."""
    from marl_bgs_train.learners import make_train

    keys = {c: make_train(c, frozen, teammate).program_key() for c in {r.config for r in runs}}
    groups: dict[Any, list[int]] = {}
    for i, run in enumerate(runs):
        groups.setdefault(keys[run.config], []).append(i)
    return list(groups.values())


def train_batch(
    runs: Sequence[Run],
    batch_dir: str | Path,
    resume: bool = False,
    frozen: Sequence[Policy] = (),
    teammate: Policy | None = None,
    **settings: Any,
) -> list[Any]:
    """Train `runs` into `batch_dir/<run name>/` (or continue them with `resume`), each group of
    runs that shares a program (`programs`) as one, the groups one after another, writing
    `batch.json` and, at the end, every run's curve in `curves.png`. `settings` go to
    `runs.train_runs` (save_every, progress, on_update, on_save, tensorboard; `on_update` and
    `on_save` get the run's index in `runs`). Returns each run's final state."""
    own = {k: _dropped_batch(v) if k in CALLBACKS and v else v for k, v in settings.items()}
    return train_batches([(Path(batch_dir), runs)], resume, frozen, teammate, **own)[0]


CALLBACKS = ("on_update", "on_save")  # the settings that name a run


def train_batches(
    batches: Sequence[tuple[Path, Sequence[Run]]],
    resume: bool = False,
    frozen: Sequence[Policy] = (),
    teammate: Policy | None = None,
    **settings: Any,
) -> list[list[Any]]:
    """`train_batch` for several batch folders at once: the runs of every batch that share a
    program train as one (the Two-Bridge protocol's variants of one unit count, say, each
    variant a batch folder), the programs one after another (with a `deadline`, each program
    still trains one update). `on_update` and `on_save` get the batch's index and the run's
    index in it. Returns each batch's runs' final states."""
    flat = [(b, i, run, folder / run.name) for b, (folder, runs) in enumerate(batches)
            for i, run in enumerate(runs)]  # fmt: skip
    if not resume:
        for folder, runs in batches:
            folder.mkdir(parents=True, exist_ok=True)
            records = [{"name": r.name, "seed": r.seed} for r in runs]
            (folder / BATCH_FILE).write_text(json.dumps({"runs": records}, indent=2) + "\n")
    states: list[list[Any]] = [[None] * len(runs) for _, runs in batches]
    for group in programs([run for _, _, run, _ in flat], frozen, teammate):
        dirs = [flat[k][3] for k in group]
        started = resume and all(checkpoints.manager(d).latest_step() is not None for d in dirs)
        where = [flat[k][:2] for k in group]
        own = {k: _named(v, where) if k in CALLBACKS and v else v for k, v in settings.items()}
        done = train_runs(
            [flat[k][2].config for k in group], [flat[k][2].seed for k in group], dirs,
            batched=True, resume=started, frozen=frozen, teammate=teammate, **own,
        )  # fmt: skip
        for (b, i), state in zip(where, done, strict=True):
            states[b][i] = state
    for folder, runs in batches:
        plot_batch(folder, runs)
    return states


def _named(callback: Any, where: Sequence[tuple[int, int]]) -> Any:
    """`callback(b, i, ...)` with the batch and run of a program's run `k`, called as
    `callback(k, ...)` (`train_runs` numbers a program's runs)."""
    return lambda k, *rest: callback(*where[k], *rest)


def _dropped_batch(callback: Any) -> Any:
    """`callback(i, ...)` called as `callback(b, i, ...)` (one batch)."""
    return lambda b, i, *rest: callback(i, *rest)


def is_batch(path: str | Path) -> bool:
    """Whether `path` holds a batch of runs (its `batch.json`)."""
    return (Path(path) / BATCH_FILE).is_file()


def load_batch(batch_dir: str | Path) -> list[Run]:
    """The runs of a batch folder, checked: `batch.json` lists distinct safe folder names with
    integer seeds, and each folder holds a valid run config."""
    path = Path(batch_dir) / BATCH_FILE
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ConfigError(f"run_dir: {path} is not a batch file ({err})") from None
    records = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(records, list) or not records:
        raise ConfigError(f"run_dir: {path}: runs: expected a non-empty list of runs")
    runs = []
    for i, record in enumerate(records):
        where = f"run_dir: {path}: runs[{i}]"
        if not isinstance(record, dict) or set(record) != {"name", "seed"}:
            raise ConfigError(
                f"{where}: expected an object with name and seed, got {shown(record)}"
            )
        name, seed = record["name"], record["seed"]
        if not isinstance(name, str) or not _NAME.match(name) or name in (".", ".."):
            raise ConfigError(f"{where}.name: expected a run folder name, got {shown(name)}")
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**31:
            raise ConfigError(f"{where}.seed: expected an integer in [0, 2^31), got {shown(seed)}")
        runs.append(Run(name, checkpoints.load_config(Path(batch_dir) / name), seed))
    if len({r.name for r in runs}) != len(runs):
        raise ConfigError(f"run_dir: {path}: runs: folder names repeat")
    return runs


def plot_batch(batch_dir: str | Path, runs: Sequence[Run], window: int = 10) -> Path | None:
    """`curves.png`: every run's win rate and reward per tick against game steps (moving
    averages over `window` updates), one line per run, beside each run's own `curve.png`."""
    groups = {r.name: [read_log(Path(batch_dir) / r.name)] for r in runs}
    return _plot_groups(groups, Path(batch_dir) / CURVES, window)


def plot_suite(out_dir: str | Path, learners: Sequence[str], window: int = 10) -> Path | None:
    """`suite.png`: each learner's win rate and reward per tick against game steps, from its
    batch folder `out_dir/<learner>`: the mean over its runs (moving averages over `window`
    updates), the range from its lowest to its highest run shaded."""
    groups = {}
    for learner in learners:
        folder = Path(out_dir) / learner
        runs = load_batch(folder)
        groups[f"{learner} ({len(runs)} runs)"] = [read_log(folder / r.name) for r in runs]
    return _plot_groups(groups, Path(out_dir) / SUITE, window)


def final_validation(batch_dir: str | Path) -> dict[str, float]:
    """The mean over a batch's runs of each run's last validated checkpoint (its update, score
    and the mode's measures: `validation.csv`'s numeric columns), with the runs counted."""
    import pandas as pd

    from marl_bgs_train.validation import VALIDATION_CSV

    finals = []
    for run in load_batch(batch_dir):
        path = Path(batch_dir) / run.name / VALIDATION_CSV
        if path.exists():
            finals.append(pd.read_csv(path).iloc[-1])
    if not finals:
        return {"runs": 0}
    final = pd.DataFrame(finals).select_dtypes("number").mean()
    return {"runs": len(finals), **{str(k): float(v) for k, v in final.items()}}


PANELS = (("win_rate", "win rate (finished games)"), ("reward_per_tick", "reward per agent tick"))


def _plot_groups(groups: dict[str, list[list[dict]]], path: Path, window: int) -> Path | None:
    """One line per group of runs' logs (the mean over its runs over the updates they all have,
    the range between its lowest and highest run shaded), a panel per `PANELS` entry, saved at
    `path`; None when no group has an update yet."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    drawn = {label: logs for label, logs in groups.items() if min(map(len, logs)) > 0}
    if not drawn:
        return None
    fig, axes = plt.subplots(1, len(PANELS), figsize=(11, 3.8), constrained_layout=True)
    for label, logs in drawn.items():
        updates = min(map(len, logs))
        for ax, (key, _) in zip(axes, PANELS, strict=True):
            runs = moving_average(np.asarray([[r[key] for r in rows[:updates]] for rows in logs]),
                                  window)  # fmt: skip
            steps = [row["steps"] for row in logs[0][updates - runs.shape[-1] : updates]]
            dots = "o" if len(steps) < 20 else None  # a short run: its few points shown
            line = ax.plot(steps, runs.mean(0), marker=dots, label=label)
            if len(logs) > 1:
                ax.fill_between(steps, runs.min(0), runs.max(0), alpha=0.2,
                                color=line[0].get_color())  # fmt: skip
    for ax, (_, title) in zip(axes, PANELS, strict=True):
        ax.set_xlabel("game steps")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
