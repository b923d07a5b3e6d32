"""Tiny configs for tests and smoke runs: every code path of a baseline, compiled in seconds
rather than minutes of running."""

from __future__ import annotations

import dataclasses
from typing import Any

from marl_bgs_train.config import PRESETS, LearnerConfig, OpponentMix, QMIXConfig


def tiny_config(preset: str = "ippo-rnn", **changes: Any) -> Any:
    """`preset` at test size: 4 games x 4 ticks (two updates), 16 hidden units, one epoch of two
    minibatches (QMIX: a replay of two rollouts, two gradient steps of 4 sequences), maps 0 and
    3, a 6-tick limit (games end inside a run), every opponent category weighted (a copy saved
    every update, `rush` as the scripted team); `changes` override."""
    preset_config: LearnerConfig = PRESETS[preset]
    if isinstance(preset_config, QMIXConfig):  # a replay of two rollouts, learning from the first
        learner = {"replay_rows": 32, "batch_sequences": 4, "gradient_steps": 2,
                   "learning_starts": 16, "target_every": 2, "mixer_embed": 8,
                   "hypernet_hidden": 8}  # fmt: skip
    else:
        learner = {"epochs": 1, "minibatches": 2}
    base = dataclasses.replace(
        preset_config,
        **learner,
        num_envs=4,
        rollout=4,
        hidden=16,
        maps=(0, 3),
        total_steps=32,
        tick_limit=6,
        opponents=OpponentMix(
            current=0.4,
            copies=0.2,
            frozen=0.2,
            scripted=0.2,
            num_copies=2,
            copy_every=16,
            scripted_teams=("rush",),
        ),
    )
    return dataclasses.replace(base, **changes)
