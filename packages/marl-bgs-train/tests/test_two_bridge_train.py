"""The Two-Bridge baselines (MaskPPO, MAPPO, QMIX): settings, tiny whole runs through the command
line with checkpoints and evaluations, restored greedy policies, reward standardisation and the
replay's bookkeeping."""

from __future__ import annotations

import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import marl_bgs
from marl_bgs import ConfigError, team_inputs
from marl_bgs.two_bridge import OUTCOMES
from marl_bgs.two_bridge.views import MINIMAP_SIZE
from marl_bgs_train import checkpoints
from marl_bgs_train.cli import app
from marl_bgs_train.testing import tensorboard_scalars
from marl_bgs_train.two_bridge import run as bridge_run
from marl_bgs_train.two_bridge.common import RewardScale
from marl_bgs_train.two_bridge.config import paper_config
from marl_bgs_train.two_bridge.qmix import QMIXTrainer
from marl_bgs_train.two_bridge.run import evaluation_outcomes, load_config, load_policy, outcome_row

TINY = ["--set", "rollout=8", "--set", "minibatch=32", "--set", "checkpoint_every=64",
        "--set", "eval_episodes=4", "--set", "learning_starts=32", "--set", "train_every=2",
        "--set", "buffer_size=256"]  # fmt: skip


def test_paper_settings_per_algorithm() -> None:
    assert paper_config("maskppo").entropy_coef == 0.0
    assert paper_config("maskppo").max_grad_norm == 0.5
    assert not paper_config("maskppo").reward_standardization
    assert paper_config("mappo").entropy_coef == 0.001
    assert paper_config("qmix").lr == 5e-4
    assert paper_config("mappo").checkpoint_every == 50_000
    assert paper_config("mappo").eval_episodes == 32
    # The paper's 1,536 transitions per PPO update.
    cfg = paper_config("mappo")
    assert cfg.num_envs * cfg.rollout == 1536


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"algo": "ppo"}, "algo"),
        ({"variant": "V4_Base"}, "variant"),
        ({"minibatch": 1000}, "minibatch"),
        ({"rollout": 0}, "rollout"),
        ({"gamma": 1.5}, "gamma"),
        ({"lerning_rate": 1.0}, "lerning_rate"),
    ],
)
def test_bad_settings_name_the_field(overrides: dict, field: str) -> None:
    algo = overrides.pop("algo", "mappo")
    with pytest.raises(ConfigError, match=field):
        paper_config(algo, **overrides)


def test_reward_scale_is_the_running_std_of_discounted_returns() -> None:
    rng = np.random.default_rng(0)
    rewards = rng.normal(size=(50, 4)).astype(np.float32)
    scale = RewardScale.create(4)
    returns, seen = np.zeros(4), []
    for r in rewards:
        scale = scale.update(jnp.asarray(r), jnp.zeros(4, bool), 0.9)
        returns = returns * 0.9 + r
        seen.append(returns.copy())
    want = np.std(np.concatenate(seen))
    assert float(scale.scale(jnp.float32(1.0))) == pytest.approx(1.0 / want, rel=1e-3)


@pytest.mark.parametrize("algo", ["maskppo", "mappo", "qmix"])
def test_a_tiny_run_checkpoints_evaluates_and_restores(algo: str, tmp_path) -> None:
    args = ["two-bridge", "--algo", algo, "--variant", "V1_Navigate", "--steps", "128",
            "--envs", "8", "--out", str(tmp_path), "--quiet", *TINY]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    run = tmp_path / f"{algo}-V1_Navigate-s0"
    log = pd.read_csv(run / "checkpoints.csv")
    assert log["steps"].tolist() == [64, 128]
    shares = log[list(OUTCOMES[1:])]
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    np.testing.assert_allclose(log["win rate"], log["navigation win"] + log["combat win"])
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["128", "64"]
    assert load_config(run).algo == algo
    # The restored greedy policy acts legally and deterministically, and scores what the run
    # logged for it on the run's evaluation starts.
    policy = load_policy(run)
    again_row = outcome_row(
        128, np.asarray(evaluation_outcomes(load_config(run), lambda env: policy))
    )
    assert again_row == pytest.approx(log.drop(columns="seconds").iloc[-1].to_dict())
    env = marl_bgs.make("two-bridge", variant="V1_Navigate", num_envs=3)
    _, state = env.reset(jax.random.key(1))
    (inputs,) = team_inputs(env, state)
    keys = jax.random.split(jax.random.key(2), 3)
    actions, _ = policy.act(keys, (), inputs)
    again, _ = policy.act(jax.random.split(jax.random.key(3), 3), (), inputs)
    assert actions.shape == (3, 5, 1)
    np.testing.assert_array_equal(actions, again)
    legal = np.take_along_axis(np.asarray(inputs.masks.flat), np.asarray(actions), -1)
    assert legal.all()


def test_unknown_run_dir_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(ConfigError, match="not a Two-Bridge run"):
        load_config(tmp_path)


def test_qmix_replay_holds_each_step_and_its_successor() -> None:
    cfg = paper_config("qmix", variant="V1_Base", num_envs=4, buffer_size=40, train_every=3,
                       learning_starts=10_000)  # fmt: skip
    trainer = QMIXTrainer(cfg)
    state = trainer.init(jax.random.key(0))
    first = trainer.env.observe(state.game)[:, 0]
    state, _ = trainer.update(state)
    rp = state.replay
    assert int(rp.filled) == 3
    assert int(rp.cursor) == 3
    assert int(state.steps) == 12
    np.testing.assert_array_equal(np.asarray(rp.obs_map[0], np.float32), first[:, :MINIMAP_SIZE])
    np.testing.assert_allclose(rp.obs_rest[0], first[:, MINIMAP_SIZE:])
    # Row 1 is the state after row 0's step (no game ended in three steps).
    assert not np.asarray(rp.done[:3]).any()
    assert not np.array_equal(rp.obs_rest[1], rp.obs_rest[0])
    assert int(state.updates) == 0  # learning waits for learning_starts


def _final_state(run, config):
    trainer = bridge_run.trainer_for(config)
    like = jax.eval_shape(trainer.init, jax.random.key(config.seed))
    states = checkpoints.manager(run, keep=1, folder=bridge_run.STATE_DIR)
    return checkpoints.restore(states, like)


@pytest.mark.parametrize("algo", ["maskppo", "qmix"])
def test_a_stopped_run_resumes_to_the_uninterrupted_run(algo: str, tmp_path) -> None:
    config = paper_config(algo, variant="V1_Navigate", num_envs=8, total_steps=192,
                          checkpoint_every=64, eval_episodes=4, rollout=8, minibatch=32,
                          learning_starts=32, train_every=2, buffer_size=256)  # fmt: skip
    whole = bridge_run.train(config, tmp_path / "whole", progress=False)
    run = tmp_path / "parts"
    bridge_run.train(
        config.__class__(**{**config.__dict__, "total_steps": 64}), run, progress=False
    )
    shutil.copytree(run / bridge_run.STATE_DIR, tmp_path / "state-64")
    # Stopped at 64 steps, resumed to a larger total, as if started with it.
    parts = bridge_run.resume(run, total_steps=192, progress=False)
    pd.testing.assert_frame_equal(parts.drop(columns="seconds"), whole.drop(columns="seconds"))
    assert load_config(run).total_steps == 192
    # A crash after the state at 64 was saved: the checkpoints past it are played again.
    shutil.rmtree(run / bridge_run.STATE_DIR)
    shutil.copytree(tmp_path / "state-64", run / bridge_run.STATE_DIR)
    again = bridge_run.resume(run, progress=False)
    pd.testing.assert_frame_equal(again.drop(columns="seconds"), whole.drop(columns="seconds"))
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["128", "192", "64"]
    final, want = _final_state(run, config), _final_state(tmp_path / "whole", config)
    jax.tree.map(np.testing.assert_array_equal, jax.tree.map(np.asarray, final.params),
                 jax.tree.map(np.asarray, want.params))  # fmt: skip
    assert int(final.steps) == int(want.steps) == 192


def test_a_run_folder_is_never_trained_over_and_resume_refuses_a_smaller_total_or_damaged_log(
    tmp_path,
) -> None:
    config = paper_config("qmix", variant="V1_Navigate", num_envs=8, total_steps=64,
                          checkpoint_every=32, eval_episodes=2, learning_starts=32,
                          train_every=2, buffer_size=256)  # fmt: skip
    bridge_run.train(config, tmp_path, progress=False)
    with pytest.raises(
        ConfigError, match=r"already holds a run \(checkpoints/\); continue it with"
    ):
        bridge_run.train(config, tmp_path, progress=False)  # nothing is overwritten
    with pytest.raises(ConfigError, match="steps: 32 is below the run's total of 64"):
        bridge_run.resume(tmp_path, total_steps=32, progress=False)
    (tmp_path / bridge_run.LOG_FILE).write_text("steps,win\n1,2\n")
    with pytest.raises(ConfigError, match="not a checkpoint log"):
        bridge_run.resume(tmp_path, total_steps=128, progress=False)


def test_a_run_logs_for_tensorboard_through_the_command_line(tmp_path) -> None:
    args = ["two-bridge", "--algo", "qmix", "--variant", "V1_Navigate", "--steps", "64",
            "--envs", "8", "--out", str(tmp_path), "--quiet", "--tensorboard", *TINY]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    run = tmp_path / "qmix-V1_Navigate-s0"
    scalars = tensorboard_scalars(run / "tensorboard")
    assert {"eval/win_rate", "train/episodes"} <= {tag for tag, _, _ in scalars}
    log = pd.read_csv(run / bridge_run.LOG_FILE)
    logged = [(step, value) for tag, step, value in scalars if tag == "eval/win_rate"]
    assert logged == [
        (s, pytest.approx(v)) for s, v in zip(log["steps"], log["win rate"], strict=True)
    ]
    # and `resume` continues it from the command line, to a larger total
    result = CliRunner().invoke(app, ["resume", str(run), "--steps", "128", "--quiet"])
    assert result.exit_code == 0, result.output
    assert pd.read_csv(run / bridge_run.LOG_FILE)["steps"].tolist() == [64, 128]
