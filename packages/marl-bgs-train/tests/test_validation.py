"""Validation against a panel: every saved checkpoint scored on the validation maps, the score the
mean margin over map x opponent cells (checked against evaluating the checkpoint's System
directly), the best checkpoint kept as a run of its own, test maps refused."""

from __future__ import annotations

import dataclasses
import json

import jax
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import marl_bgs
import marl_bgs_eval as ev
from marl_bgs import ConfigError, team_inputs
from marl_bgs_train import checkpoints, runs
from marl_bgs_train.cli import app
from marl_bgs_train.cli_options import validation_settings
from marl_bgs_train.config import ValidationSettings
from marl_bgs_train.testing import tiny_args, tiny_config
from marl_bgs_train.validation import (
    SETTINGS_JSON,
    VALIDATION_CSV,
    panel_cells,
    read_settings,
    validate_run,
)

SETTINGS = ValidationSettings(
    maps=(42, 44), panel=("idle", "rush"), games_per_map=2, batch_size=4, tick_limit=6
)


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    """The tiny recurrent IPPO run, checkpointed and validated after each of its two updates."""
    run_dir = tmp_path_factory.mktemp("runs") / "validated"
    runs.train_run(
        tiny_config("ippo-rnn"), run_dir, seed=3, save_every=1, progress=False,
        on_save=lambda step: validate_run(run_dir, SETTINGS, [step]),
    )  # fmt: skip
    return run_dir


def test_each_checkpoint_is_scored_on_the_panel(validated):
    table = pd.read_csv(validated / "validation.csv")
    assert table["update"].tolist() == [1, 2]
    cells = panel_cells(validated, 2, SETTINGS)
    assert len(cells) == 4  # 2 opponents x 2 maps
    assert cells["games"].tolist() == [2, 2, 2, 2]
    assert (cells[["wins", "draws", "losses"]].sum(axis=1) == cells["games"]).all()
    row = table.set_index("update").loc[2]
    assert row["score"] == pytest.approx(cells["margin"].mean())
    assert row["margin_idle"] == pytest.approx(cells.query("opponent == 'idle'")["margin"].mean())
    assert row["wins"] + row["draws"] + row["losses"] == 8
    # the same games played directly with the checkpoint's System
    games = ev.evaluate(
        f"ckpt:{validated}@2", "rush", maps=[42, 44], games_per_map=2, seed=0, metrics="none",
        batch_size=4, tick_limit=6,
    )  # fmt: skip
    margin = (games["points_a"] - games["points_b"]).mean()
    assert row["margin_rush"] == pytest.approx(margin)
    assert row["kills"] == pytest.approx(cells["kills"].mean())


def test_the_best_checkpoint_is_kept_as_a_run(validated):
    table = pd.read_csv(validated / "validation.csv")
    marker = json.loads((validated / "best" / "best.json").read_text())
    assert marker["update"] == int(table.loc[table["score"].idxmax(), "update"])
    _, best = runs.load_trainer(validated / "best")
    _, chosen = runs.load_trainer(validated, marker["update"])
    for a, b in zip(jax.tree.leaves(best.actor), jax.tree.leaves(chosen.actor), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert ev.get_system(f"ckpt:{validated}/best").name == f"ckpt:{validated}/best"
    # validating again scores nothing new and keeps the table
    again = validate_run(validated, SETTINGS)
    pd.testing.assert_frame_equal(again.reset_index(drop=True), table, check_dtype=False)


def test_a_resumed_run_goes_on_validating_as_it_was_started(validated, tmp_path):
    """`--validate` records the run's validation settings (`validation.json`); `resume` reads
    them back and validates each checkpoint it saves alike: the run stopped after its first
    update (not a scheduled checkpoint, so not validated) and resumed scores its last
    checkpoint as the uninterrupted run did."""
    run_dir, cli = tmp_path / "run", CliRunner()
    stopped = cli.invoke(app, ["ippo-rnn", "--out", str(run_dir), "--seed", "3", "--validate",
                               "--panel", "idle", "--validation-games", "2", "--hours", "0",
                               *tiny_args(32)])  # fmt: skip
    assert stopped.exit_code == 0, stopped.output
    assert read_settings(run_dir) == validation_settings(["idle"], 2, "tdm")
    assert not (run_dir / VALIDATION_CSV).exists()
    # the record is the run's: settings written over it (two maps, games of 6 ticks) are used
    (run_dir / SETTINGS_JSON).write_text(json.dumps(dataclasses.asdict(SETTINGS)))
    done = cli.invoke(app, ["resume", str(run_dir), "--quiet"])
    assert done.exit_code == 0, done.output
    table = pd.read_csv(run_dir / VALIDATION_CSV)
    whole = pd.read_csv(validated / VALIDATION_CSV)
    pd.testing.assert_frame_equal(table, whole[whole["update"] == 2].reset_index(drop=True))
    (run_dir / SETTINGS_JSON).write_text(json.dumps({**dataclasses.asdict(SETTINGS), "maps": [47]}))
    refused = cli.invoke(app, ["resume", str(run_dir), "--steps", "48", "--quiet"])
    assert refused.exit_code == 2
    assert "validation.maps" in refused.output
    assert checkpoints.load_config(run_dir).total_steps == 32  # refused before any change
    # `resume --validate` validates from now on as its options say, and records that
    asked = ["--validate", "--panel", "idle", "--validation-games", "4"]
    for wrong, said in ((asked[1:3], "only with --validate"), ([*asked[:4], "3"], "games")):
        refused = cli.invoke(app, ["resume", str(run_dir), *wrong, "--steps", "48", "--quiet"])
        assert refused.exit_code == 2
        assert said in refused.output
        assert checkpoints.load_config(run_dir).total_steps == 32
    done = cli.invoke(app, ["resume", str(run_dir), *asked, "--quiet"])  # nothing left to train
    assert done.exit_code == 0, done.output
    assert read_settings(run_dir) == validation_settings(["idle"], 4, "tdm")


def test_validation_refuses_test_maps_and_bad_settings(validated):
    with pytest.raises(ConfigError, match="maps: 47"):
        panel_cells(validated, 1, ValidationSettings(maps=(47,), panel=("idle",)))
    result = CliRunner().invoke(app, ["validate", str(validated), "--validation-games", "3"])
    assert result.exit_code == 2
    assert "--validation-games" in result.output
    result = CliRunner().invoke(app, ["validate", str(validated), "--panel", "no-such-system"])
    assert result.exit_code == 2
    assert "no-such-system" in result.output


def test_checkpoints_share_one_program_and_greedy_play_is_greedy(validated):
    """Every checkpoint of a run is the same parametric System but for its weights (one compiled
    evaluation program for all of them); a greedy checkpoint picks the same actions whatever its
    keys, a sampling one does not."""
    first, second = runs.run_system(validated, 1), runs.run_system(validated, 2)
    assert first.program_key() == second.program_key()
    assert runs.run_system(validated, 2, greedy=True).program_key() != second.program_key()
    env = marl_bgs.make("tdm", num_envs=8, map_id=42, tick_limit=6)
    _, state = env.reset(jax.random.PRNGKey(0))
    inputs = team_inputs(env, state)[0]
    bound = second.bind(second.params)
    memory = jax.vmap(bound.init)(jax.random.split(jax.random.PRNGKey(1), 8))

    def actions(system, seed):
        keys = jax.random.split(jax.random.PRNGKey(seed), 8)
        return np.asarray(system.bind(system.params).act(keys, memory, inputs)[0])

    greedy = runs.run_system(validated, 2, greedy=True)
    np.testing.assert_array_equal(actions(greedy, 1), actions(greedy, 2))
    assert not np.array_equal(actions(second, 1), actions(second, 2))
