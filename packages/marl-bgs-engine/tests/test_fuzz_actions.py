"""Fuzz: malformed actions, messages and start schedules handed to the batched env.

Every input below is generated, not hand-picked one by one, and each must end in exactly one
outcome class: a `ConfigError` whose message starts with the field it names, or (only for
in-range illegal choices, and for values only known inside `jit`) the documented repair. No
crash deep in JAX, no silent misread.
"""

from __future__ import annotations

import itertools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs import ConfigError

pytestmark = pytest.mark.fuzz_family("actions and messages")

N, K, H = 4, 10, 3  # the shared env47: 4 games, 10 agents, 3 heads
HEADS = (9, 11, 2)


def _malformed_arrays() -> list[tuple[str, Any]]:
    cases: list[tuple[str, Any]] = []
    for value, dtype in itertools.product((-1, -(2**31), 198, 199, 10**6), (np.int32, np.int64)):
        flat = np.zeros((N, K), dtype)
        flat[N - 1, K - 1] = value
        cases.append((f"flat {value} {np.dtype(dtype).name}", flat))
    flat = np.zeros((N, K), np.int64)
    flat[0, 3] = 2**40  # would wrap to 0 in int32
    cases.append(("flat 2**40", flat))
    for head, size in enumerate(HEADS):
        for value in (-1, size, size + 5, 2**33):
            heads = np.zeros((N, K, H), np.int64)
            heads[1, 2, head] = value
            cases.append((f"head {head} = {value}", heads))
    for dtype, fill in ((np.float32, 0.0), (np.float64, 0.5), (np.float32, np.nan),
                        (np.float64, np.inf), (np.complex64, 1j), (bool, True)):  # fmt: skip
        cases.append((f"dtype {np.dtype(dtype).name}", np.full((N, K, H), fill, dtype)))
        cases.append((f"flat dtype {np.dtype(dtype).name}", np.full((N, K), fill, dtype)))
    for shape in ((N,), (N, K, 2), (N, K, 4), (K, H), (N + 1, K, H), (N, K + 1), (), (N, K, H, 1)):
        cases.append((f"shape {shape}", np.zeros(shape, np.int32)))
    cases += [
        ("a string", "stay"),
        ("None", None),
        ("a ragged list", [[0, 1], [2]]),
        ("objects", np.array([object()] * N)),
        ("a list of floats", [[0.5] * K] * N),
    ]
    return cases


def _malformed_dicts() -> list[tuple[str, Any]]:
    agents = marl_bgs.AGENTS
    ok = {a: np.zeros(N, np.int32) for a in agents}
    cases: list[tuple[str, Any]] = [
        ("unknown agent", {**ok, "c_0": np.zeros(N, np.int32)}),
        ("missing agent", {a: v for a, v in ok.items() if a != "b_2"}),
        ("non-string key", {**ok, 7: np.zeros(N, np.int32)}),
        ("empty dict", {}),
        ("one agent heads, others flat", {**ok, "a_0": np.zeros((N, H), np.int32)}),
    ]
    for agent in (agents[0], agents[-1]):
        cases += [
            (f"{agent} float", {**ok, agent: np.zeros(N, np.float32)}),
            (f"{agent} NaN", {**ok, agent: np.full(N, np.nan)}),
            (f"{agent} wrong length", {**ok, agent: np.zeros(N + 2, np.int32)}),
            (f"{agent} flat 198", {**ok, agent: np.full(N, 198)}),
            (f"{agent} flat -1", {**ok, agent: np.full(N, -1)}),
            (f"{agent} a string", {**ok, agent: "north"}),
        ]
    return cases


ACTION_CASES = _malformed_arrays() + _malformed_dicts()


def test_there_are_enough_malformed_actions():
    assert len(ACTION_CASES) >= 50


@pytest.mark.parametrize(("what", "actions"), ACTION_CASES, ids=[c[0] for c in ACTION_CASES])
def test_malformed_actions_are_refused_naming_the_field(record_property, env47, what, actions):
    record_property("outcome", "error")
    _, state = env47.reset(jax.random.key(0))
    del what  # the case's id
    with pytest.raises(ConfigError, match=r"^actions(\[|:)"):
        env47.step(None, state, actions)


def test_errors_name_the_agent_game_value_and_range(record_property, env47):
    record_property("outcome", "error")
    _, state = env47.reset(jax.random.key(0))
    heads = np.zeros((N, K, H), np.int32)
    heads[2, 6, 1] = 11
    with pytest.raises(
        ConfigError, match=r"^actions\['b_1'\]: target 11 in game 2 is outside \[0, 11\)"
    ):
        env47.step(None, state, heads)


def test_in_range_illegal_choices_get_the_documented_repair(record_property, env47):
    record_property("outcome", "repair")
    _, state = env47.reset(jax.random.key(0))  # at the pads nobody is in range of an enemy
    heads = np.zeros((N, K, H), np.int32)
    heads[:, :, 1] = 6  # a Basic on enemy slot 0: illegal from the pads
    _, _, _, _, info = env47.step(None, state, heads)
    assert np.all(np.asarray(info["facts"].accepted[..., 1]) == 0)
    assert np.all(np.asarray(info["facts"].combat_rejected))


def test_under_jit_out_of_range_flat_actions_are_illegal_in_every_head(record_property, env47):
    record_property("outcome", "repair")
    _, state = env47.reset(jax.random.key(0))
    for value in (-1, 198, 199, 2**20):
        _, _, _, _, info = jax.jit(env47.step)(None, state, jnp.full((N, K), value, jnp.int32))
        f = info["facts"]
        assert np.all(np.asarray(f.accepted) == 0), value  # not a Burst, not a leaked target
        assert np.all(np.asarray(f.move_rejected) & np.asarray(f.combat_rejected)), value


# --- messages -------------------------------------------------------------------------------------
MESSAGE_CASES = [
    (f"{fill} at {where}", np.full((N, K, 2), 0.0, np.float32), fill, where)
    for fill in (np.nan, np.inf, -np.inf)
    for where in ((0, 0, 0), (N - 1, K - 1, 1), (1, 5, 0))
]


@pytest.fixture(scope="module")
def talking():
    return marl_bgs.make("tdm", map_id=47, num_envs=N, message_dim=2)


@pytest.mark.parametrize(
    ("what", "base", "fill", "where"), MESSAGE_CASES, ids=[c[0] for c in MESSAGE_CASES]
)
def test_non_finite_messages_are_refused(record_property, talking, what, base, fill, where):
    record_property("outcome", "error")
    _, state = talking.reset(jax.random.key(0))
    base[where] = fill
    with pytest.raises(ConfigError, match=r"^messages: a NaN or infinite value from '\w+' in game"):
        talking.step(None, state, np.zeros((N, K), np.int32), base)


@pytest.mark.parametrize(
    "messages",
    [np.zeros((N, K)), np.zeros((N, K, 3)), np.zeros((K, 2)), "hello", np.full((N, K, 2), 1j)],
    ids=["2d", "too wide", "no batch", "a string", "complex"],
)
def test_malformed_messages_are_refused(record_property, talking, messages):
    record_property("outcome", "error")
    _, state = talking.reset(jax.random.key(0))
    with pytest.raises(ConfigError, match=r"^messages: expected"):
        talking.step(None, state, np.zeros((N, K), np.int32), messages)


def test_under_jit_non_finite_messages_arrive_as_zero(record_property, talking):
    record_property("outcome", "repair")
    _, state = talking.reset(jax.random.key(0))
    messages = jnp.full((N, K, 2), jnp.nan).at[:, :, 1].set(3.0)
    step = jax.jit(talking.step)
    obs, nxt, _, _, _ = step(None, state, jnp.zeros((N, K), jnp.int32), messages)
    np.testing.assert_array_equal(np.asarray(nxt.messages[..., 0]), 0.0)
    np.testing.assert_array_equal(np.asarray(nxt.messages[..., 1]), 3.0)
    assert all(np.isfinite(np.asarray(o)).all() for o in obs.values())


# --- start schedules ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("field", "maps", "rosters", "swap"),
    [
        ("map_index", [0, 1, 0, 0], [0] * 4, [False] * 4),
        ("map_index", [-1, 0, 0, 0], [0] * 4, [False] * 4),
        ("map_index", [0.0] * 4, [0] * 4, [False] * 4),
        ("map_index", [0] * 3, [0] * 4, [False] * 4),
        ("roster_index", [0] * 4, [0, 0, -1, 0], [False] * 4),
        ("roster_index", [0] * 4, [0, 0, 0, 1], [False] * 4),
        ("side", [0] * 4, [0] * 4, [0, 1, 2, 0]),
        ("side", [0] * 4, [0] * 4, [0.5] * 4),
    ],
)
def test_start_schedules_are_checked(record_property, env47, field, maps, rosters, swap):
    record_property("outcome", "error")
    with pytest.raises(ConfigError, match=rf"^{field}: "):
        env47.start_games(np.asarray(maps), np.asarray(rosters), np.asarray(swap))
