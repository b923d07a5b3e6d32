"""Runs on disk: logs, learning curve, checkpoints, an interrupted run resumed from the command
line equal to the uninterrupted one (also one resumed to a longer total), a run as a `ckpt:`
System, and the command line's errors.
Uses the tiny recurrent IPPO config, whose compiled program the learner tests already built."""

from __future__ import annotations

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from typer.testing import CliRunner

import marl_bgs
from marl_bgs import ConfigError, team_inputs
from marl_bgs_eval import get_system
from marl_bgs_train import checkpoints, runs
from marl_bgs_train.cli import app
from marl_bgs_train.cli_options import said_if_stopped
from marl_bgs_train.hypers import program_config
from marl_bgs_train.players import named_policy
from marl_bgs_train.tdm import features
from marl_bgs_train.tdm.game import LayoutVariation
from marl_bgs_train.testing import assert_trees_equal, tensorboard_scalars, tiny_config

CONFIG = tiny_config("ippo-rnn", free_paths=4, route_field=True)  # the System reads the added
# features too, the route from its own memory


class StopError(Exception):
    pass


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """An uninterrupted run of the tiny config (two updates)."""
    run_dir = tmp_path_factory.mktemp("runs") / "whole"
    runs.train_run(CONFIG, run_dir, seed=7, progress=False)
    return run_dir


def test_a_run_writes_logs_curve_and_checkpoints(finished):
    rows = runs.read_log(finished)
    assert [r["update"] for r in rows] == [1, 2]
    assert rows[-1]["steps"] == CONFIG.total_steps
    assert all(0.0 <= r["win_rate"] <= 1.0 and r["steps_per_second"] > 0 for r in rows)
    header = (finished / "log.csv").read_text().splitlines()[0].split(",")
    assert {"update", "steps", "wins", "win_rate", "margin", "entropy"} <= set(header)
    png = (finished / "curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(png) > 10_000
    assert sorted(p.name for p in (finished / "checkpoints").iterdir() if p.name.isdigit()) == ["2"]


def test_team_b_keeps_a_route_memory_only_where_a_network_plays_it(finished):
    """Team B's feature memory is worked out in the games of the current weights and saved
    copies, which read it; the fixed policies' games keep the empty memory (no work)."""
    trainer, state = runs.load_trainer(finished)
    networks = trainer.slices[0] + trainer.slices[1]
    assert 0 < networks < CONFIG.num_envs  # both kinds of games in the tiny mix
    _, field, _ = (np.asarray(a) for a in state.features[1])
    blank = np.asarray(features.route_memory()[1])
    assert all((field[g] == blank).all() for g in range(networks, CONFIG.num_envs))
    assert not any((field[g] == blank).all() for g in range(networks))


def test_a_run_logs_for_tensorboard_what_its_csv_holds(tmp_path):
    run_dir = tmp_path / "tb"
    runs.train_run(CONFIG, run_dir, seed=7, progress=False, tensorboard=True)
    scalars = tensorboard_scalars(run_dir / "tensorboard")
    rows = runs.read_log(run_dir)
    for row in rows:
        for tag in ("win_rate", "reward_per_tick", "entropy", "stage"):
            logged = [v for t, step, v in scalars if t == tag and step == int(row["steps"])]
            assert logged == [pytest.approx(row[tag])]


def test_an_interrupted_run_resumed_from_the_command_line_equals_the_whole(finished, tmp_path):
    cut = tmp_path / "cut"

    def stop(row):
        raise StopError

    with pytest.raises(StopError):
        runs.train_run(CONFIG, cut, seed=7, save_every=1, progress=False, on_update=stop)
    result = CliRunner().invoke(app, ["resume", str(cut)])
    assert result.exit_code == 0, result.output
    # not a terminal: plain progress lines, from the saved update on, with their status
    lines = result.stderr.splitlines()
    assert lines[0] == "ippo-rnn: 16/32 steps, 50%, 0 s elapsed, compiling"
    assert lines[-1].startswith("ippo-rnn: 32/32 steps, 100%, ")
    _, whole = runs.load_trainer(finished)
    _, resumed = runs.load_trainer(cut)
    for a, b in zip(
        jax.tree_util.tree_leaves(whole), jax.tree_util.tree_leaves(resumed), strict=True
    ):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    timeless = lambda rows: [{k: v for k, v in r.items() if k != "steps_per_second"} for r in rows]  # noqa: E731
    assert timeless(runs.read_log(cut)) == timeless(runs.read_log(finished))


def test_a_run_stopped_at_its_time_limit_resumes_to_the_whole(finished, tmp_path, capsys):
    cut = tmp_path / "cut"
    runs.train_run(CONFIG, cut, seed=7, progress=False, deadline=0.0)  # past: one update, saved
    assert checkpoints.manager(cut, keep=None).all_steps() == [1]
    assert not runs.finished(cut)
    assert said_if_stopped([cut], 0.0, cut)
    said = " ".join(capsys.readouterr().out.split())
    assert f"1 of 1 runs not finished; continue: marl-bgs-train resume {cut}" in said
    result = CliRunner().invoke(app, ["resume", str(cut), "--hours", "0"])
    assert result.exit_code == 0, result.output
    assert "stopped" not in result.output  # the update it trained was the last
    assert runs.finished(cut)
    _, whole = runs.load_trainer(finished)
    _, resumed = runs.load_trainer(cut)
    assert_trees_equal(resumed, whole)


def test_a_short_run_resumed_to_a_longer_total_equals_the_longer_run(finished, tmp_path):
    short = tmp_path / "short"
    one = dataclasses.replace(CONFIG, total_steps=CONFIG.steps_per_update)  # one update
    assert program_config(one) == program_config(CONFIG)  # the length compiles nothing new
    runs.train_run(one, short, seed=7, progress=False)
    lower = CliRunner().invoke(app, ["resume", str(short), "--steps", "1", "--quiet"])
    assert lower.exit_code != 0
    assert "steps: 1 is below the run's total" in lower.output
    longer = CliRunner().invoke(
        app, ["resume", str(short), "--steps", str(CONFIG.total_steps), "--quiet"]
    )
    assert longer.exit_code == 0, longer.output
    assert checkpoints.load_config(short) == CONFIG
    _, whole = runs.load_trainer(finished)
    _, resumed = runs.load_trainer(short)
    for a, b in zip(
        jax.tree_util.tree_leaves(whole), jax.tree_util.tree_leaves(resumed), strict=True
    ):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_run_is_a_system_that_plays_legal_actions(finished):
    system = get_system(f"ckpt:{finished}")
    assert system.name == f"ckpt:{finished}"
    env = marl_bgs.make("tdm", map_id=42, num_envs=3)
    _, state = env.reset(jax.random.key(0))
    inputs = team_inputs(env, state)[1]  # it may play team B too: inputs are in its own frame
    assert system.params is not None  # its weights are data: one program for every checkpoint
    # as an evaluation System (weights bound) and as a frozen player of a training run
    empty = jax.tree.map(lambda a: jnp.broadcast_to(a, (3, *a.shape)), features.route_memory())
    route = features.remember_route(empty, jnp.ones(3, bool), inputs.obs)
    for player in (system.bind(system.params), named_policy(f"ckpt:{finished}", "frozen")):
        memory = jax.vmap(player.init)(jax.random.split(jax.random.key(1), 3))
        actions, after = jax.jit(player.act)(jax.random.split(jax.random.key(2), 3), memory, inputs)
        # its route memory is the games' field worked out on their first tick, as in training
        for got, want in zip(jax.tree.leaves(after.features), route, strict=True):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        a = np.asarray(actions)
        move, pair = np.asarray(inputs.masks.move), np.asarray(inputs.masks.pair)
        g, k = np.meshgrid(np.arange(3), np.arange(5), indexing="ij")
        assert move[g, k, a[..., 0]].all()
        assert pair[g, k, a[..., 1], a[..., 2]].all()
    with pytest.raises(Exception, match="ckpt"):
        get_system(f"ckpt:{finished}@x")


def test_command_line_errors_name_the_setting(tmp_path):
    cli = CliRunner()
    bad = cli.invoke(app, ["ippo-rnn", "--set", "gamma=2", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2
    assert "gamma" in bad.output
    unknown = cli.invoke(app, ["ippo-rnn", "--set", "nope=1", "--out", str(tmp_path / "x")])
    assert unknown.exit_code == 2
    assert "unknown setting" in unknown.output
    assert "gamma" in unknown.output
    out = ["--out", str(tmp_path / "x")]
    test_map = cli.invoke(app, ["mappo-ff", "--set", "game.maps=0,49", *out])
    assert test_map.exit_code == 2
    assert "test map 49" in test_map.output
    ranged = cli.invoke(app, ["mappo-ff", "--set", "game.maps=40-48", "--out", str(tmp_path / "x")])
    assert "maps: 47 is test map 47" in ranged.stderr  # the map grammar's range, then the guard
    typo = cli.invoke(app, ["mappo-ff", "--set", "game.maps=tset", "--out", str(tmp_path / "x")])
    assert typo.exit_code == 2
    assert typo.stderr.startswith("error: --set game.maps: map_id: unknown 'tset' (did you mean")
    moved = cli.invoke(app, ["mappo-ff", "--set", "maps=0-39", "--out", str(tmp_path / "x")])
    assert moved.exit_code == 2  # a game setting at the top level names its new place
    assert "write game.maps=0-39" in moved.stderr
    no_mode = cli.invoke(app, ["qmix", "--mode", "duel", "--out", str(tmp_path / "x")])
    assert no_mode.exit_code == 2
    assert "duel" in no_mode.stderr
    missing = cli.invoke(app, ["resume", str(tmp_path / "none")])
    assert missing.exit_code == 2
    assert "config.json" in missing.output
    no_file = cli.invoke(app, ["qmix", "--curriculum", str(tmp_path / "none.json")])
    assert no_file.exit_code == 2
    assert "curriculum" in no_file.output
    listed = cli.invoke(app, ["presets"])
    assert listed.exit_code == 0
    for name in ("mappo-ff", "pqn-vdn", "qmix", "td_lambda", "replay_rows"):
        assert name in listed.output
    assert "0.999" in listed.output


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(extra=1), "extra"),
        (lambda d: d.pop("gamma"), "gamma"),
        (lambda d: d.update(gamma=3.0), "gamma: must be in"),
        (lambda d: d["opponents"].update(current=-1.0), "opponents"),
        (lambda d: d["game"].update(maps=[0, 48]), "test map 48"),
        (lambda d: d["game"].update(maps=7), "maps: expected a list"),
        (lambda d: d["game"]["layouts"].pop("seed"), "layouts"),
        (lambda d: d["game"].update(route_field="yes"), "route_field"),
        (lambda d: d.update(mode="two-bridge"), "game: expected the settings"),
        (lambda d: d.update(mode="no-such-mode"), "no-such-mode"),
        (lambda d: d["game"].update(free_paths=-2), "free_paths"),
    ],
)
def test_a_tampered_run_config_is_refused_by_name(tmp_path, edit, message):
    checkpoints.save_config(tmp_path, CONFIG)
    assert checkpoints.load_config(tmp_path) == CONFIG
    data = json.loads((tmp_path / "config.json").read_text())
    edit(data)
    (tmp_path / "config.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=message):
        checkpoints.load_config(tmp_path)
    (tmp_path / "config.json").write_text("[1, 2")
    with pytest.raises(ConfigError, match="not a valid training config"):
        checkpoints.load_config(tmp_path)


def test_a_run_saved_before_modes_free_paths_and_layouts_loads_as_team_deathmatch(tmp_path):
    # A config saved before modes had its game settings at the top level, and no mode; one saved
    # before free paths and layout variation had neither: it reads as Team Deathmatch, both off.
    checkpoints.save_config(tmp_path, CONFIG)
    data = json.loads((tmp_path / "config.json").read_text())
    game = data.pop("game")
    del data["mode"], game["free_paths"], game["layouts"], game["route_field"]
    (tmp_path / "config.json").write_text(json.dumps({**data, **game}))
    loaded = checkpoints.load_config(tmp_path)
    old = dataclasses.replace(
        CONFIG.game, free_paths=0, layouts=LayoutVariation(), route_field=False
    )
    assert loaded == dataclasses.replace(CONFIG, game=old)
