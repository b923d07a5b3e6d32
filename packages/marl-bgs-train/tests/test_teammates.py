"""A frozen teammate: a fixed System plays some of team A's slots while the learner acts and
learns for the others; its slots weigh nothing in the learner's losses; it is remembered with the
run by name, so a run with one resumes and loads."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from typer.testing import CliRunner

from marl_bgs import ConfigError
from marl_bgs_train import runs
from marl_bgs_train.cli import app
from marl_bgs_train.learners import make_train
from marl_bgs_train.players import load_players, named_policy, save_players
from marl_bgs_train.testing import tiny_config

IDLE = named_policy("idle", "teammate")  # one object: equal trainers share compiled programs


@pytest.mark.parametrize("preset", ["ippo-rnn", "pqn-vdn"])
def test_an_idle_teammate_holds_its_slot_and_weighs_nothing(preset):
    trainer = make_train(tiny_config(preset, teammate_slots=(0,)), teammate=IDLE)
    state = jax.jit(trainer.init)(jax.random.key(3))
    start_pos = np.asarray(state.env_state.units.pos)
    state, traj, _, _ = jax.jit(trainer._rollout)(state, trainer.hyper())
    weight = np.asarray(traj.weight)
    assert (weight[..., 0] == 0).all()
    assert (weight[..., 1:] == 1).all()  # the learner's four slots (5v5 rosters)
    # no game ended inside the rollout (tick limit 6 > 4 ticks): slot 0 (team A) never moved,
    # while the learner's agents did
    pos = np.asarray(state.env_state.units.pos)
    np.testing.assert_array_equal(pos[:, 0], start_pos[:, 0])
    assert (pos[:, 1:5] != start_pos[:, 1:5]).any()
    state, metrics = trainer.run(state, 1)
    assert all(np.isfinite(np.asarray(v)).all() for v in jax.device_get(metrics).values())


def test_teammate_settings_are_checked_and_remembered(tmp_path):
    with pytest.raises(ConfigError, match="teammate_slots"):
        make_train(tiny_config("ippo-rnn", teammate_slots=(0,)))  # slots without a teammate
    with pytest.raises(ConfigError, match="teammate_slots"):
        make_train(tiny_config("ippo-rnn"), teammate=named_policy("idle", "teammate"))
    with pytest.raises(ConfigError, match="teammate_slots"):
        make_train(tiny_config("ippo-rnn", teammate_slots=(0, 1, 2, 3, 4)))
    with pytest.raises(ConfigError, match="teammate_slots"):
        make_train(tiny_config("ippo-rnn", teammate_slots=(5,)))
    with pytest.raises(ConfigError, match="--teammate"):
        named_policy("no-such-system", "--teammate")
    save_players(tmp_path, ["rush"], "idle")
    pool, mate = load_players(tmp_path)
    assert [p.name for p in pool] == ["rush"]
    assert mate is not None
    assert mate.name == "idle"
    (tmp_path / "players.json").write_text('{"frozen": "rush", "teammate": null}')
    with pytest.raises(ConfigError, match="players file"):
        load_players(tmp_path)
    bad = CliRunner().invoke(app, ["ippo-rnn", "--teammate", "nope", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2
    assert "--teammate" in bad.output


def test_a_run_with_a_teammate_loads_by_its_players_file(tmp_path):
    config = tiny_config("ippo-rnn", teammate_slots=(0,))  # the program the test above built
    runs.train_run(config, tmp_path / "run", seed=0, progress=False, teammate=IDLE)
    save_players(tmp_path / "run", [], "idle")
    trainer, state = runs.load_trainer(tmp_path / "run")
    assert trainer.teammate is not None
    assert int(state.update) == 2
