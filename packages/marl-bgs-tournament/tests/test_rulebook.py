"""The rulebook's checks: a rule-abiding System file passes every one, and each check fails on a
System (or manifest) built to break it.

Programs are shared: one recording (random against random, 16 games x 8 ticks on the test maps)
serves every information, memory and weights check; only the play limits compile the engine's
loop per System (the file's, the slow System's and random's).
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
import marl_bgs_eval as ev
from marl_bgs.tdm.classes import MAX_HEALTH
from marl_bgs_tournament import rulebook as rb
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable import MAX_MEMORY_BYTES, export_system, load_system
from marl_bgs_tournament.rulebook import tdm as rb_tdm

CPU = jax.default_backend() == "cpu"
BATCHES = (16,) if CPU else (16, rb.PLAY_BATCH)  # a GPU plays the limits at 512 games
TRAINING = {"maps": [0, 1, 2], "scenarios": []}
TDM = "tdm-v2"
TICK_LIMIT = 40  # the full_games check's games here (the rulebook's are 300 ticks)


def _idle(n: int) -> jax.Array:
    return jnp.zeros((n, 5, 3), jnp.int32)


# --- a rule-abiding parametric System with memory ----------------------------------------------

SLOW_WORK = 64  # 256 x 256 matmuls per tick that make the file's architecture too slow


def _linear_act(params: dict, keys: jax.Array, memory: dict, inputs: ev.TeamInputs) -> tuple:
    """Moves by a linear read of the observation, smoothed in memory, among legal moves; and
    `params["work"]` matmuls per tick whose result never matters (0 in the rule-abiding file:
    the slow System is the same architecture, so both share one compiled game loop)."""
    del keys
    h = 0.5 * memory["h"] + 0.5 * jnp.tanh(inputs.obs @ params["w"])
    logits = h + params["b"] + memory["bias"][:, None, None]
    x = jnp.full((256, 256), jnp.mean(inputs.obs)) + jnp.eye(256)
    x = jax.lax.fori_loop(0, params["work"], lambda _, x: jnp.tanh(x @ x) / 8, x)
    move = jnp.argmax(jnp.where(inputs.masks.move, logits, -jnp.inf), axis=-1)
    move = jnp.where(x[0, 0] > 1e9, 0, move)  # never, yet the work cannot be skipped
    return _idle(inputs.obs.shape[0]).at[..., 0].set(move), {**memory, "h": h}


def _linear_init(params: dict, key: jax.Array) -> dict:
    del params
    return {"h": jnp.zeros((5, 9)), "bias": jax.random.uniform(key, (), minval=-0.01, maxval=0.01)}


def _linear(name: str = "linear") -> ev.System:
    size = marl_bgs.make("tdm", num_envs=1).obs_size
    w = jax.random.normal(jax.random.key(3), (size, 9)) * 0.05
    params = {"b": jnp.zeros(9), "w": w, "work": jnp.int32(0)}
    return ev.system(_linear_act, name=name, init=_linear_init, params=params)


@pytest.fixture(scope="module")
def linear_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rulebook") / "linear.mbgs"
    export_system(_linear(), path, team="tests", training=TRAINING, batch_sizes=BATCHES)
    return path


def test_a_rule_abiding_file_passes_every_check(linear_file: Path) -> None:
    """Here, in this process (the sandbox runs the same `check_entrant` in its child:
    test_fuzz_submitted_programs.py)."""
    table = rb.check_entrant(linear_file, tick_limit=TICK_LIMIT)
    assert list(table.columns) == list(rb.COLUMNS)
    assert list(table["check"]) == list(rb.checks_of(TDM))
    assert rb.checks_of(TDM) == (*rb.CHECKS[:2], "information_limits", *rb.CHECKS[2:])
    assert bool(table["passed"].all()), table.to_string()
    row = table.set_index("check")
    assert row.at["information_limits", "value"] > 0  # the perturbation had units to change
    assert row.at["memory_reset", "value"] == 5 * 9 * 4 + 4
    assert row.at["full_games", "value"] == sum(max(b, 2) for b in BATCHES)  # whole batches
    assert (
        f"games of {TICK_LIMIT} ticks against random at batch sizes {list(BATCHES)}"
        in (row.at["full_games", "detail"])
    )
    if CPU:
        assert row.at["play_limits", "value"] >= rb.CPU_MIN_SPEED_RATIO
        assert "compiled act at 16 games x 32" in row.at["play_limits", "detail"]  # no 512 size


def test_the_perturbation_changes_only_hidden_enemies() -> None:
    state = rb.recording._recording(TDM, rb.GAMES, rb.TICKS, 0).states[-1]
    changed, n = rb_tdm.perturb_hidden(state, jax.random.key(1))
    hidden = np.asarray(rb_tdm.hidden_enemies(state))
    assert int(n) == hidden.sum() > 0
    old, new = state.units, changed.units
    moved = np.asarray(old.health != new.health)
    assert not (moved & ~hidden).any()
    assert (moved == hidden).mean() > 0.99  # redrawn health (equal by chance at most rarely)
    top = np.asarray(MAX_HEALTH)[np.asarray(new.class_id)]
    assert ((np.asarray(new.health) > 0) & (np.asarray(new.health) <= top))[hidden].all()
    for name in ("pos", "alive", "shield", "class_id"):
        np.testing.assert_array_equal(getattr(old, name), getattr(new, name))


# --- information limits --------------------------------------------------------------------


SECRET: dict[str, Any] = {}


def _peeking(key_data: np.ndarray, memory: tuple, inputs: ev.TeamInputs) -> tuple:
    """A host System that moves by the enemies' real health, read from the state that a side
    channel left in a Python global."""
    del key_data
    n = inputs.obs.shape[0]
    actions = np.zeros((n, 5, 3), np.int32)
    state = SECRET.get("state")
    if state is not None and state.tick.shape[0] == n:
        health = np.asarray(state.units.health)[:, 5:].sum(axis=1)
        actions[..., 0] = (np.floor(health * 1000) % 9).astype(np.int32)[:, None]
    return actions, memory


def test_a_system_reading_hidden_state_fails_information(monkeypatch: pytest.MonkeyPatch) -> None:
    real = rb.recording._team_inputs

    def side_channel(mode: str, states: Any) -> Any:
        SECRET["state"] = states
        return real(mode, states)

    monkeypatch.setattr(rb.recording, "_team_inputs", side_channel)
    row = rb_tdm.information_limits(ev.system(_peeking, name="peeking", host=True))
    assert not row.passed
    assert row.value > 0
    assert "actions changed" in row.detail
    assert "outside its permitted inputs" in row.detail
    assert "ENGINE" not in row.detail


def test_an_engine_leak_is_named_by_its_leaf(monkeypatch: pytest.MonkeyPatch) -> None:
    real = rb.recording._team_inputs

    def leaky(mode: str, states: Any) -> Any:  # the last enemy's health in every observation
        inputs = real(mode, states)
        return inputs._replace(obs=inputs.obs.at[..., 0].add(states.units.health[:, 9, None]))

    monkeypatch.setattr(rb.recording, "_team_inputs", leaky)
    row = rb_tdm.information_limits(ev.idle_system())
    assert not row.passed
    assert "ENGINE leak" in row.detail
    assert ".obs" in row.detail


# --- memory reset --------------------------------------------------------------------------


def test_memory_from_a_python_counter_fails_memory_reset() -> None:
    count = itertools.count()

    def init(key: jax.Array) -> dict:
        del key
        return {"n": jnp.full((), next(count), jnp.int32)}

    row = rb.memory_reset(ev.system(lambda k, m, i: (_idle(i.obs.shape[0]), m), name="counter",
                                    init=init))  # fmt: skip
    assert not row.passed
    assert "does not start fresh every game" in row.detail
    assert "['n']" in row.detail


@pytest.mark.parametrize("extra", [0, 1])
def test_memory_at_the_limit_passes_and_one_byte_over_fails_memory_reset(extra: int) -> None:
    def init(key: jax.Array) -> jax.Array:
        del key
        return jnp.zeros(MAX_MEMORY_BYTES + extra, jnp.uint8)

    row = rb.memory_reset(ev.system(lambda k, m, i: (_idle(i.obs.shape[0]), m + 1), name="big",
                                    init=init))  # fmt: skip
    assert row.value == MAX_MEMORY_BYTES + extra
    assert row.passed == (extra == 0), row.detail
    assert (f"more than {MAX_MEMORY_BYTES}" in row.detail) == bool(extra)
    assert "start fresh" not in row.detail


# --- weights unchanged ---------------------------------------------------------------------


def test_weights_changed_during_play_fail() -> None:
    w = np.linspace(0, 1, 64, dtype=np.float32)  # the System's own weights, changed in place

    def bump() -> None:
        w[:] += 1

    def act(params: dict, keys: jax.Array, memory: tuple, inputs: ev.TeamInputs) -> tuple:
        del keys
        jax.debug.callback(bump)
        move = (jnp.sum(params["w"]) > 0).astype(jnp.int32)
        return _idle(inputs.obs.shape[0]).at[..., 0].set(move), memory

    row = rb.weights_unchanged(ev.system(act, name="learner", params={"w": w}))
    assert not row.passed
    assert "weight leaves [0] changed" in row.detail


def test_weights_smuggled_into_memory_fail() -> None:
    def init(params: dict, key: jax.Array) -> dict:
        del key
        return {"w": params["w"]}  # weights that play may now change

    def act(params: dict, keys: jax.Array, memory: dict, inputs: ev.TeamInputs) -> tuple:
        del params, keys
        w = memory["w"] + 0.01 * jnp.mean(inputs.obs, axis=(1, 2))[:, None]
        move = jnp.argmax(w[:, :9], axis=-1).astype(jnp.int32)
        return _idle(inputs.obs.shape[0]).at[..., 0].set(move[:, None]), {"w": w}

    weights = {"w": jnp.linspace(-1, 1, 32)}
    row = rb.weights_unchanged(ev.system(act, name="smuggler", init=init, params=weights))
    assert not row.passed
    assert "memory ['w'] holds weights ['w']" in row.detail


def test_a_file_system_with_other_weights_fails(linear_file: Path) -> None:
    loaded = load_system(linear_file)
    assert rb.weights_unchanged(loaded, linear_file).passed
    swapped = dataclasses.replace(loaded, params=tuple(p + 1 for p in loaded.params))
    row = rb.weights_unchanged(swapped, linear_file)
    assert not row.passed
    assert "not the file's" in row.detail


# --- training declared ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("training", "passed", "found"),
    [
        (TRAINING, True, "maps [0, 1, 2]"),
        (None, False, "training undeclared"),
        ({"maps": [0, 47, 51], "scenarios": []}, False, "test map(s) [47, 51]"),
        ({"maps": [0], "scenarios": ["last-stand"]}, False, "scenario(s) ['last-stand']"),
    ],
)
def test_training_declared(training: dict | None, passed: bool, found: str) -> None:
    row = rb.training_declared({"mode": TDM, "training": training})
    assert row.passed is passed
    assert found in row.detail


def test_no_manifest_means_training_undeclared() -> None:
    row = rb.training_declared(None)
    assert not row.passed
    assert "no manifest" in row.detail


# --- play limits ---------------------------------------------------------------------------


@pytest.mark.skipif(not CPU, reason="the scaled rule is the CPU's")
def test_a_slow_system_fails_the_cpu_speed_ratio(linear_file: Path) -> None:
    loaded = load_system(linear_file)
    *weights, work = loaded.params  # leaves in key order: b, w, work
    assert work.shape == ()
    assert int(work) == 0
    slow = dataclasses.replace(loaded, params=(*weights, jnp.int32(SLOW_WORK)))
    row = rb.play_limits(slow)
    assert not row.passed
    assert row.value < rb.CPU_MIN_SPEED_RATIO
    assert "too slow" in row.detail
    assert "too much" not in row.detail


def test_check_entrant_names_a_crash_and_refuses_unknown_checks() -> None:
    def broken(keys: jax.Array, memory: tuple, inputs: ev.TeamInputs) -> tuple:
        return jnp.zeros((inputs.obs.shape[0], 4, 3), jnp.int32), memory

    table = rb.check_entrant(ev.system(broken, name="broken"), {"mode": TDM, "training": TRAINING},
                             checks=["information_limits", "training_declared"])  # fmt: skip
    assert list(table["passed"]) == [False, True]
    assert "actions must have shape (16, 5, 3)" in table["detail"].iat[0]
    with pytest.raises(TournamentError, match="unknown"):
        rb.check_entrant(ev.idle_system(), checks=["speed"])
    with pytest.raises(TournamentError, match=r"unknown \['information_limits'\] for mode two-b"):
        rb.check_entrant(ev.idle_system("two-bridge"), checks=["information_limits"])


@pytest.mark.slow
def test_an_exported_scripted_team_passes_every_check(tmp_path: Path) -> None:
    path = tmp_path / "beta.mbgs"
    export_system(ev.get_system("tdm-beta"), path, team="tests", training=TRAINING,
                  batch_sizes=BATCHES)  # fmt: skip
    table = rb.check_entrant(path)
    assert bool(table["passed"].all()), table.to_string()


def test_a_two_bridge_system_gets_its_modes_checks_on_its_layouts() -> None:
    system = ev.random_system("two-bridge")
    assert rb.checks_of("two-bridge") == rb.CHECKS  # no information check of its own
    manifest = {"mode": "two-bridge-v1", "training": {"maps": [0, 8], "scenarios": []}}
    table = rb.check_entrant(system, manifest, checks=["memory_reset", "training_declared"],
                             games=2, ticks=2)  # fmt: skip
    assert bool(table["passed"].all()), table.to_string()  # nothing held out: any variant
    rec = rb.recording._recording("two-bridge-v1", 2, 2, 0)
    assert rec.mode == "two-bridge-v1"
    assert rb.recording._team_inputs(rec.mode, rec.states[-1]).obs.shape[:2] == (2, 5)
