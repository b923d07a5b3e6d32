"""A Two-Bridge training run as the paper runs one: train for `total_steps` environment steps,
and every `checkpoint_every` steps save the weights (orbax) and play `eval_episodes`
deterministic evaluation episodes, logging their outcome distribution to `checkpoints.csv`.

The evaluation episodes start from one fixed key for the whole run (the same 32 starts at every
checkpoint), and the evaluation program takes the weights as data, so it compiles once.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp
import pandas as pd

from marl_bgs import ConfigError, Policy
from marl_bgs.core.checks import shown
from marl_bgs.two_bridge import OUTCOMES, VARIANTS
from marl_bgs.two_bridge.layout import COMBAT_WIN, NAVIGATION_WIN
from marl_bgs_eval.episodes import run_episodes
from marl_bgs_eval.progress import progress_bar
from marl_bgs_train import checkpoints
from marl_bgs_train.runs import tensorboard_writer
from marl_bgs_train.two_bridge.common import make_env
from marl_bgs_train.two_bridge.config import ADDED_SETTINGS, BridgeConfig, paper_config
from marl_bgs_train.two_bridge.ppo import PPOTrainer
from marl_bgs_train.two_bridge.qmix import QMIXTrainer

CONFIG_FILE, LOG_FILE = "config.json", "checkpoints.csv"
STATE_DIR = "state"  # the whole trainer state, newest only, to resume from
LOG_COLUMNS = ["steps", *(name for name in OUTCOMES if name != "running"), "win rate", "seconds"]
EVAL_TAG = 1  # folded into the run's seed for its evaluation starts


def trainer_for(config: BridgeConfig) -> PPOTrainer | QMIXTrainer:
    return QMIXTrainer(config) if config.algo == "qmix" else PPOTrainer(config)


def evaluation_outcomes(config: BridgeConfig, policy_for: Callable[[Any], Policy]) -> jax.Array:
    """Outcome codes [eval_episodes] of `policy_for(env)` from the run's evaluation starts: the
    same episodes every checkpoint of a run with `config` is scored on (a reference policy, a
    random team say, can be scored on them too)."""
    env = make_env(config, config.eval_episodes)
    key = jax.random.fold_in(jax.random.key(config.seed), EVAL_TAG)
    return run_episodes(env, policy_for(env), key)[0]


def evaluator(config: BridgeConfig, trainer: PPOTrainer | QMIXTrainer) -> Any:
    """`evaluate(params) -> outcome codes [eval_episodes]`, compiled once for the run."""
    return jax.jit(lambda params: evaluation_outcomes(config, lambda env: trainer.greedy(params)))


def outcome_row(steps: int, outcomes: np.ndarray) -> dict[str, float]:
    """A checkpoint's log row: the share of each outcome and the win rate."""
    shares = {name: float(np.mean(outcomes == code)) for code, name in enumerate(OUTCOMES)}
    wins = np.isin(outcomes, [NAVIGATION_WIN, COMBAT_WIN])
    return {"steps": steps, **{k: v for k, v in shares.items() if k != "running"},
            "win rate": float(wins.mean())}  # fmt: skip


@functools.lru_cache(maxsize=4)
def _programs(config: BridgeConfig) -> tuple[PPOTrainer | QMIXTrainer, Any]:
    """The trainer and evaluator of `config`, compiled once for the runs that share them (a
    run and its resumption; their length and save cadence do not enter the programs)."""
    trainer = trainer_for(config)
    return trainer, evaluator(config, trainer)


def train(
    config: BridgeConfig,
    run_dir: str | Path,
    progress: bool = True,
    resume: bool = False,
    tensorboard: bool = False,
) -> pd.DataFrame:
    """Train `config` into `run_dir`; returns the checkpoint log (one row per checkpoint).

    The whole trainer state is saved to `run_dir/state` every `resume_every` checkpoints and at
    the end (the newest only). With `resume`, the run continues from that state, and its log and
    checkpoints are exactly those of the uninterrupted run (`seconds` sums the sessions' training
    time). `tensorboard`: also write each update's losses and each checkpoint's outcome shares
    into `run_dir/tensorboard` (needs `marl-bgs-train[tensorboard]`)."""
    run_dir = Path(run_dir)
    trainer, evaluate = _programs(dataclasses.replace(config, total_steps=1, resume_every=1))
    held = [name for name in ("checkpoints", STATE_DIR) if (run_dir / name).exists()]
    if held and not resume:
        raise ConfigError(
            f"run_dir: {run_dir} already holds a run ({held[0]}/); continue it with "
            f"`marl-bgs-train resume {run_dir}` or train into another folder"
        )
    mgr = checkpoints.manager(run_dir, keep=None)
    states = checkpoints.manager(run_dir, keep=1, folder=STATE_DIR)
    state: Any
    if resume:
        logged = _log_rows(run_dir, config.checkpoint_every)  # a bad log fails before the restore
        state = checkpoints.restore(
            states, jax.eval_shape(trainer.init, jax.random.key(config.seed))
        )
        steps = int(state.steps)
        rows = logged[: steps // config.checkpoint_every]
        if len(rows) < steps // config.checkpoint_every:
            raise ConfigError(
                f"run_dir: {run_dir / LOG_FILE} holds {len(rows)} checkpoint rows; the saved "
                f"state is at step {steps} and needs {steps // config.checkpoint_every}"
            )
        for saved in mgr.all_steps():
            if saved > steps:  # saved after the state: the run repeats them
                mgr.delete(saved)
    else:
        run_dir.mkdir(parents=True, exist_ok=True)
        state, steps, rows = trainer.init(jax.random.key(config.seed)), 0, []
    (run_dir / CONFIG_FILE).write_text(json.dumps(dataclasses.asdict(config), indent=2) + "\n")
    writer = tensorboard_writer(run_dir) if tensorboard else None
    every = config.checkpoint_every
    next_save = (steps // every + 1) * every
    started = time.perf_counter() - (rows[-1]["seconds"] if rows else 0.0)
    name = f"{config.algo} {config.variant} seed {config.seed}"
    status = "compiling"
    with progress_bar(progress, config.total_steps, name, "steps", start=steps, status=status,
                      transient=False) as show:  # fmt: skip
        while steps < config.total_steps:
            state, stats = trainer.update(state)
            steps, save_state = int(state.steps), False
            if writer is not None:
                for key, value in jax.device_get(stats).items():
                    writer.add_scalar(f"train/{key}", float(value), global_step=steps)
            while steps >= next_save:
                mgr.save(next_save, args=ocp.args.StandardSave(state.params), force=True)
                row = outcome_row(next_save, np.asarray(evaluate(state.params)))
                row["seconds"] = time.perf_counter() - started
                rows.append(row)
                pd.DataFrame(rows).to_csv(run_dir / LOG_FILE, index=False)
                if writer is not None:
                    for key, value in row.items():
                        writer.add_scalar(
                            f"eval/{key.replace(' ', '_')}", value, global_step=next_save
                        )
                    writer.flush()
                status = f"eval win {row['win rate']:.0%}"
                save_state |= (next_save // every) % config.resume_every == 0
                next_save += every
            if save_state:  # after all of this update's checkpoints, so the log holds them
                checkpoints.save(states, state, steps)
            shown = min(steps, config.total_steps)
            show(shown, shown, status)
    if states.latest_step() != steps:
        checkpoints.save(states, state, steps)
    mgr.wait_until_finished()
    if writer is not None:
        writer.close()
    return pd.DataFrame(rows)


def resume(
    run_dir: str | Path,
    total_steps: int | None = None,
    progress: bool = True,
    tensorboard: bool = False,
) -> pd.DataFrame:
    """Continue the run in `run_dir` from its newest saved state, to its own total or to a
    larger `total_steps` (the same as a run started with that total)."""
    config = load_config(run_dir)
    if total_steps is not None:
        if total_steps < config.total_steps:
            raise ConfigError(
                f"steps: {total_steps:,} is below the run's total of {config.total_steps:,} "
                "environment steps; allowed: a larger total"
            )
        config = paper_config(**{**dataclasses.asdict(config), "total_steps": total_steps})
    return train(config, run_dir, progress=progress, resume=True, tensorboard=tensorboard)


def _log_rows(run_dir: Path, every: int) -> list[dict[str, Any]]:
    """The checkpoint log's rows, checked: its columns, one row per checkpoint (`every` steps
    apart, from the first), shares in [0, 1] and seconds >= 0 (none before the first
    checkpoint)."""
    path = run_dir / LOG_FILE
    if not path.exists():
        return []
    try:
        log = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError, pd.errors.ParserError) as err:
        raise ConfigError(f"run_dir: {path} is not a checkpoint log ({err})") from None
    if list(log.columns) != LOG_COLUMNS:
        raise ConfigError(
            f"run_dir: {path} is not a checkpoint log: columns {shown(list(log.columns), 120)}, "
            f"expected {LOG_COLUMNS}"
        )
    rows = []
    for i, record in enumerate(log.to_dict("records"), start=1):
        row: dict[str, Any] = {}
        for name, text in record.items():
            value = _number(text)
            high = math.inf if name in ("steps", "seconds") else 1.0
            if value is None or not 0.0 <= value <= high:
                raise ConfigError(
                    f"run_dir: {path} row {i}, {name}: expected a number in [0, {high}], "
                    f"got {shown(text, 60)}"
                )
            row[str(name)] = value
        if row["steps"] != i * every:
            raise ConfigError(
                f"run_dir: {path} row {i}, steps: expected {i * every} (checkpoints every "
                f"{every}), got {shown(record['steps'], 60)}"
            )
        rows.append({**row, "steps": int(row["steps"])})
    return rows


def _number(text: Any) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def is_run(run_dir: str | Path) -> bool:
    """Whether `run_dir` holds a Two-Bridge run (its config names a Two-Bridge variant)."""
    try:
        data = json.loads((Path(run_dir) / CONFIG_FILE).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("variant") in VARIANTS


def load_config(run_dir: str | Path) -> BridgeConfig:
    """The config a run was started with, validated: every setting must be there (but those
    added since, `ADDED_SETTINGS`, which take their defaults), and none unknown."""
    path = Path(run_dir) / CONFIG_FILE
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"run_dir: {path} not found (not a Two-Bridge run)") from None
    except (OSError, ValueError) as err:  # a folder, unreadable bytes, not JSON
        raise ConfigError(f"run_dir: {path} is not a valid Two-Bridge config ({err})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"run_dir: {path} is not a valid Two-Bridge config (not an object)")
    names = [f.name for f in dataclasses.fields(BridgeConfig)]
    missing = [name for name in names if name not in data and name not in ADDED_SETTINGS]
    if missing:
        raise ConfigError(f"{missing[0]}: missing from {path}")
    return paper_config(**data)


def load_policy(run_dir: str | Path, step: int | None = None) -> Policy:
    """The greedy policy of a run's checkpoint (default: its newest)."""
    config = load_config(run_dir)
    trainer = trainer_for(config)
    like = jax.eval_shape(trainer.init, jax.random.key(0)).params
    mgr = checkpoints.manager(run_dir, keep=None)
    step = mgr.latest_step() if step is None else step
    if step is None:
        raise ConfigError(f"run_dir: no checkpoint under {mgr.directory}")
    target = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), like)
    params = mgr.restore(step, args=ocp.args.StandardRestore(target))
    return trainer.greedy(params)
