"""A Two-Bridge training run as the paper runs one: train for `total_steps` environment steps,
and every `checkpoint_every` steps save the weights (orbax) and play `eval_episodes`
deterministic evaluation episodes, logging their outcome distribution to `checkpoints.csv`.

The evaluation episodes start from one fixed key for the whole run (the same 32 starts at every
checkpoint), and the evaluation program takes the weights as data, so it compiles once.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp
import pandas as pd
from rich.progress import Progress

from marl_bgs import ConfigError, Policy
from marl_bgs.two_bridge import OUTCOMES
from marl_bgs.two_bridge.layout import COMBAT_WIN, NAVIGATION_WIN
from marl_bgs_eval.episodes import run_episodes
from marl_bgs_train import checkpoints
from marl_bgs_train.runs import progress_columns
from marl_bgs_train.two_bridge.common import make_env
from marl_bgs_train.two_bridge.config import BridgeConfig, paper_config
from marl_bgs_train.two_bridge.ppo import PPOTrainer
from marl_bgs_train.two_bridge.qmix import QMIXTrainer

CONFIG_FILE, LOG_FILE = "config.json", "checkpoints.csv"
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


def train(config: BridgeConfig, run_dir: str | Path, progress: bool = True) -> pd.DataFrame:
    """Train `config` into `run_dir`; returns the checkpoint log (one row per checkpoint)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / CONFIG_FILE).write_text(json.dumps(dataclasses.asdict(config), indent=2) + "\n")
    trainer = trainer_for(config)
    evaluate = evaluator(config, trainer)
    mgr = checkpoints.manager(run_dir, keep=None)
    state: Any = trainer.init(jax.random.key(config.seed))
    rows: list[dict[str, float]] = []
    next_save, started = config.checkpoint_every, time.perf_counter()
    columns = progress_columns()
    with Progress(*columns, disable=not progress) as bar:
        name = f"{config.algo} {config.variant} seed {config.seed}"
        task = bar.add_task(name, total=config.total_steps, status="compiling")
        steps = 0
        while steps < config.total_steps:
            state, _ = trainer.update(state)
            steps = int(state.steps)
            while steps >= next_save:
                mgr.save(next_save, args=ocp.args.StandardSave(state.params), force=True)
                row = outcome_row(next_save, np.asarray(evaluate(state.params)))
                row["seconds"] = time.perf_counter() - started
                rows.append(row)
                pd.DataFrame(rows).to_csv(run_dir / LOG_FILE, index=False)
                bar.update(task, status=f"eval win {row['win rate']:.0%}")
                next_save += config.checkpoint_every
            bar.update(task, completed=min(steps, config.total_steps))
    mgr.wait_until_finished()
    return pd.DataFrame(rows)


def load_config(run_dir: str | Path) -> BridgeConfig:
    """The config a run was started with, validated."""
    path = Path(run_dir) / CONFIG_FILE
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            raise TypeError("not an object")
        return paper_config(**data)
    except FileNotFoundError:
        raise ConfigError(f"run_dir: {path} not found (not a Two-Bridge run)") from None
    except (ValueError, TypeError) as err:
        raise ConfigError(f"run_dir: {path} is not a valid Two-Bridge config ({err})") from None


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
