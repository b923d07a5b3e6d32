"""Fuzz: malformed settings handed to `make_two_bridge` (`marl_bgs.make("two-bridge", ...)`), and
malformed actions handed to a Two-Bridge env's `step`, on the host and under `jit`.

Every input below is generated, not hand-picked one by one, and each must end in exactly one
outcome class: a `ConfigError` (exactly that class) whose message starts with the field it names
and is at most 400 characters long, or, for the valid edge cases among the settings, an env that
holds exactly the value given, as a plain Python value (numpy scalars of the right kind are
accepted, the policy of `marl_bgs.core.checks`), or, for actions only known inside `jit`, the
documented repair (`marl_bgs.core.inputs`): an out-of-range index is illegal, carried out as
0 (no-op) and counted in `facts.rejected`, and the next state keeps every `tick_invariants` rule.
No `TypeError`, `OverflowError`, numpy or JAX error may escape, and no message may flood.

Building an env compiles only its start pool, so the settings cases are cheap; the action cases
reuse one env (and one reset state, one jitted step) per variant from module-level caches.
Hostile inputs that once flooded messages or kept numpy strings are kept as regressions in
`ONCE_BAD` and `ONCE_BAD_ACTIONS`.
"""

from __future__ import annotations

import inspect
import itertools
import math
import re
import zlib
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs import ConfigError
from marl_bgs.core.env import MAX_NUM_ENVS
from marl_bgs.testing import MAX_MESSAGE, Check, Refused, case_label, check_setting, holds
from marl_bgs.two_bridge import VARIANTS
from marl_bgs.two_bridge.layout import ENEMY_COUNTS, NUM_BASE_ACTIONS, NUM_FRIENDS, TICK_LIMIT
from marl_bgs.two_bridge.mode import TwoBridge, TwoBridgeEnv, make_two_bridge

pytestmark = pytest.mark.fuzz_family("two-bridge settings and actions")

TICK_MAX = 100_000  # make_two_bridge's upper bound on tick_limit


Expect = Refused | Check
Case = tuple[str, str, dict[str, Any], Expect]  # (id, builder, keywords, expect)

BUILDERS: dict[str, Callable[..., TwoBridgeEnv]] = {
    "tb": make_two_bridge,
    "make": lambda **kw: marl_bgs.make("two-bridge", **kw),
}

_label = case_label


def _enemies(variant: str) -> int:
    return ENEMY_COUNTS[variant.split("_")[0]]


def _plays(*variants: str) -> Check:
    """The env plays exactly these variants (plain strings, in order) with their enemy count."""

    def check(env: TwoBridgeEnv) -> None:
        assert env.variants == variants
        assert all(type(v) is str for v in env.variants), [type(v) for v in env.variants]
        assert env.mode.num_enemies == _enemies(variants[0])
        assert env.spec.action_heads == (NUM_BASE_ACTIONS + _enemies(variants[0]),)
        assert env.pool.size == len(variants)
        layouts = ("Base", "Combat", "Navigate")
        want = [layouts.index(v.split("_")[1]) for v in variants]
        assert np.asarray(env.pool.states.layout)[:, 0].tolist() == want

    return check


def _ticks(limit: int) -> Check:
    def check(env: TwoBridgeEnv) -> None:
        limits = np.asarray(env.pool.states.tick_limit)
        assert limits.dtype == np.int32
        assert np.all(limits == limit), limits

    return check


def _weighs(*weights: float) -> Check:
    def check(env: TwoBridgeEnv) -> None:
        assert np.asarray(env.pool.weights).tolist() == list(weights)

    return check


# --- the generated settings families -------------------------------------------------------------
WRONG_TYPES: list[Any] = ["5", None, [1], {"v": 1}, 1 + 0j, b"1", np.array([3])]
NON_FINITE: list[Any] = [math.nan, math.inf, -math.inf, np.float32("nan")]
LONG = "x" * 10_000
UNICODE = "V2_Bäse\u2603\u200b"


def _variant_cases() -> list[Case]:
    allowed = re.escape(str(list(VARIANTS)))
    unknown = rf"^variant: unknown .*; allowed {allowed}$"
    not_a_list = rf"^variant: expected a name or a non-empty list; allowed {allowed}$"
    twice = r"^variant: \[.*\] listed more than once$"
    mixes = r"^variant: \[.*\] mixes unit counts {}; the enemy count fixes the shapes"
    refused: list[tuple[Any, str]] = [(v, not_a_list) for v in (
        None, [], (), {}, set(), {"V2_Base": 1}, {"V2_Base"}, 5, 2.0, True, b"V2_Base",
        np.array(["V2_Base"]), np.array(["V1_Base", "V1_Combat"]))]  # fmt: skip
    refused += [(v, unknown) for v in (
        "", "V4_Base", "v2_base", "V2_base", "V2_Base ", " V2_Base", "V2", "Base", "V2-Base",
        "V2_Base\x00", UNICODE, LONG, [["V2_Base"]], ["V2_Base", None], ["V1_Base", 1],
        ("V1_Base", "V1_Bogus"), ["V1_Base", LONG], [b"V1_Base"])]  # fmt: skip
    refused += [
        (["V2_Base", "V2_Base"], twice),
        (("V3_Navigate", "V3_Combat", "V3_Navigate"), twice),
        (["V1_Base", "V2_Base"], mixes.format(re.escape("['V1', 'V2']"))),
        (["V1_Base", "V2_Combat", "V3_Navigate"], mixes.format(re.escape("['V1', 'V2', 'V3']"))),
        (("V3_Base", "V1_Base"), mixes.format(re.escape("['V1', 'V3']"))),
    ]
    cases: list[Case] = [
        (f"variant={_label(v)}", "tb", {"variant": v}, Refused(p)) for v, p in refused
    ]
    cases += [(f"variant={v}", "tb", {"variant": v}, _plays(v)) for v in VARIANTS]
    for group in (("V1_Base", "V1_Combat"), ("V2_Navigate", "V2_Base"),
                  ("V3_Base", "V3_Combat", "V3_Navigate")):  # fmt: skip
        cases.append((f"variant={list(group)}", "tb", {"variant": list(group)}, _plays(*group)))
    cases.append(("variant=tuple", "tb", {"variant": ("V1_Navigate",)}, _plays("V1_Navigate")))
    return cases


def _num_envs_cases() -> list[Case]:
    range_error = Refused(rf"^num_envs: expected an integer in \[1, {MAX_NUM_ENVS}\], got ")
    too_big = Refused(
        r"^num_envs: \d+ games need about [\d.]+ GiB, more than the [\d.]+ GiB that \w+ memory "
        r"holds; use at most about \d+",
        fast=True,
    )
    accepted = [1, np.int64(3), np.int32(2), np.uint8(4), 4096]
    outside = [0, -1, -(2**63), MAX_NUM_ENVS + 1, 2**63, 10**400, 10**5000, np.uint64(2**64 - 1)]
    wrong = [True, np.bool_(True), 2.0, np.float64(2.0), *WRONG_TYPES, *NON_FINITE]
    cases: list[Case] = [
        (f"num_envs={_label(v)}", "tb", {"num_envs": v}, holds(num_envs=int(v))) for v in accepted
    ]
    labels = {_label(v): v for v in outside + wrong}
    cases += [(f"num_envs={k}", "tb", {"num_envs": v}, range_error) for k, v in labels.items()]
    cases += [(f"num_envs={_label(v)}", "tb", {"num_envs": v}, too_big)
              for v in (10**8, MAX_NUM_ENVS, np.int64(10**8))]  # fmt: skip
    return cases


def _fog_cases() -> list[Case]:
    flag = Refused(r"^fog: expected True or False, got ")
    cases: list[Case] = [
        (f"fog={_label(v)}", "tb", {"fog": v}, holds(fog=bool(v), **{"mode.fog": bool(v)}))
        for v in (True, False, np.bool_(True), np.bool_(False))
    ]
    cases += [(f"fog={_label(v)}", "tb", {"fog": v}, flag)
              for v in (0, 1, np.int64(1), 1.0, "True", "yes", "", None, [True], math.nan,
                        np.array(True), np.array([True]))]  # fmt: skip
    return cases


def _tick_limit_cases() -> list[Case]:
    range_error = Refused(rf"^tick_limit: expected an integer in \[1, {TICK_MAX}\], got ")
    cases: list[Case] = [
        (f"tick_limit={_label(v)}", "tb", {"tick_limit": v}, _ticks(int(v)))
        for v in (1, TICK_MAX, TICK_LIMIT, np.int32(7), np.int64(600), np.uint16(50))
    ]
    bad = [0, -1, TICK_MAX + 1, 2**31, 2**63, 10**400, 10**5000, True, np.bool_(False), 600.0,
           np.float32(600), np.int64(-5), *WRONG_TYPES, *NON_FINITE]  # fmt: skip
    labels = {_label(v): v for v in bad}
    cases += [(f"tick_limit={k}", "tb", {"tick_limit": v}, range_error) for k, v in labels.items()]
    return cases


def _spawn_swap_cases() -> list[Case]:
    side = Refused(r"^spawn_swap: expected one of \['half', 'none', 'all', 'random'\], got ")
    cases: list[Case] = [
        (f"spawn_swap={_label(v)}", "tb", {"spawn_swap": v}, holds(spawn_swap=str(v)))
        for v in ("half", "none", "all", "random", np.str_("all"))
    ]
    cases += [(f"spawn_swap={_label(v)}", "tb", {"spawn_swap": v}, side)
              for v in ("HALF", "half ", "", "mirror", "h\u00e4lf", LONG, None, 5, True, b"half",
                        ["half"], ("none",), np.array(["half"]), {"half": 1})]  # fmt: skip
    # The old name of the setting is refused with the new one, whatever its value.
    renamed = Refused(r"^side_rule: renamed spawn_swap .*; pass spawn_swap=")
    cases += [
        (f"side_rule={_label(v)} ({b})", b, {"side_rule": v}, renamed)
        for v, b in itertools.product(("half", "none", 5), ("tb", "make"))
    ]
    return cases


def _weight_cases() -> list[Case]:
    def refused(count: int) -> Refused:
        return Refused(
            rf"^weights: expected {count} finite non-negative weights with a positive sum, got "
        )

    three = {"variant": ["V2_Base", "V2_Combat", "V2_Navigate"]}
    singles = [[1, 1], [], [-1.0], [math.nan], [math.inf], [-math.inf], [0.0], [-0.0], 1.0,
               np.float32(1.0), {"a": 1}, [[1.0]], np.array([[1.0]]), ["x"], [None], [1j], "1",
               [True], [np.bool_(True)], [10**400], [1e300], [1e-50], [1.0] * 100_000,
               np.array([np.nan])]  # fmt: skip
    cases: list[Case] = [
        (f"weights={_label(v)}", "tb", {"weights": v}, refused(1)) for v in singles
    ]
    for what, value in (("all zero", [0, 0, 0]), ("two of 3", [1.0, 1.0]),
                        ("one negative", [1.0, -1e-9, 1.0]), ("one NaN", [1.0, math.nan, 1.0]),
                        ("100000 of 3", [1.0] * 100_000), ("a 3x1 array", np.ones((3, 1))),
                        ("one 10**400", [1, 10**400, 1]), ("one string", [1, "2", 3])):  # fmt: skip
        cases.append((f"weights {what}", "tb", {**three, "weights": value}, refused(3)))
    cases += [
        ("weights=None", "tb", {"weights": None}, _weighs(1.0)),
        ("weights=[2.5]", "tb", {"weights": [2.5]}, _weighs(2.5)),
        ("weights numpy ints", "tb", {"weights": np.array([3])}, _weighs(3.0)),
        ("weights numpy scalars of 3", "tb",
         {**three, "weights": (np.float32(0.5), np.int64(0), 2)}, _weighs(0.5, 0.0, 2.0)),
        ("weights one zero of 3", "tb", {**three, "weights": [0.0, 0.0, 1.0]},
         _weighs(0.0, 0.0, 1.0)),
    ]  # fmt: skip
    return cases


def _shaped(state: Any, nxt: Any, facts: Any) -> jax.Array:
    return jnp.zeros(NUM_FRIENDS)


def _reward_fn_cases() -> list[Case]:
    def check(env: TwoBridgeEnv) -> None:
        assert env.reward_fn is _shaped

    cases: list[Case] = [
        (f"reward_fn={_label(v)}", "tb", {"reward_fn": v},
         Refused(rf"^reward_fn: expected a callable, got {type(v).__name__}$"))
        for v in (5, "team", [_shaped], np.float64(1.0), True, {}, LONG)
    ]  # fmt: skip
    cases += [
        ("reward_fn=None", "tb", {"reward_fn": None}, holds(reward_fn=None)),
        ("reward_fn=a function", "tb", {"reward_fn": _shaped}, check),
    ]
    return cases


ONE = jax.make_mesh((1,), ("games",))
FOUR = jax.sharding.Mesh(np.array(jax.devices() * 4), ("games",))  # 4 slots on this device


def _mesh_cases() -> list[Case]:
    def sharded(env: TwoBridgeEnv) -> None:
        assert env.sharding is not None
        assert env.sharding.spec == jax.sharding.PartitionSpec("games")

    cases: list[Case] = [
        (f"mesh={_label(v)}", "tb", {"mesh": v},
         Refused(rf"^mesh: expected a jax.sharding.Mesh, got {type(v).__name__}$"))
        for v in ("gpu", 8, [ONE], jax.devices()[0], {}, np.array([1]))
    ]  # fmt: skip
    cases += [
        (f"mesh_axis={_label(v)}", "tb", {"mesh": ONE, "mesh_axis": v},
         Refused(r"^mesh_axis: expected one of \['games'\], got "))
        for v in ("x", "", "Games", 0, ["games"], {})
    ]  # fmt: skip
    cases += [
        ("mesh_axis without a mesh", "tb", {"mesh_axis": "games"},
         Refused(r"^mesh_axis: 'games' given without a mesh$")),
        ("num_envs=6 over 4 devices", "tb", {"mesh": FOUR, "num_envs": 6},
         Refused(r"^num_envs: 6 games do not split evenly over the 4 devices")),
        ("mesh of one device", "tb", {"mesh": ONE, "num_envs": 3}, sharded),
        ("mesh with its axis named", "tb", {"mesh": ONE, "mesh_axis": "games"}, sharded),
        ("num_envs=8 over 4 devices", "tb", {"mesh": FOUR, "num_envs": 8}, sharded),
        ("mesh=None", "tb", {"mesh": None}, holds(sharding=None)),
    ]  # fmt: skip
    return cases


def _keyword_cases() -> list[Case]:
    known = re.escape(str([k for k in inspect.signature(make_two_bridge).parameters
                           if k != "unknown"]))  # fmt: skip
    cases: list[Case] = [
        (f"unknown keyword {_label(k)} ({b})", b, {k: v},
         Refused(rf"^{re.escape(k[:60])}: not a setting of two-bridge; allowed {known}$"))
        for (k, v), b in itertools.product(
            (("bogus", 1), ("Variant", "V2_Base"), ("num_env", 4), ("map_id", 0),
             ("rosters", "MWHRP"), ("message_dim", 0), ("seed", 0),
             ("variants", ["V1_Base"]), ("x" * 10_000, 1), ("\u00fc" * 100, 1)),
            ("tb", "make"))
    ]  # fmt: skip
    cases += [
        ("make variant=V1_Combat", "make", {"variant": "V1_Combat"}, _plays("V1_Combat")),
        ("make every keyword", "make",
         {"variant": ("V3_Base", "V3_Navigate"), "num_envs": np.int64(2), "fog": np.bool_(True),
          "tick_limit": np.int32(30), "spawn_swap": np.str_("random"), "weights": [1, 3],
          "reward_fn": None, "mesh": ONE, "mesh_axis": "games"},
         holds(num_envs=2, fog=True, spawn_swap="random", **{"mode.fog": True})),
    ]  # fmt: skip
    return cases


SETTING_CASES: list[Case] = (
    _variant_cases() + _num_envs_cases() + _fog_cases() + _tick_limit_cases()
    + _spawn_swap_cases() + _weight_cases() + _reward_fn_cases() + _mesh_cases()
    + _keyword_cases()
)  # fmt: skip


def test_there_are_enough_malformed_settings():
    errors = [c for c in SETTING_CASES if isinstance(c[3], Refused)]
    assert len(errors) >= 60
    assert len(SETTING_CASES) - len(errors) >= 10  # valid edge cases
    assert len({c[0] for c in SETTING_CASES}) == len(SETTING_CASES)
    every = {k for k in inspect.signature(make_two_bridge).parameters if k != "unknown"}
    refused = {k for _, _, kw, e in SETTING_CASES if isinstance(e, Refused) for k in kw}
    accepted = {k for _, _, kw, e in SETTING_CASES if not isinstance(e, Refused) for k in kw}
    assert every <= refused  # every keyword of make_two_bridge gets malformed values...
    assert every <= accepted  # ...and valid edge cases


def _plain(env: TwoBridgeEnv) -> None:
    """An accepted env holds plain Python values, whatever scalar types it was given."""
    assert isinstance(env, TwoBridgeEnv)
    assert type(env.num_envs) is int
    assert type(env.fog) is bool
    assert type(env.spawn_swap) is str
    assert type(env.variants) is tuple
    assert all(type(v) is str for v in env.variants), [type(v) for v in env.variants]
    assert type(env.mode.num_enemies) is int
    assert env.mode == TwoBridge(num_enemies=_enemies(env.variants[0]), fog=env.fog)
    hash(env.mode)  # static: equal settings share compiled programs


@pytest.mark.parametrize(
    ("what", "build", "kwargs", "expect"), SETTING_CASES, ids=[c[0] for c in SETTING_CASES]
)
def test_settings(record_property, what, build, kwargs, expect):
    del what  # the case's id
    record_property("outcome", check_setting(BUILDERS[build], kwargs, expect, _plain))


def test_reward_fn_of_the_wrong_shape_is_refused_when_the_step_is_traced(record_property):
    record_property("outcome", "error")
    env = make_two_bridge(variant="V1_Base", reward_fn=lambda s, n, f: jnp.zeros(3))
    _, state = env.reset(jax.random.key(0))
    with pytest.raises(ConfigError, match=r"^reward_fn: expected one reward per agent, shape "
                       r"\(5,\) for one game, got shape \(3,\)") as err:  # fmt: skip
        env.step(None, state, np.zeros((1, NUM_FRIENDS), np.int32))
    assert type(err.value) is ConfigError


# --- actions on the host --------------------------------------------------------------------------
N = 3  # games per action env
ACTION_VARIANTS = ("V1_Base", "V2_Combat", "V3_Navigate")  # 3, 5 and 8 enemies
AGENTS = tuple(f"marine_{i}" for i in range(NUM_FRIENDS))
_ENVS: dict[str, tuple[TwoBridgeEnv, Any]] = {}
_JITTED: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {}


def _env(variant: str) -> tuple[TwoBridgeEnv, Any]:
    """The shared env of a variant and its reset state (built and compiled once per module)."""
    if variant not in _ENVS:
        env = make_two_bridge(variant=variant, num_envs=N)
        _ENVS[variant] = (env, env.reset(jax.random.key(0))[1])
    return _ENVS[variant]


def _jitted(variant: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The variant's jitted step and jitted per-game `tick_invariants`."""
    if variant not in _JITTED:
        env, _ = _env(variant)
        _JITTED[variant] = (jax.jit(env.step), jax.jit(jax.vmap(env.mode.tick_invariants)))
    return _JITTED[variant]


def _width(variant: str) -> int:
    return NUM_BASE_ACTIONS + _enemies(variant)


ActionCase = tuple[str, str, Any, str]  # (id, variant, actions, pattern)
SHAPE = r"^actions: expected shape \(3, 5, 1\) heads or \(3, 5\) flat indices \(or a dict of "


def _out_of_range_cases() -> list[ActionCase]:
    """Values outside [0, 9 + N_E) at a random game and agent, flat and as the one head."""
    rng = np.random.default_rng(2025)
    cases: list[ActionCase] = []
    for variant in ACTION_VARIANTS:
        w = _width(variant)
        values = (-1, w, w + 1, 10**6, -(2**31), 2**31 - 1, 2**40, -(2**63))
        for value, dtype in itertools.product(values, (np.int32, np.int64)):
            if not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
                continue
            g, k = (int(x) for x in rng.integers((N, NUM_FRIENDS)))
            flat = rng.integers(0, w, (N, NUM_FRIENDS)).astype(dtype)  # legal indices elsewhere
            flat[g, k] = value
            pattern = rf"^actions\['marine_{k}'\]: flat action {value} in game {g} is outside"
            cases.append((f"{variant} flat {_label(value)} {np.dtype(dtype).name}", variant, flat,
                          rf"{pattern} \[0, {w}\)$"))  # fmt: skip
        for value, kind in ((-1, np.int8), (w, np.int16), (2**33, np.int64),
                            (2**64 - 1, np.uint64), (w, np.uint8)):  # fmt: skip
            g, k = (int(x) for x in rng.integers((N, NUM_FRIENDS)))
            heads = np.zeros((N, NUM_FRIENDS, 1), kind)
            heads[g, k, 0] = value
            pattern = (
                rf"^actions\['marine_{k}'\]: action {value} in game {g} is outside \[0, {w}\)$"
            )
            cases.append((f"{variant} head {value} {np.dtype(kind).name}", variant, heads, pattern))
        first = rf"^actions\['marine_0'\]: flat action {w} in game 0 is outside"
        cases.append((f"{variant} jax array {w}", variant,
                      jnp.full((N, NUM_FRIENDS), w, jnp.int32), first))  # fmt: skip
        cases.append((f"{variant} list {w}", variant, [[w] * NUM_FRIENDS] * N, first))
    return cases


def _malformed_arrays() -> list[ActionCase]:
    """Wrong dtypes, shapes and kinds (on the V2 env: they do not depend on the width)."""
    v = "V2_Combat"
    cases: list[ActionCase] = []
    for dtype, fill in ((np.float32, 0.0), (np.float64, 0.5), (np.float32, np.nan),
                        (np.float64, np.inf), (np.complex64, 1j), (bool, True),
                        (np.float16, 1.0)):  # fmt: skip
        for shape in ((N, NUM_FRIENDS), (N, NUM_FRIENDS, 1)):
            name = np.dtype(dtype).name
            cases.append((f"dtype {name} {fill} {shape}", v, np.full(shape, fill, dtype),
                          rf"^actions: expected integers, got dtype {name}$"))  # fmt: skip
    for shape in ((N,), (NUM_FRIENDS,), (N, NUM_FRIENDS, 2), (N, NUM_FRIENDS - 1),
                  (N, NUM_FRIENDS + 1), (N + 1, NUM_FRIENDS), (1, NUM_FRIENDS), (),
                  (N, NUM_FRIENDS, 1, 1), (NUM_FRIENDS, N), (0, NUM_FRIENDS)):  # fmt: skip
        cases.append((f"shape {shape}", v, np.zeros(shape, np.int32),
                      SHAPE + re.escape(f"agents), got {shape}") + "$"))  # fmt: skip
    cases += [
        ("a string", v, "noop", SHAPE),
        ("None", v, None, SHAPE),
        ("a set", v, {1, 2}, SHAPE),
        ("a ragged list", v, [[0, 1], [2]], r"^actions: expected an integer array, got list$"),
        ("objects", v, np.array([object()] * N), SHAPE),
        ("a list of floats", v, [[0.5] * NUM_FRIENDS] * N, r"^actions: expected integers"),
        ("a list of 10**400", v, [[10**400] * NUM_FRIENDS] * N,
         r"^actions: expected integers, got dtype object$"),
        ("a list of strings", v, [["1"] * NUM_FRIENDS] * N, r"^actions: expected integers"),
        ("a list of dicts", v, [dict.fromkeys(AGENTS, 0)], SHAPE),
        ("a jax float array", v, jnp.zeros((N, NUM_FRIENDS)), r"^actions: expected integers"),
    ]  # fmt: skip
    return cases


def _malformed_dicts() -> list[ActionCase]:
    v, w = "V2_Combat", _width("V2_Combat")
    ok = {a: np.zeros(N, np.int32) for a in AGENTS}
    agents = re.escape(str(list(AGENTS)))

    def names(unknown: str, missing: str) -> str:
        return (rf"^actions: unknown agent\(s\) {re.escape(unknown)}, missing agent\(s\) "
                rf"{re.escape(missing)}; expected exactly {agents}$")  # fmt: skip

    cases: list[ActionCase] = [
        ("dict unknown agent", v, {**ok, "marine_5": np.zeros(N, np.int32)},
         names("['marine_5']", "[]")),
        ("dict a_0 (a TDM agent)", v, {**ok, "a_0": np.zeros(N, np.int32)},
         names("['a_0']", "[]")),
        ("dict missing agent", v, {a: x for a, x in ok.items() if a != "marine_4"},
         names("[]", "['marine_4']")),
        ("dict renamed agent", v,
         {**{a: x for a, x in ok.items() if a != "marine_0"}, "Marine_0": ok["marine_0"]},
         names("['Marine_0']", "['marine_0']")),
        ("dict non-string key", v, {**ok, 7: np.zeros(N, np.int32)}, names("['7']", "[]")),
        ("dict None key", v, {**ok, None: 0}, names("['None']", "[]")),
        ("empty dict", v, {}, names("[]", str(list(AGENTS)))),
        ("dict one agent heads, others flat", v, {**ok, "marine_2": np.zeros((N, 1), np.int32)},
         r"^actions: give every agent flat indices or every agent heads, not both$"),
    ]  # fmt: skip
    for agent in (AGENTS[0], AGENTS[-1]):
        shape = rf"^actions\['{agent}'\]: expected shape \(3,\) flat or \(3, 1\) heads, got "
        cases += [
            (f"dict {agent} float", v, {**ok, agent: np.zeros(N, np.float32)},
             r"^actions: expected integers, got dtype float"),
            (f"dict {agent} NaN", v, {**ok, agent: np.full(N, np.nan)},
             r"^actions: expected integers, got dtype float64$"),
            (f"dict {agent} wrong length", v, {**ok, agent: np.zeros(N + 2, np.int32)},
             shape + r"\(5,\)$"),
            (f"dict {agent} two heads", v, {**ok, agent: np.zeros((N, 2), np.int32)},
             shape + r"\(3, 2\)$"),
            (f"dict {agent} a string", v, {**ok, agent: "north"}, shape + r"\(\)$"),
            (f"dict {agent} None", v, {**ok, agent: None}, shape + r"\(\)$"),
            (f"dict {agent} ragged", v, {**ok, agent: [[0], [1, 2], []]},
             rf"^actions\['{agent}'\]: expected an integer array, got list$"),
            (f"dict {agent} flat {w}", v, {**ok, agent: np.full(N, w)},
             rf"^actions\['{agent}'\]: flat action {w} in game 0 is outside \[0, {w}\)$"),
            (f"dict {agent} flat -1", v, {**ok, agent: np.full(N, -1)},
             rf"^actions\['{agent}'\]: flat action -1 in game 0 is outside \[0, {w}\)$"),
        ]  # fmt: skip
    return cases


ACTION_CASES = _out_of_range_cases() + _malformed_arrays() + _malformed_dicts()


def test_there_are_enough_malformed_actions():
    assert len(ACTION_CASES) >= 60
    assert len({c[0] for c in ACTION_CASES}) == len(ACTION_CASES)


def _refused_on_the_host(variant: str, actions: Any, pattern: str) -> None:
    env, state = _env(variant)
    with pytest.raises(ConfigError) as err:
        env.step(None, state, actions)
    assert type(err.value) is ConfigError, repr(err.value)
    message = str(err.value)
    assert len(message) <= MAX_MESSAGE, (len(message), message[:200])
    assert re.match(r"^actions(\[|:)", message), message[:200]
    assert re.match(pattern, message), message[:300]


@pytest.mark.parametrize(
    ("what", "variant", "actions", "pattern"), ACTION_CASES, ids=[c[0] for c in ACTION_CASES]
)
def test_malformed_actions_are_refused_naming_the_field(
    record_property, what, variant, actions, pattern
):
    del what  # the case's id
    record_property("outcome", "error")
    _refused_on_the_host(variant, actions, pattern)


# --- actions under jit ----------------------------------------------------------------------------
RepairCase = tuple[str, str, str, int]  # (id, variant, form, value)


def _repair_cases() -> list[RepairCase]:
    cases: list[RepairCase] = []
    for variant in ACTION_VARIANTS:
        w = _width(variant)
        for value in (w, w + 7, 2**20, 2**31 - 1, -1, -(2**31)):
            cases.append((f"{variant} flat {_label(value)}", variant, "flat", value))
    for form in ("heads", "dict"):
        for value in (_width("V2_Combat"), -1, 2**31 - 1):
            cases.append((f"V2_Combat {form} {_label(value)}", "V2_Combat", form, value))
    return cases


REPAIR_CASES = _repair_cases()


@pytest.mark.parametrize(
    ("what", "variant", "form", "value"), REPAIR_CASES, ids=[c[0] for c in REPAIR_CASES]
)
def test_under_jit_out_of_range_actions_are_repaired_to_a_noop(
    record_property, what, variant, form, value
):
    """Some friends (at least one per game) ask for `value`, the rest for a random move (always
    legal for a living friend of a running game): exactly the former are rejected and idle."""
    record_property("outcome", "repair")
    _, state = _env(variant)
    step, invariants = _jitted(variant)
    rng = np.random.default_rng(zlib.crc32(what.encode()))
    bad = rng.random((N, NUM_FRIENDS)) < 0.5
    bad[np.arange(N), rng.integers(0, NUM_FRIENDS, N)] = True
    moves = rng.integers(1, NUM_BASE_ACTIONS, (N, NUM_FRIENDS))
    given = np.where(bad, value, moves).astype(np.int32)
    actions: Any = jnp.asarray(given)
    if form == "heads":
        actions = actions[..., None]
    elif form == "dict":
        actions = {a: actions[:, i] for i, a in enumerate(AGENTS)}
    _, nxt, reward, _, info = step(None, state, actions)
    facts = info["facts"]
    np.testing.assert_array_equal(np.asarray(facts.requested), given)
    np.testing.assert_array_equal(np.asarray(facts.rejected), bad)
    np.testing.assert_array_equal(np.asarray(facts.accepted), np.where(bad, 0, given))
    assert np.all(np.asarray(facts.accepted)[bad] == 0)  # no-op, not a leaked move or attack
    checks = invariants(state, nxt, facts)
    failed = [name for name, ok in checks.items() if not np.all(np.asarray(ok))]
    assert not failed, failed
    np.testing.assert_array_equal(np.asarray(nxt.tick), np.asarray(state.tick) + 1)
    assert np.all(np.isfinite(np.asarray(nxt.friend_pos)))
    assert all(np.all(np.isfinite(np.asarray(r))) for r in reward.values())


JIT_ERROR_CASES: list[tuple[str, Any, str]] = [
    ("float32", jnp.zeros((N, NUM_FRIENDS)), r"^actions: expected integers, got dtype float32$"),
    ("bool", jnp.zeros((N, NUM_FRIENDS), bool), r"^actions: expected integers, got dtype bool$"),
    ("shape (3, 4)", jnp.zeros((N, 4), jnp.int32), SHAPE + r"agents\), got \(3, 4\)$"),
    ("shape (3, 5, 2)", jnp.zeros((N, NUM_FRIENDS, 2), jnp.int32), SHAPE),
    ("dict missing agent", {a: jnp.zeros(N, jnp.int32) for a in AGENTS[1:]},
     r"^actions: unknown agent\(s\) \[\], missing agent\(s\) \['marine_0'\]"),
    ("dict float agent", {a: jnp.zeros(N) for a in AGENTS},
     r"^actions: expected integers, got dtype float32$"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("what", "actions", "pattern"), JIT_ERROR_CASES, ids=[c[0] for c in JIT_ERROR_CASES]
)
def test_under_jit_malformed_shapes_and_dtypes_are_refused_when_traced(
    record_property, what, actions, pattern
):
    del what
    record_property("outcome", "error")
    env, state = _env("V2_Combat")
    with pytest.raises(ConfigError) as err:
        jax.jit(env.step)(None, state, actions)
    assert type(err.value) is ConfigError, repr(err.value)
    assert len(str(err.value)) <= MAX_MESSAGE
    assert re.match(pattern, str(err.value)), str(err.value)[:300]


# --- hostile values that once got through (fixed; kept as regressions) ---------------------------
_FLOOD = r"^{}: .{{0,380}}$"  # names the field, and the message stays short
ONCE_BAD = [
    pytest.param(
        {"variant": ["V1_Base"] * 100_000}, Refused(_FLOOD.format("variant")),
        id="variant=['V1_Base'] * 100000 (the message floods)",
    ),
    pytest.param(
        {"variant": ["V2_Base", "V2_Combat"] * 5_000}, Refused(_FLOOD.format("variant")),
        id="variant=['V2_Base', 'V2_Combat'] * 5000 (the message floods)",
    ),
    pytest.param(
        {"variant": np.str_("V2_Base")}, _plays("V2_Base"),
        id="variant=np.str_('V2_Base') (stored as np.str_)",
    ),
    pytest.param(
        {"variant": [np.str_("V1_Base"), "V1_Combat"]}, _plays("V1_Base", "V1_Combat"),
        id="variant=[np.str_('V1_Base'), 'V1_Combat'] (stored as np.str_)",
    ),
    pytest.param(
        {"mesh": ONE, "mesh_axis": LONG}, Refused(_FLOOD.format("mesh_axis")),
        id="mesh_axis='x' * 10000 with a mesh (the message floods)",
    ),
    pytest.param(
        {"mesh_axis": LONG}, Refused(_FLOOD.format("mesh_axis")),
        id="mesh_axis='x' * 10000 without a mesh (the message floods)",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("kwargs", "expect"), ONCE_BAD)
def test_once_bad_settings(record_property, kwargs, expect):
    record_property("outcome", check_setting(BUILDERS["tb"], kwargs, expect, _plain))


_OK = {a: np.zeros(N, np.int32) for a in AGENTS}
ONCE_BAD_ACTIONS = [
    pytest.param(
        {**_OK, "m" * 10_000: np.zeros(N, np.int32)},
        id="dict with a 10000-character agent name (the message floods)",
    ),
    pytest.param(
        {**_OK, **{f"x{i}": 0 for i in range(10_000)}},
        id="dict with 10000 unknown agents (the message floods)",
    ),
]


@pytest.mark.parametrize("actions", ONCE_BAD_ACTIONS)
def test_once_bad_actions(record_property, actions):
    record_property("outcome", "error")
    _refused_on_the_host("V2_Combat", actions, r"^actions: unknown agent\(s\) ")


def test_case_ids_name_objects_without_memory_addresses():
    # pytest-xdist compares the ids every worker collects: an address would differ between them.
    assert _label([_shaped]) == "[<function _shaped>]"
    assert " at 0x" not in _label(object())
