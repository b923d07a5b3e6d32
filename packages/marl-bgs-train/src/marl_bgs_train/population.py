"""The population: every baseline of a mode trained at one budget, its checkpoints validated on
the mode's panel as they are saved, the best kept as `RUN_DIR/best` and the checkpoint at the
budget's milestone (the paper's 40M-step one) as `RUN_DIR/milestone`, beside the final one.

    marl-bgs-train population --budget cpu --out runs/population
    marl-bgs-train population --budget paper --out runs/population   # on a GPU

Each learner is a batch folder `OUT/<learner>` (`batch.train_batches`: its seeds train as one
program, over `--devices`); `OUT/population.json` records what was asked. Running the same
command again continues where it stopped: finished learners are skipped, the others resume
from their newest checkpoints. `marl-bgs-tournament release OUT` makes the System files.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import subprocess
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import marl_bgs
from marl_bgs import ConfigError
from marl_bgs_train import checkpoints
from marl_bgs_train.batch import BATCH_FILE, load_batch, plan, plot_suite, train_batches
from marl_bgs_train.config import Config, ValidationSettings, apply_overrides, has_setting
from marl_bgs_train.config import presets as mode_presets
from marl_bgs_train.config import validate as validate_config
from marl_bgs_train.players import named_policy, save_players
from marl_bgs_train.runs import finished, is_scheduled, keep_copy, kept_update
from marl_bgs_train.testing import tiny_config
from marl_bgs_train.validation import settings_for, validate_run

POPULATION_FILE = "population.json"  # what the command was asked, checked when it continues
MILESTONE = "milestone"  # RUN_DIR/milestone: the checkpoint at the budget's milestone
SEASON_MODE = "tdm"  # the population is Season 0's: Team Deathmatch


@dataclass(frozen=True)
class Budget:
    """One tier of the population's training: game steps per run, the milestone whose
    checkpoint is kept, updates between validated checkpoints and the settings the tier changes
    (`--set` items, applied to each learner that has the setting)."""

    steps: int
    milestone: int
    check_every: int
    settings: tuple[str, ...] = ()
    validation: ValidationSettings = field(default_factory=ValidationSettings)
    tiny: bool = False  # the learners at test size (`testing.tiny_config`)
    about: str = ""


BUDGETS: dict[str, Budget] = {
    "paper": Budget(
        steps=250_000_000,
        milestone=40_000_000,
        check_every=500,
        about="the paper's: 250M game steps a learner, its 40M-step checkpoint kept; a GPU",
    ),
    "cpu": Budget(
        steps=1_000_000,
        milestone=160_000,
        check_every=61,
        settings=("num_envs=64", "opponents.copy_every=16384", "epsilon_steps=300000"),
        about="reduced for a CPU: 1M game steps of 64 games a learner (~15 minutes each on 2 "
        "cores), the milestone at the paper's share (160K), a saved copy every 8 updates, "
        "exploration decaying over 300K steps",
    ),
    "tiny": Budget(
        steps=48,
        milestone=16,
        check_every=2,
        validation=ValidationSettings(
            maps=(42,), panel=("idle",), games_per_map=2, batch_size=4, tick_limit=6
        ),
        tiny=True,
        about="the pipeline's test size: three updates of 4 games x 4 ticks (checkpoints after the "
        "milestone's first, the second and the last), one validation map",
    ),
}


def budget_of(name: str) -> Budget:
    """A tier by name (a `ConfigError` naming the tiers otherwise)."""
    if name not in BUDGETS:
        raise ConfigError(f"budget: expected one of {list(BUDGETS)}, got {name!r}")
    return BUDGETS[name]


def learner_config(
    mode: str, learner: str, budget: Budget, overrides: Sequence[str] = ()
) -> Config:
    """`learner`'s preset at `budget` (its steps, its settings where the learner has them), then
    `overrides` (`--set` items; every one must be a setting of some learner)."""
    base = tiny_config(learner) if budget.tiny else mode_presets(mode)[learner]
    config = dataclasses.replace(base, total_steps=budget.steps)
    own = [item for item in budget.settings if has_setting(config, item.partition("=")[0])]
    mine = [item for item in overrides if has_setting(config, item.partition("=")[0])]
    return validate_config(apply_overrides(config, [*own, *mine]))


def milestone_update(config: Config, budget: Budget) -> int:
    """The update whose checkpoint is the milestone: the first at or past its game steps."""
    return min(config.num_updates, math.ceil(budget.milestone / config.steps_per_update))


def _source_commit() -> str | None:
    """The git commit of this package's source, where it is a checkout (None elsewhere)."""
    try:
        done = subprocess.run(["git", "-C", str(Path(__file__).parent), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=10, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _request(mode: str, budget: str, learners: Sequence[str], seeds: int,
             overrides: Sequence[str], frozen: Sequence[str],
             validation: ValidationSettings) -> dict[str, Any]:  # fmt: skip
    plain = json.loads(json.dumps(dataclasses.asdict(validation)))  # tuples as JSON lists
    return {"mode": mode, "budget": budget, "learners": list(learners), "seeds": seeds,
            "settings": list(overrides), "frozen": list(frozen), "validation": plain}  # fmt: skip


def read_population(out: str | Path) -> dict[str, Any]:
    """`OUT/population.json`, checked (a `ConfigError` naming what is wrong)."""
    path = Path(out) / POPULATION_FILE
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ConfigError(f"population: {path} is not a population record ({err})") from None
    wanted = {*_request("", "", [], 0, [], [], ValidationSettings()), "commit", "milestones"}
    if not isinstance(data, dict) or set(data) != wanted:
        raise ConfigError(f"population: {path}: expected the fields {sorted(wanted)}")
    if data["mode"] != SEASON_MODE:
        raise ConfigError(f"population: {path}: mode: expected {SEASON_MODE!r}")
    budget_of(data["budget"])
    learners = data["learners"]
    known = list(mode_presets(data["mode"]))
    if not isinstance(learners, list) or not learners or any(n not in known for n in learners):
        raise ConfigError(f"population: {path}: learners: expected names from {known}")
    milestones = data["milestones"]
    if (
        not isinstance(milestones, dict)
        or set(milestones) != set(learners)
        or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in milestones.values())
    ):
        raise ConfigError(f"population: {path}: milestones: expected an update per learner")
    return data


def train_population(
    out: str | Path,
    budget: str = "cpu",
    *,
    mode: str = "tdm",
    learners: Sequence[str] | None = None,
    seeds: int = 1,
    overrides: Sequence[str] = (),
    frozen: Sequence[str] = (),
    validation: ValidationSettings | None = None,
    progress: bool = True,
    deadline: float | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """Train (or continue) the population in `out`: each of `learners` (default: every baseline
    of the mode) with `seeds` runs at `budget`, validated at each checkpoint (`validation`,
    default the tier's: the mode's panel and maps), the milestone checkpoint kept. `deadline`
    (a `time.monotonic()` reading): the learner in training stops, saved, after the first
    update that ends past it, and no other learner starts (`unfinished` names what is left; the
    same call continues it); a call trains at least one update. `settings` go to
    `batch.train_batches` (mesh, split). Returns the population record."""
    out = Path(out)
    tier = budget_of(budget)
    try:
        season_mode = marl_bgs.kit(mode).id == marl_bgs.kit(SEASON_MODE).id
    except ValueError:
        season_mode = False
    if not season_mode:
        raise ConfigError(f"mode: the population is Team Deathmatch's ({SEASON_MODE!r}), got "
                          f"{mode!r}; train another mode's baselines with `marl-bgs-train "
                          "suite --mode`")  # fmt: skip
    mode = SEASON_MODE
    known = list(mode_presets(mode))
    names = list(learners or known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"learners: {unknown[0]!r} is not a baseline of {mode}; allowed: {known}")
    if seeds < 1:
        raise ConfigError(f"seeds: at least 1, got {seeds}")
    configs = {n: learner_config(mode, n, tier, overrides) for n in names}
    unused = [i for i in overrides if not any(has_setting(c, i.partition("=")[0])
                                              for c in configs.values())]  # fmt: skip
    if unused:
        apply_overrides(configs[names[0]], unused)  # names the setting and the known ones
    pool = [named_policy(name, "frozen") for name in frozen]
    checked = settings_for(mode, validation or tier.validation)
    request = _request(mode, budget, names, seeds, overrides, frozen, checked)
    if (out / POPULATION_FILE).exists():
        record = read_population(out)
        changed = [k for k, v in request.items() if record[k] != v]
        if changed:
            raise ConfigError(f"population: {out} was started with other {changed[0]} "
                              f"({record[changed[0]]!r}); continue it as it was, or use a new "
                              "--out")  # fmt: skip
    else:
        out.mkdir(parents=True, exist_ok=True)
        milestones = {n: milestone_update(c, tier) for n, c in configs.items()}
        record = {**request, "commit": _source_commit(), "milestones": milestones}
        (out / POPULATION_FILE).write_text(json.dumps(record, indent=2) + "\n")
    any_trained = False
    for name in names:
        folder, milestone = out / name, record["milestones"][name]
        started = (folder / BATCH_FILE).exists()
        runs = load_batch(folder) if started else plan(configs[name], range(seeds))
        dirs = [folder / run.name for run in runs]
        trained = [finished(d) for d in dirs]
        if any_trained and deadline is not None and time.monotonic() >= deadline:
            break  # a call trains at least one update, of the first learner not finished
        if not started or not all(trained):
            any_trained = True
            for d in dirs:
                d.mkdir(parents=True, exist_ok=True)
                save_players(d, list(frozen), None)

            def check(b: int, i: int, update: int, dirs: list[Path] = dirs,
                      m: int = milestone) -> None:  # fmt: skip
                if update == m:  # the copy first: it is quick, validation is not
                    keep_copy(dirs[i], update, MILESTONE)
                validate_run(dirs[i], checked, [update])

            train_batches([(folder, runs)], resume=started, frozen=pool, progress=progress,
                          save_every=tier.check_every, save_at=(milestone,), on_save=check,
                          deadline=deadline, **settings)  # fmt: skip
        for d, run in zip(dirs, runs, strict=True):
            _complete(d, checked, milestone, scheduled(run.config, tier, milestone))
    _plot_started(out, names)
    return record


def unfinished(out: str | Path) -> list[str]:
    """The learners of the population in `out` not yet trained to their last update."""
    left = []
    for name in read_population(out)["learners"]:
        folder = Path(out) / name
        runs = load_batch(folder) if (folder / BATCH_FILE).exists() else []
        if not runs or not all(finished(folder / r.name) for r in runs):
            left.append(name)
    return left


def scheduled(config: Config, budget: Budget, milestone: int) -> set[int]:
    """The updates whose checkpoints are validated (those `train_runs` saves on schedule):
    every `check_every`-th, the milestone's and the last."""
    last = config.num_updates
    return {
        u for u in range(1, last + 1) if is_scheduled(u, budget.check_every, last, (milestone,))
    }


def _complete(
    run_dir: Path, checked: ValidationSettings, milestone: int, due: Collection[int]
) -> None:
    """What a stop between a checkpoint and its validation or copy left undone: every kept
    checkpoint `due` (`scheduled`) not yet scored is validated (the best chosen again; a checkpoint
    saved at a deadline is for resuming only), and the milestone copied while its checkpoint is
    still kept."""
    kept = checkpoints.manager(run_dir, keep=None).all_steps()
    validate_run(run_dir, checked, [u for u in kept if u in due])
    if kept_update(run_dir / MILESTONE) != milestone and milestone in kept:
        keep_copy(run_dir, milestone, MILESTONE)


def population_runs(out: str | Path) -> dict[str, list[Path]]:
    """Each learner's run folders in a population (`read_population` checked)."""
    record = read_population(out)
    return {n: [Path(out) / n / r.name for r in load_batch(Path(out) / n)]
            for n in record["learners"]}  # fmt: skip


def join_populations(out: str | Path, sources: Sequence[str | Path]) -> dict[str, Any]:
    """One population in `out` from populations of other learners asked for alike (the same
    mode, budget, seeds, settings, frozen pool and validation; each learner in one of them), as
    when each learner was trained on its own machine: the learners' folders copied, the record
    their union. Returns the new record; refuses (`ConfigError`) what differs or overlaps."""
    out = Path(out)
    if out.exists():
        raise ConfigError(f"out: {out} exists; join into a new folder")
    records = [read_population(src) for src in sources]
    if not records:
        raise ConfigError("sources: at least one population")
    shared = [k for k in records[0] if k not in ("learners", "milestones", "commit")]
    for src, record in zip(sources, records, strict=True):
        other = next((k for k in shared if record[k] != records[0][k]), None)
        if other is not None:
            raise ConfigError(f"sources: {src} was asked for with other {other} than "
                              f"{sources[0]}")  # fmt: skip
    names = [n for record in records for n in record["learners"]]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise ConfigError(f"sources: {twice!r} is in more than one of them")
    known = list(mode_presets(records[0]["mode"]))
    commits = {record["commit"] for record in records}
    record = {
        **{k: records[0][k] for k in shared},
        "learners": sorted(names, key=known.index),
        "commit": commits.pop() if len(commits) == 1 else None,
        "milestones": {n: m for record in records for n, m in record["milestones"].items()},
    }
    for src, source in zip(sources, records, strict=True):
        for name in source["learners"]:
            shutil.copytree(Path(src) / name, out / name)
    (out / POPULATION_FILE).write_text(json.dumps(record, indent=2) + "\n")
    _plot_started(out, record["learners"])
    return read_population(out)


def _plot_started(out: Path, names: Sequence[str]) -> None:
    """`suite.png` of the population's learners that have started (a batch folder)."""
    plot_suite(out, [n for n in names if (out / n / BATCH_FILE).exists()])
