"""Batches of runs (issue 44): seeds and a sweep of sweepable settings train as one program, each
run in its own folder; run i equals the same config trained alone; a stopped batch resumes every
run exactly; `batch.json` is checked like every run file (test_fuzz_run_files.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import numpy as np
import pytest
from typer.testing import CliRunner

from marl_bgs import ConfigError
from marl_bgs_eval import get_system
from marl_bgs_train import checkpoints, make_train
from marl_bgs_train.batch import (
    CURVES,
    SUITE,
    Run,
    is_batch,
    load_batch,
    plan,
    plot_suite,
    programs,
    train_batch,
)
from marl_bgs_train.cli import _sweep, app
from marl_bgs_train.runs import train_runs
from marl_bgs_train.testing import assert_trees_equal, tiny_args, tiny_config

CONFIG = tiny_config("ippo-rnn")  # two updates of 4 games x 4 ticks
SWEEP = {"entropy_coef": ["0.01", "0.05"]}


def _steps(run: Run, total: int) -> Run:
    return dataclasses.replace(run, config=dataclasses.replace(run.config, total_steps=total))


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Run], Path, list]:
    runs = plan(CONFIG, [0, 1], SWEEP)
    out = tmp_path_factory.mktemp("batch")
    return runs, out, train_batch(runs, out, progress=False, save_every=1)


def test_a_plan_is_every_swept_value_with_every_seed():
    runs = plan(CONFIG, [0, 1], SWEEP)
    assert [r.name for r in runs] == [
        "entropy_coef=0.01-s0", "entropy_coef=0.01-s1", "entropy_coef=0.05-s0",
        "entropy_coef=0.05-s1",
    ]  # fmt: skip
    assert [r.config.entropy_coef for r in runs] == [0.01, 0.01, 0.05, 0.05]
    assert [r.seed for r in runs] == [0, 1, 0, 1]
    assert [r.name for r in plan(CONFIG, [3])] == ["s3"]
    with pytest.raises(ConfigError, match=r"hiden: unknown setting; known: .*hidden"):
        plan(CONFIG, [0], {"hiden": ["8", "16"]})
    maps = plan(CONFIG, [0], {"game.maps": ["0,1", "2,3", "0,1,2,3,4,5,6,7,8,9,10,11"]})
    assert [r.name for r in maps] == ["game.maps=0,1-s0", "game.maps=2,3-s0", "game.maps=v2-s0"]
    with pytest.raises(ConfigError, match="seeds: distinct"):
        plan(CONFIG, [1, 1])
    with pytest.raises(ConfigError, match="clip"):
        plan(CONFIG, [0], {"clip": ["-1"]})  # each swept value is checked


def test_runs_share_a_program_unless_a_setting_changes_its_shapes():
    """Learner settings, the reward's shaping weights and layouts of one size are data: one
    program. Another network width, layouts of another size or another opponent mix (it sizes
    the opponents' slices of the games) each make a program of their own."""
    reward = dataclasses.replace(CONFIG.game.reward, score_shaping=0.1)
    shaped = tiny_config("ippo-rnn", reward=reward)
    data = {"entropy_coef": ["0.01", "0.05"], "game.maps": ["0,3", "1,2"],
            "game.reward.score_shaping": ["0.1", "0.5"]}  # fmt: skip
    assert programs(plan(shaped, [0, 1], data)) == [list(range(16))]
    assert programs(plan(CONFIG, [0], {"hidden": ["8", "16"]})) == [[0], [1]]
    assert programs(plan(CONFIG, [0], {"game.maps": ["0,3", "1", "2,4"]})) == [[0, 2], [1]]
    mixes = plan(CONFIG, [0, 1], {"opponents.current": ["0.4", "1.0"]})
    assert programs(mixes) == [[0, 1], [2, 3]]
    # shaping off (weight 0) is another program than shaping on: its terms are not computed
    assert programs(plan(CONFIG, [0], {"game.reward.score_shaping": ["0", "0.2"]})) == [[0], [1]]


def test_each_run_of_a_batch_equals_the_run_trained_alone(batch):
    # vmap batches the matrix products and sums; XLA's CPU backend may add them in another order,
    # so floats agree to rounding (1e-5), and everything the games decide agrees exactly.
    runs, _, states = batch
    for i in (1, 2):
        assert_trains_as_alone(runs[i], states[i])


def assert_trains_as_alone(run: Run, state: object) -> None:
    """`state` (a run's from a batch) equals `run`'s config trained alone from its seed: floats
    to rounding, everything else exactly."""
    alone, _ = make_train(run.config)(jax.random.key(run.seed))
    for a, b in zip(jax.tree.leaves(alone), jax.tree.leaves(state), strict=True):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
        else:
            np.testing.assert_array_equal(a, b)


@pytest.fixture(scope="module")
def data_batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Run], list]:
    """A batch over maps and the reward's shaping weight (one program), and one over the
    opponent mix (two programs, trained one after another)."""
    reward = dataclasses.replace(CONFIG.game.reward, score_shaping=0.1, approach_potential=0.2)
    shaped = tiny_config("ippo-rnn", total_steps=16, reward=reward)
    sweep = {"game.maps": ["0,3", "1,2"], "game.reward.approach_potential": ["0.1", "0.9"]}
    runs = plan(shaped, [0], sweep)
    runs += plan(shaped, [0], {"opponents.current": ["0.4", "2.0"]})
    out = tmp_path_factory.mktemp("data_batch")
    return runs, train_batch(runs, out, progress=False)


def test_layouts_shaping_and_mixes_train_as_their_runs_alone(data_batch):
    """A run of each kind (another shaping weight and other maps, neither the first of their
    program; another opponent mix, a program of its own) equals its config trained alone (to
    rounding, as above), and each run played its own maps with its own reward."""
    runs, states = data_batch
    for i in (1, 2, 5):  # each trained alone is a program of its own: a few seconds each
        assert_trains_as_alone(runs[i], states[i])
    maps = [sorted(set(np.asarray(s.env_state.map_id).tolist())) for s in states[:4]]
    assert all(set(m) <= {0, 3} for m in maps[:2])
    assert all(set(m) <= {1, 2} for m in maps[2:4])
    actors = [jax.tree.leaves(s.actor)[0] for s in states]
    assert not np.array_equal(actors[0], actors[1])  # another approach weight, same maps


def test_the_runs_differ_by_their_seed_and_setting(batch):
    _, _, states = batch
    actors = [jax.tree.leaves(s.actor)[0] for s in states]
    assert not np.array_equal(actors[0], actors[1])  # another seed
    assert not np.array_equal(actors[0], actors[2])  # another entropy coefficient


def _assert_resume_ends_as(runs: list[Run], folder: Path, states: list) -> None:
    """The batch's runs in `folder`, resumed to their end, equal `states` (the whole runs)."""
    resumed = train_runs(
        [r.config for r in runs], [r.seed for r in runs], [folder / r.name for r in runs],
        resume=True, progress=False,
    )  # fmt: skip
    for a, b in zip(resumed, states, strict=True):
        assert_trees_equal(a, b)


def test_a_stopped_batch_resumes_every_run_exactly(batch, tmp_path):
    runs, _, states = batch
    short = [_steps(r, 16) for r in runs]
    train_batch(short, tmp_path, progress=False)  # one update, then stopped
    _assert_resume_ends_as(runs, tmp_path, states)


def test_a_batch_stopped_at_its_deadline_is_saved_and_resumes_exactly(batch, tmp_path):
    runs, _, states = batch
    saved = []
    train_batch(runs, tmp_path, progress=False, save_every=50, deadline=0.0,
                on_save=lambda i, update: saved.append(update))  # fmt: skip
    assert saved == []  # a checkpoint for resuming, not a scheduled one
    for r in runs:
        assert checkpoints.manager(tmp_path / r.name, keep=None).all_steps() == [1]
        assert len((tmp_path / r.name / "log.csv").read_text().splitlines()) == 2  # header + 1
    _assert_resume_ends_as(runs, tmp_path, states)


def test_every_run_is_a_folder_of_its_own(batch):
    runs, out, _ = batch
    assert is_batch(out)
    assert (out / CURVES).is_file()
    assert load_batch(out) == runs
    for r in runs:
        assert checkpoints.load_config(out / r.name) == r.config
        assert len((out / r.name / "log.csv").read_text().splitlines()) == 3  # header + 2
        assert checkpoints.manager(out / r.name, keep=None).all_steps() == [1, 2]
    assert get_system(f"ckpt:{out / runs[0].name}").mode == "tdm-v2"


def test_the_command_line_trains_a_batch_and_resumes_it(batch, tmp_path):
    runs, _, states = batch
    cli = CliRunner()
    args = ["ippo-rnn", "--seeds", "2", "--sweep", "entropy_coef=0.01,0.05", "--out", str(tmp_path)]
    done = cli.invoke(app, [*args, *tiny_args()])
    assert done.exit_code == 0, done.output
    assert load_batch(tmp_path) == [_steps(r, 16) for r in runs]
    longer = cli.invoke(app, ["resume", str(tmp_path), "--steps", "32", "--quiet"])
    assert longer.exit_code == 0, longer.output
    for r, want in zip(runs, states, strict=True):
        like = jax.eval_shape(make_train(r.config).init, jax.random.key(0))
        got = checkpoints.restore(checkpoints.manager(tmp_path / r.name), like)
        assert_trees_equal(got, want)  # the same as the uninterrupted batch
    bad = cli.invoke(app, ["ippo-rnn", "--sweep", "hiden=8,16", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2
    assert "hiden: unknown setting; known:" in bad.stderr
    # values split at ";" where one is a list, layouts read with the layout grammar
    assert _sweep(["game.maps=0,3;1-2", "clip=0.1,0.2"], "tdm") == {
        "game.maps": ["0,3", "1,2"], "clip": ["0.1", "0.2"],
    }  # fmt: skip
    variants = _sweep(["game.variants=V1_Navigate;V1_Base,V1_Combat"], "two-bridge")
    assert variants == {"game.variants": ["2", "0,1"]}


def test_the_command_line_stops_at_a_time_limit_and_resume_finishes_it(batch, tmp_path):
    runs, _, states = batch
    cli = CliRunner()
    args = ["ippo-rnn", "--seeds", "2", "--sweep", "entropy_coef=0.01,0.05", "--out", str(tmp_path)]
    # two updates asked, past the limit at once: one update trained and saved
    stopped = cli.invoke(app, [*args, *tiny_args(32), "--hours", "0"])
    assert stopped.exit_code == 0, stopped.output
    said = " ".join(stopped.output.split())  # as rich wraps it
    assert "stopped after 0.0 hours: 4 of 4 runs not finished" in said
    assert "continue: marl-bgs-train resume" in said
    for r in runs:
        assert checkpoints.manager(tmp_path / r.name, keep=None).all_steps() == [1]
    done = cli.invoke(app, ["resume", str(tmp_path), "--quiet", "--hours", "0"])
    assert done.exit_code == 0, done.output
    assert "stopped" not in done.output  # its last update was the one it trained
    for r, want in zip(runs, states, strict=True):
        like = jax.eval_shape(make_train(r.config).init, jax.random.key(0))
        got = checkpoints.restore(checkpoints.manager(tmp_path / r.name), like)
        assert_trees_equal(got, want)


def test_a_suite_trains_each_learner_as_a_batch_and_draws_them_in_one_figure(tmp_path):
    # Four seeds of the tiny recurrent IPPO: the same program as the batch above (its four runs).
    cli = CliRunner()
    done = cli.invoke(app, ["suite", "--seeds", "4", "--learner", "ippo-rnn", "--out",
                            str(tmp_path), *tiny_args()])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert (tmp_path / SUITE).is_file()
    assert [r.name for r in load_batch(tmp_path / "ippo-rnn")] == ["s0", "s1", "s2", "s3"]
    assert plot_suite(tmp_path, ["ippo-rnn"]) == tmp_path / SUITE
    bad = cli.invoke(app, ["suite", "--learner", "ppo", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2
    assert "--learner 'ppo': allowed for tdm" in bad.stderr
    # --set applies to the learners that have the setting; one that none has is refused
    bad = cli.invoke(app, ["suite", "--learner", "ippo-rnn", "--set", "replay_rows=96",
                           "--out", str(tmp_path / "x")])  # fmt: skip
    assert bad.exit_code == 2
    assert "replay_rows: unknown setting; known:" in bad.stderr
