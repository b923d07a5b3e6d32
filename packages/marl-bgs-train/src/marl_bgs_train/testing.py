"""Tiny configs for tests and smoke runs: every code path of a baseline, compiled in seconds
rather than minutes of running."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import jax
import numpy as np

from marl_bgs_train.config import LearnerConfig, OpponentMix, QMIXConfig, presets


def tiny_args(steps: int = 16) -> list[str]:
    """`tiny_config("ippo-rnn")` as the training commands' options (the same compiled program),
    trained for `steps` game steps (16 an update)."""
    return [
        "--envs", "4", "--rollout", "4", "--steps", str(steps), "--quiet", "--set", "epochs=1",
        "--set", "minibatches=2", "--set", "hidden=16", "--set", "game.maps=0,3",
        "--set", "game.tick_limit=6", "--set", "opponents.current=0.4",
        "--set", "opponents.copies=0.2", "--set", "opponents.frozen=0.2",
        "--set", "opponents.scripted=0.2", "--set", "opponents.num_copies=2",
        "--set", "opponents.copy_every=16", "--set", "opponents.scripted_teams=rush",
    ]  # fmt: skip


def tiny_config(preset: str = "ippo-rnn", **changes: Any) -> Any:
    """Team Deathmatch's `preset` at test size: 4 games x 4 ticks (two updates), 16 hidden
    units, one epoch of two minibatches (QMIX: a replay of two rollouts, two gradient steps of 4
    sequences), maps 0 and 3, a 6-tick limit (games end inside a run), every opponent category
    weighted (a copy saved every update, `rush` as the scripted team); `changes` override (a
    name of the game section, `maps` say, changes it there)."""
    preset_config: LearnerConfig = presets("tdm")[preset]
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
        game=dataclasses.replace(preset_config.game, maps=(0, 3), tick_limit=6),
        total_steps=32,
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
    own = {f.name for f in dataclasses.fields(base.game)}
    game = dataclasses.replace(base.game, **{k: v for k, v in changes.items() if k in own})
    rest = {k: v for k, v in changes.items() if k not in own}
    return dataclasses.replace(base, **{"game": game, **rest})


def assert_trees_equal(a: Any, b: Any) -> None:
    """Every leaf of two pytrees equal, bit for bit."""
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def assert_resumes_exactly(
    trainer: Any, key: jax.Array, done: int, run_dir: Path, whole: Any, last: Any
) -> None:
    """`done` updates from `key`, saved with the run's config, restored into a fresh target
    and run one more update, equal the uninterrupted run's state `whole` (made by one-update
    calls) and its last update's metrics `last`; the config reads back equal.

    The updates are one-update calls too, the program the uninterrupted run used: a program of
    several updates may round gradients an ulp apart at the test sessions' lowest XLA
    optimisation level, which says nothing about saving and restoring."""
    from marl_bgs_train import checkpoints

    state = jax.jit(trainer.init)(key)
    for _ in range(done):
        state, _ = trainer.run(state, 1)
    checkpoints.save(checkpoints.manager(run_dir), state)
    checkpoints.save_config(run_dir, trainer.config)
    like = jax.eval_shape(trainer.init, jax.random.key(0))
    restored = checkpoints.restore(checkpoints.manager(run_dir), like)
    restored, metrics = trainer.run(restored, 1)
    assert_trees_equal(restored, whole)
    assert_trees_equal(metrics, last)
    assert checkpoints.load_config(run_dir) == trainer.config


def tensorboard_scalars(folder: Path) -> list[tuple[str, int, float]]:
    """(tag, step, value) of every scalar in a folder's TensorBoard event files, read with
    tensorboardX's protobufs (TFRecord framing: length, its CRC, the Event proto, its CRC)."""
    import struct

    from tensorboardX.proto import event_pb2

    found = []
    for path in sorted(Path(folder).glob("events.out.tfevents.*")):
        data, at = path.read_bytes(), 0
        while at < len(data):
            (length,) = struct.unpack("<Q", data[at : at + 8])
            event = event_pb2.Event.FromString(data[at + 12 : at + 12 + length])  # pyright: ignore[reportAttributeAccessIssue]
            at += 12 + length + 4
            found += [(v.tag, event.step, v.simple_value) for v in event.summary.value]
    return found
