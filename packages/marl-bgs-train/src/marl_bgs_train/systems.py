"""Trained runs as evaluation Systems: `ckpt:RUN_DIR` (newest checkpoint) or `ckpt:RUN_DIR@N`
(the checkpoint after update N), usable wherever a System name is (`marl-bgs-eval play
ckpt:runs/ippo tdm-beta`, `marl_bgs_eval.get_system`)."""

from __future__ import annotations

from marl_bgs import ConfigError
from marl_bgs_eval import EvalError, System
from marl_bgs_train.runs import run_system


def checkpoint_system(argument: str) -> System:
    """The System of a saved run: `RUN_DIR` or `RUN_DIR@UPDATE`; actions are sampled, as the
    baselines play."""
    path, sep, step = argument.rpartition("@") if "@" in argument else (argument, "", "")
    if sep and not step.isdecimal():
        raise EvalError(f"system: ckpt:{argument}: expected RUN_DIR@UPDATE with a number")
    try:
        return run_system(path, int(step) if sep else None)
    except ConfigError as err:
        raise EvalError(f"system: ckpt:{argument}: {err}") from None
