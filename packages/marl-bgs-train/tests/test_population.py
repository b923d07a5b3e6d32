"""The population command: every learner at one budget, validated as it saves, the best and the
milestone checkpoints kept; stopped, it continues where it stopped, and finished, it does
nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jax
import numpy as np
import pytest
from typer.testing import CliRunner

from marl_bgs import ConfigError
from marl_bgs_train.cli import app
from marl_bgs_train.config import ValidationSettings
from marl_bgs_train.population import (
    BUDGETS,
    POPULATION_FILE,
    _complete,
    join_populations,
    learner_config,
    milestone_update,
    read_population,
    scheduled,
    train_population,
    unfinished,
)
from marl_bgs_train.runs import kept_update, load_trainer, read_log
from marl_bgs_train.testing import assert_trees_equal
from marl_bgs_train.validation import settings_for


class StoppedError(Exception):
    """The interruption: raised after the population's second update."""


@pytest.fixture(scope="module")
def stopped_then_continued(tmp_path_factory):
    """A tiny one-learner population stopped after its second update (checkpointed and
    validated), then the same command run twice more: the log rows after each."""
    out = tmp_path_factory.mktemp("pop") / "p"
    calls = []

    def stop(b: int, i: int, row: dict) -> None:
        calls.append(row)
        if len(calls) == 2:
            raise StoppedError

    with pytest.raises(StoppedError):
        train_population(out, "tiny", learners=["ippo-ff"], progress=False, on_update=stop)
    run = out / "ippo-ff" / "s0"
    stopped = read_log(run)
    train_population(out, "tiny", learners=["ippo-ff"], progress=False)
    continued = read_log(run)
    stamp = (run / "log.jsonl").stat().st_mtime_ns
    train_population(out, "tiny", learners=["ippo-ff"], progress=False)
    return out, stopped, continued, stamp


def test_a_stopped_population_continues_where_it_stopped(stopped_then_continued) -> None:
    out, stopped, continued, _ = stopped_then_continued
    assert [r["update"] for r in stopped] == [1, 2]
    assert [r["update"] for r in continued] == [1, 2, 3]
    assert continued[:2] == stopped  # the first updates were not trained again
    run = out / "ippo-ff" / "s0"
    assert list(np.loadtxt(run / "validation.csv", delimiter=",", skiprows=1)[:, 0]) == [1, 2, 3]
    record = read_population(out)
    assert record["milestones"] == {"ippo-ff": 1}
    assert (record["budget"], record["learners"], record["seeds"]) == ("tiny", ["ippo-ff"], 1)


def test_a_finished_population_is_left_as_it_is(stopped_then_continued) -> None:
    out, _, _, stamp = stopped_then_continued
    assert (out / "ippo-ff" / "s0" / "log.jsonl").stat().st_mtime_ns == stamp


def test_the_milestone_and_the_best_are_runs_of_their_own(stopped_then_continued) -> None:
    out, *_ = stopped_then_continued
    run = out / "ippo-ff" / "s0"
    assert json.loads((run / "milestone" / "milestone.json").read_text()) == {"update": 1}
    _, kept = load_trainer(run / "milestone")
    _, original = load_trainer(run, 1)
    for a, b in zip(jax.tree.leaves(kept.actor), jax.tree.leaves(original.actor), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    best = json.loads((run / "best" / "best.json").read_text())
    table = np.loadtxt(run / "validation.csv", delimiter=",", skiprows=1, ndmin=2)
    assert best["update"] == int(table[np.argmax(table[:, 1]), 0])


def test_what_a_stop_left_undone_is_done_when_it_continues(stopped_then_continued, tmp_path):
    out, *_ = stopped_then_continued
    copy = tmp_path / "p"
    shutil.copytree(out, copy)
    run = copy / "ippo-ff" / "s0"
    # stopped after the last checkpoint's save, before its validation; and half way through
    # copying the milestone (its marker is written last)
    table = (run / "validation.csv").read_text().splitlines()
    (run / "validation.csv").write_text("\n".join(table[:-1]) + "\n")
    (run / "milestone" / "milestone.json").unlink()
    assert kept_update(run / "milestone") is None
    log = read_log(run)
    train_population(copy, "tiny", learners=["ippo-ff"], progress=False)
    assert read_log(run) == log  # nothing trained again
    assert (run / "validation.csv").read_text().splitlines() == table
    assert kept_update(run / "milestone") == 1


def test_a_time_limit_stops_the_population_saved_and_the_same_command_continues(
    stopped_then_continued, tmp_path
) -> None:
    out, *_ = stopped_then_continued
    cli = CliRunner()
    args = ["population", "--budget", "tiny", "--learner", "ippo-ff", "--out", str(tmp_path),
            "--quiet"]  # fmt: skip
    stopped = cli.invoke(app, [*args, "--hours", "0"])  # past at once: one update, saved
    assert stopped.exit_code == 0, stopped.output
    said = " ".join(stopped.output.split())  # as rich wraps it
    assert "ippo-ff not finished" in said
    assert "the same command continues" in said
    run = tmp_path / "ippo-ff" / "s0"
    assert [r["update"] for r in read_log(run)] == [1]
    assert unfinished(tmp_path) == ["ippo-ff"]
    done = cli.invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "done: ippo-ff" in done.output
    assert unfinished(tmp_path) == []
    assert [r["update"] for r in read_log(run)] == [1, 2, 3]
    _, got = load_trainer(run, 3)
    _, want = load_trainer(out / "ippo-ff" / "s0", 3)
    assert_trees_equal(got, want)  # as if never stopped
    assert (run / "validation.csv").read_text() == (out / "ippo-ff/s0/validation.csv").read_text()
    # no other learner starts after the time limit
    train_population(tmp_path / "two", "tiny", learners=["ippo-ff", "ippo-rnn"], progress=False,
                     deadline=0.0)  # fmt: skip
    assert not (tmp_path / "two" / "ippo-rnn").exists()
    assert unfinished(tmp_path / "two") == ["ippo-ff", "ippo-rnn"]


def test_populations_of_other_learners_join_into_one(stopped_then_continued, tmp_path) -> None:
    out, *_ = stopped_then_continued  # ippo-ff at the tiny budget
    other = tmp_path / "other"  # "ippo-rnn", asked for alike (its folder a copy: join reads none)
    shutil.copytree(out / "ippo-ff", other / "ippo-rnn")
    record = read_population(out)
    asked = {**record, "learners": ["ippo-rnn"], "milestones": {"ippo-rnn": 1}}
    (other / POPULATION_FILE).write_text(json.dumps(asked))
    result = CliRunner().invoke(app, ["population-join", str(tmp_path / "j"), str(out),
                                      str(other)])  # fmt: skip
    assert result.exit_code == 0, result.output
    joined = read_population(tmp_path / "j")
    assert joined["learners"] == ["ippo-rnn", "ippo-ff"]  # the presets' order
    assert joined["milestones"] == {"ippo-ff": 1, "ippo-rnn": 1}
    assert {k: v for k, v in joined.items() if k not in ("learners", "milestones")} == {
        k: v for k, v in record.items() if k not in ("learners", "milestones")
    }
    assert unfinished(tmp_path / "j") == []
    assert (tmp_path / "j" / "suite.png").is_file()
    with pytest.raises(ConfigError, match=r"out: .* exists"):
        join_populations(tmp_path / "j", [out, other])
    with pytest.raises(ConfigError, match="'ippo-ff' is in more than one"):
        join_populations(tmp_path / "k", [out, out])
    (other / POPULATION_FILE).write_text(json.dumps({**asked, "seeds": 2}))
    with pytest.raises(ConfigError, match="was asked for with other seeds"):
        join_populations(tmp_path / "k", [out, other])
    assert not (tmp_path / "k").exists()


def test_only_scheduled_checkpoints_are_validated(stopped_then_continued, tmp_path) -> None:
    out, *_ = stopped_then_continued
    copy = tmp_path / "p"
    shutil.copytree(out, copy)
    run = copy / "ippo-ff" / "s0"
    table = (run / "validation.csv").read_text().splitlines()  # updates 1, 2, 3
    (run / "validation.csv").write_text("\n".join(table[:2] + table[3:]) + "\n")  # 2 unscored
    checked = settings_for("tdm", BUDGETS["tiny"].validation)
    _complete(run, checked, 1, {1, 3})  # 2 was saved for resuming only: left unscored
    assert len((run / "validation.csv").read_text().splitlines()) == 3
    _complete(run, checked, 1, {1, 2, 3})
    assert (run / "validation.csv").read_text().splitlines() == table
    paper = learner_config("tdm", "ippo-rnn", BUDGETS["paper"])
    due = scheduled(paper, BUDGETS["paper"], 2442)
    assert min(due) == 500
    assert 2442 in due
    assert paper.num_updates in due
    assert len(due) == paper.num_updates // 500 + 2


def test_the_budgets_scale_the_milestone_with_the_run() -> None:
    paper = learner_config("tdm", "ippo-rnn", BUDGETS["paper"])
    assert (paper.total_steps, paper.num_envs) == (250_000_000, 512)
    assert milestone_update(paper, BUDGETS["paper"]) * paper.steps_per_update >= 40_000_000
    assert (milestone_update(paper, BUDGETS["paper"]) - 1) * paper.steps_per_update < 40_000_000
    cpu = learner_config("tdm", "qmix", BUDGETS["cpu"])
    assert (cpu.total_steps, cpu.num_envs, cpu.epsilon_steps) == (1_000_000, 64, 300_000)
    assert cpu.opponents.copy_every == 16_384
    ppo = learner_config("tdm", "mappo-rnn", BUDGETS["cpu"])
    assert not hasattr(ppo, "epsilon_steps")  # a tier's setting only where the learner has it


def test_bad_requests_are_refused_naming_the_field(stopped_then_continued, tmp_path) -> None:
    out, *_ = stopped_then_continued
    with pytest.raises(ConfigError, match=r"budget: expected one of \['paper', 'cpu', 'tiny'\]"):
        train_population(tmp_path / "a", "huge")
    with pytest.raises(ConfigError, match="learners: 'dqn' is not a baseline of tdm; allowed"):
        train_population(tmp_path / "b", "tiny", learners=["dqn"])
    with pytest.raises(ConfigError, match="mode: the population is Team Deathmatch's"):
        train_population(tmp_path / "g", "tiny", mode="two-bridge")
    with pytest.raises(ConfigError, match="seeds: at least 1"):
        train_population(tmp_path / "c", "tiny", seeds=0)
    with pytest.raises(ConfigError, match="no_such_setting"):
        train_population(tmp_path / "d", "tiny", overrides=["no_such_setting=1"])
    with pytest.raises(ConfigError, match="was started with other seeds"):
        train_population(out, "tiny", learners=["ippo-ff"], seeds=2, progress=False)
    other = ValidationSettings(maps=(43,), panel=("idle",), games_per_map=2, batch_size=4,
                               tick_limit=6)  # fmt: skip
    with pytest.raises(ConfigError, match="was started with other validation"):
        train_population(out, "tiny", learners=["ippo-ff"], validation=other, progress=False)
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / POPULATION_FILE).write_text(json.dumps({"mode": "tdm"}))
    with pytest.raises(ConfigError, match=r"population: .*expected the fields"):
        read_population(tmp_path / "e")
    result = CliRunner().invoke(app, ["population", "--budget", "huge", "--out",
                                      str(tmp_path / "f")])  # fmt: skip
    assert result.exit_code == 2
    assert "budget: expected one of" in result.output
    for hours in ("-1", "nan", "soon"):
        refused = CliRunner().invoke(app, ["population", "--hours", hours, "--out",
                                           str(tmp_path / "f")])  # fmt: skip
        assert refused.exit_code == 2
        assert "Invalid value for '--hours'" in refused.output
    assert not any(Path(tmp_path).glob("[abcdfg]/*"))  # nothing written by a refused request


def test_a_runs_trained_maps_are_its_maps_and_its_curriculums() -> None:
    from marl_bgs_train.tdm.game import Stage, TDMGame, trained_maps

    game = TDMGame(maps=(5, 3), curriculum=(Stage(maps=(0, 3, 1)),))
    assert trained_maps(game) == (0, 1, 3, 5)
    assert trained_maps(TDMGame(maps=(42,))) == (42,)
