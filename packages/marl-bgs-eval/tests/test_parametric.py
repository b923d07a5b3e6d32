"""Parametric Systems: weights as data, one compiled program per architecture."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pandas as pd
import pytest

import marl_bgs_eval as ev
from marl_bgs import TeamDeathmatch, scripted_policy
from marl_bgs_eval import play

SAMPLE = jax.vmap(TeamDeathmatch().sample_legal)


def _lazy(params: dict, keys: jax.Array, memory: tuple, inputs: ev.TeamInputs) -> tuple:
    """Idle with probability params["idle"] in each game and tick, else uniform legal actions."""
    u = jax.vmap(lambda k: jax.random.uniform(jax.random.fold_in(k, 1)))(keys)
    idle = (u < params["idle"])[:, None, None]
    return jnp.where(idle, 0, SAMPLE(keys, inputs.masks)).astype(jnp.int32), memory


def _lazy_system(name: str, idle: float) -> ev.System:
    return ev.system(_lazy, name=name, params={"idle": jnp.float32(idle)})


def test_systems_of_one_architecture_share_one_program(kit) -> None:
    a, b = _lazy_system("lazy-2", 0.2), _lazy_system("lazy-8", 0.8)
    assert a.program_key() == b.program_key()
    before = len(play._PROGRAMS)
    first = ev.evaluate(a, kit.rush, batch_size=8, metrics="none", **kit.settings)
    second = ev.evaluate(b, kit.rush, batch_size=8, metrics="none", **kit.settings)
    assert len(play._PROGRAMS) - before == 1
    assert set(first["system_a"]) == {"lazy-2"}
    assert set(second["system_a"]) == {"lazy-8"}
    assert not first["result"].equals(second["result"]) or not first["ticks"].equals(
        second["ticks"]
    )  # the weights are used, not the first System's constants
    closure = ev.system(lambda k, m, i: _lazy({"idle": jnp.float32(0.8)}, k, m, i), name="lazy-8")
    again = ev.evaluate(closure, kit.rush, batch_size=8, metrics="none", **kit.settings)
    pd.testing.assert_frame_equal(second, again)


def test_other_shapes_or_functions_are_other_programs() -> None:
    a = _lazy_system("a", 0.5)
    wider = ev.system(_lazy, name="b", params={"idle": jnp.zeros(2)})
    assert a.program_key() != wider.program_key()
    assert a.program_key() != ev.random_system().program_key()
    assert ev.random_system().program_key() is ev.random_system()


def test_bind_gives_a_plain_system_and_host_systems_take_no_params() -> None:
    bound = _lazy_system("a", 0.5).bind({"idle": jnp.float32(0.5)})
    assert bound.params is None
    assert bound.name == "a"
    assert ev.random_system().bind(None) is ev.random_system()
    with pytest.raises(ev.EvalError, match="params"):
        ev.system(lambda k, m, i: (k, m), name="h", host=True, params={"w": 1})


def test_a_parametric_system_fills_the_rest_of_a_mixed_team(kit) -> None:
    lazy = _lazy_system("lazy-8", 0.8)
    cols = ["result", "points_a", "points_b", "ticks"]
    games = [
        ev.evaluate(ev.team(classes={"M": ev.idle_system()}, rest=rest), kit.rush, batch_size=8,
                    metrics="none", **kit.settings)[cols]
        for rest in (lazy, lazy.bind(lazy.params))
    ]  # fmt: skip
    pd.testing.assert_frame_equal(*games)


def test_the_scripted_teams_but_rush_are_one_architecture(kit) -> None:
    # TDM-Alpha, -Beta and -Gamma carry their style's numbers as weights: every pairing of them
    # against one opponent shares a program, and each plays as the engine's policy of its name
    # (numbers compiled in as constants).
    alpha, beta, gamma = (ev.get_system(n) for n in ("tdm-alpha", "tdm-beta", "tdm-gamma"))
    assert alpha.program_key() == beta.program_key() == gamma.program_key()
    assert ev.get_system("rush").params is None
    before = len(play._PROGRAMS)
    games = {
        s.name: ev.evaluate(s, kit.rush, metrics="none", **kit.settings) for s in (alpha, gamma)
    }
    assert len(play._PROGRAMS) - before == 1
    policy = scripted_policy("tdm-gamma")
    constants = ev.system(policy.act, name="tdm-gamma", init=policy.init)
    again = ev.evaluate(constants, kit.rush, metrics="none", **kit.settings)
    pd.testing.assert_frame_equal(games["tdm-gamma"], again)
    assert not games["tdm-alpha"]["ticks"].equals(again["ticks"]) or not games["tdm-alpha"][
        "result"
    ].equals(again["result"])  # the numbers are used
