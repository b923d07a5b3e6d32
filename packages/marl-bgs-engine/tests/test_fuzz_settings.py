"""Fuzz: malformed settings handed to `marl_bgs.make("tdm", ...)` and the adapters' constructors.

Every input below is generated, not hand-picked one by one, and each must end in exactly one
outcome class: a `ConfigError` (or, for maps, a `MapError`; the exact class is checked) whose
message starts with the field it names, or, for the valid edge cases among them, an environment
that holds exactly the value given, as a plain Python value (numpy scalars of the right kind are
accepted for every field, the policy of `marl_bgs.core.checks`). Settings have no repair outcome:
nothing is clipped or coerced silently. No `TypeError`, `OverflowError`, numpy or JAX error may
escape, and no message may flood (a hostile value is shown cut).

Building an environment compiles nothing but the start pool (once per pool size and message
width), so the cases are cheap; one case steps a game (a reward function of the wrong shape is only
seen when the step is traced). The memory estimate that refuses huge batches is checked against a
compiled step at the end.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs import ConfigError
from marl_bgs.core.env import MAX_NUM_ENVS, batch_memory_estimate
from marl_bgs.core.registry import ALIASES, MODES
from marl_bgs.tdm.config import LIMITS, MESSAGE_DIM_MAX
from marl_bgs.tdm.maps import MapError
from marl_bgs.tdm.mode import make_tdm
from marl_bgs.tdm.scripted import scripted_act, scripted_numbers
from marl_bgs.testing import Check, Refused, case_label, check_setting, holds

pytestmark = pytest.mark.fuzz_family("make settings")

Expect = Refused | Check
Case = tuple[str, str, dict[str, Any], Expect]  # (id, builder, keywords, expect)
_label = case_label


def _jaxmarl(**kw: Any) -> Any:
    from marl_bgs.adapters.jaxmarl import JaxMARLEnv

    return JaxMARLEnv(kw.pop("mode", "tdm"), **kw)


def _pettingzoo(**kw: Any) -> Any:
    from marl_bgs.adapters.pettingzoo import PettingZooEnv

    return PettingZooEnv(kw.pop("mode", "tdm"), **kw)


def _jaxmarl_team(**kw: Any) -> Any:
    from marl_bgs.adapters.jaxmarl import JaxMARLTeamEnv

    return JaxMARLTeamEnv(kw.pop("mode", "tdm"), **kw)


BUILDERS: dict[str, Callable[..., Any]] = {
    "make": lambda **kw: marl_bgs.make(kw.pop("mode", "tdm"), **kw),
    "jaxmarl": _jaxmarl,
    "jaxmarl-team": _jaxmarl_team,
    "scripted": lambda **kw: marl_bgs.scripted_policy(**kw),
    # A style's numbers are checked before anything is traced (no inputs needed to refuse them).
    "scripted-numbers": lambda numbers: scripted_act(numbers, None, None, None),
    "pettingzoo": _pettingzoo,
}


def _native(env: Any) -> marl_bgs.TDMEnv:
    """The batched TDM env behind an adapter (or the env itself)."""
    return getattr(env, "native", env)


# --- the generated families ----------------------------------------------------------------------
WRONG_TYPES: list[Any] = ["5", None, [1], {"v": 1}, 1 + 0j, True, np.bool_(True), b"1"]
NON_FINITE: list[Any] = [math.nan, math.inf, -math.inf, np.float32("nan")]
HUGE: list[Any] = [2**40, 2**63, -(2**63), 10**400, 10**5000, np.uint64(2**64 - 1)]


def _rule_value_cases() -> list[Case]:
    """Every rule value of `LIMITS`: its limits (as Python and numpy scalars), just outside them,
    wrong types, non-finite and huge values."""
    cases: list[Case] = []
    for name, (lo, hi) in LIMITS.items():
        integral = isinstance(lo, int)
        span = re.escape(f"[{lo}, {hi}]")
        kind = "an integer" if integral else "a finite number"
        refused = Refused(rf"^{name}: expected {kind} in {span}, got ")
        if integral:
            accepted = [(lo, lo), (hi, hi), (np.int64(hi), hi), (np.int32(lo), lo)]
            outside = [lo - 1, hi + 1, -1, float(lo), np.float64(hi)]
        else:
            accepted = [(lo, lo), (hi, hi), (np.float32(hi), hi), (np.float64(lo), lo),
                        (np.int64(int(hi)), hi), (int(hi), hi)]  # fmt: skip
            outside = [math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf), -1.0,
                       np.float32(hi + 0.5)]  # fmt: skip
        for value, want in accepted:
            cases.append((f"{name}={_label(value)}", "make", {name: value},
                          holds(**{f"rule_values.{name}": want})))  # fmt: skip
        labels = {_label(v): v for v in outside + WRONG_TYPES + NON_FINITE + HUGE}  # distinct
        for label, value in labels.items():
            cases.append((f"{name}={label}", "make", {name: value}, refused))
    return cases


def _num_envs_cases() -> list[Case]:
    range_error = Refused(rf"^num_envs: expected an integer in \[1, {MAX_NUM_ENVS}\], got ")
    too_big = Refused(
        r"^num_envs: \d+ games need about [\d.]+ GiB, more than the [\d.]+ GiB that \w+ memory "
        r"holds; use at most about \d+",
        fast=True,
    )
    accepted = [1, np.int64(3), np.int32(2), np.uint8(4), 4096]
    outside = [0, -1, -(2**63), MAX_NUM_ENVS + 1, 2**40, 2**63, 10**400, 10**5000]
    wrong = [True, np.bool_(True), 2.0, np.float64(2.0), "4", None, [4], math.nan, math.inf, 4j]
    cases: list[Case] = [
        (f"num_envs={_label(v)}", "make", {"num_envs": v}, holds(num_envs=int(v))) for v in accepted
    ]
    cases += [(f"num_envs={_label(v)}", "make", {"num_envs": v}, range_error)
              for v in outside + wrong]  # fmt: skip
    cases += [(f"num_envs={_label(v)}", "make", {"num_envs": v}, too_big)
              for v in (10**8, MAX_NUM_ENVS, np.int64(10**8), np.int32(2**30))]  # fmt: skip
    return cases


def _static_setting_cases() -> list[Case]:
    """message_dim, shared_sight, spawn_swap: the mode's static settings and the side rule."""
    width = Refused(rf"^message_dim: expected an integer in \[0, {MESSAGE_DIM_MAX}\], got ")
    flag = Refused(r"^shared_sight: expected True or False, got ")
    side = Refused(r"^spawn_swap: expected one of \['half', 'none', 'all', 'random'\], got ")
    cases: list[Case] = []
    for v in (0, MESSAGE_DIM_MAX, np.int32(MESSAGE_DIM_MAX), np.int64(0)):
        cases.append((f"message_dim={_label(v)}", "make", {"message_dim": v},
                      holds(message_dim=int(v), **{"spec.message_dim": int(v)})))  # fmt: skip
    for v in (-1, MESSAGE_DIM_MAX + 1, True, np.bool_(False), 2.0, np.float32(2.0), "2", None,
              math.nan, 2**63, [2]):  # fmt: skip
        cases.append((f"message_dim={_label(v)}", "make", {"message_dim": v}, width))
    for v in (True, False, np.bool_(False), np.bool_(True)):
        cases.append((f"shared_sight={_label(v)}", "make", {"shared_sight": v},
                      holds(shared_sight=bool(v), **{"mode.shared_sight": bool(v)})))  # fmt: skip
    for v in (1, 0, np.int64(1), "yes", "False", None, [True], math.nan, 1.0):
        cases.append((f"shared_sight={_label(v)}", "make", {"shared_sight": v}, flag))
    for v in ("half", "none", "all", "random", np.str_("random")):
        cases.append((f"spawn_swap={_label(v)}", "make", {"spawn_swap": v},
                      holds(spawn_swap=str(v))))  # fmt: skip
    for v in (np.array(["half"]), 5, "HALF", "half ", "", None, True, b"half", ["half"],
              "x" * 10_000):  # fmt: skip
        cases.append((f"spawn_swap={_label(v)}", "make", {"spawn_swap": v}, side))
    return cases


def _maps_hold(*ids: int) -> Check:
    def check(env: Any) -> None:
        assert [m.id for m in _native(env).maps] == list(ids)
        assert np.asarray(_native(env).pool.states.map_id)[:, 0].tolist() == list(ids)

    return check


def _map_cases() -> list[Case]:
    unknown = r"^map_id: {} is not a shipped map; shipped ids: 0-51$"
    wrong_type = r"^map_id: expected an int id, a map name or a path, got "
    refused: list[tuple[Any, str]] = [
        (-1, unknown.format("-1")),
        (52, unknown.format("52")),
        (2**40, unknown.format(2**40)),
        (np.int64(-5), unknown.format("-5")),
        ("nonexistent", r"^map_id: no shipped map is named 'nonexistent'"),
        ([0, "x"], r"^map_id: no shipped map is named 'x'"),
        ([0, 52], unknown.format("52")),
        ("maps/m.txt", r"^map_id: 'maps/m\.txt' looks like a path, but .* must end in \.json"),
        ("maps/m.json", r"^map file 'maps/m\.json' does not exist"),
        (None, wrong_type + "None"),
        (3.0, wrong_type + "3.0"),
        (True, wrong_type + "True"),
        (np.float64(3.0), wrong_type),
        (math.nan, wrong_type + "nan"),
        ({}, wrong_type + r"\{\}"),
        (b"crossfire", wrong_type + "b'crossfire'"),
        (np.array([0, 47]), wrong_type + r"array\("),
        ([[0]], wrong_type + r"\[0\]"),
    ]
    cases: list[Case] = [
        (f"map_id={_label(v)}", "make", {"map_id": v}, Refused(p, MapError)) for v, p in refused
    ]
    cases.append(("map_id=[]", "make", {"map_id": []},
                  Refused(r"^map_id: expected a map or a non-empty list of maps$")))  # fmt: skip
    for v, ids in ((np.int64(47), (47,)), ("crossfire", (47,)), ("CROSSFIRE", (47,)),
                   ((0, 47), (0, 47)), ([np.int32(5)], (5,))):  # fmt: skip
        cases.append((f"map_id={_label(v)}", "make", {"map_id": v}, _maps_hold(*ids)))
    return cases


def _rosters_hold(*rows: list[int]) -> Check:
    def check(env: Any) -> None:
        rosters = _native(env).rosters
        assert rosters.dtype == np.int32
        assert rosters.tolist() == [list(r) for r in rows]

    return check


def _roster_cases() -> list[Case]:
    pair = r"^rosters: expected a pair like \('MWHRP', 'MWHRP'\) or a non-empty list of pairs$"
    size = r"^rosters\[{}\]\[{}\]: a team has 1 to 5 agents, got {}$"
    not_a_roster = r"^rosters\[0\]\[0\]: expected class letters like 'MWHRP' or a list of class "
    refused: list[tuple[str, Any, str]] = [
        ("6 letters", ("MWHRPM", "MWHRP"), size.format(0, 0, 6)),
        ("6, one unknown", ("MWHRPX", "MWHRP"), r"^rosters\[0\]\[0\]: unknown class letter"),
        ("empty strings", ("", ""), size.format(0, 0, 0)),
        ("empty tuples", ((), "M"), size.format(0, 0, 0)),
        ("team B of 6 ids", ("M", [1, 1, 1, 1, 1, 1]), size.format(0, 1, 6)),
        ("a 1-tuple", ("MWHRP",), r"^rosters\[0\]: expected a pair \(team A roster, team B"),
        ("an int", 5, pair),
        ("a bare roster", "MWHRP", pair),
        ("None inside", (None, None), r"^rosters\[0\]: expected a pair"),
        ("an empty list", [], pair),
        ("a dict", {"a": "M", "b": "W"}, pair),
        ("a set", {"M", "W"}, pair),
        ("one list of 6 ids", [[1, 2, 3, 4, 5, 6]], r"^rosters\[0\]: expected a pair"),
        ("float ids", ((1.0, 2.0), "MW"), not_a_roster + r"ids 1-5, got 1\.0$"),
        ("bool ids", ((True, 2), "MW"), not_a_roster + "ids 1-5, got True$"),
        ("a numpy array", ((np.array([1, 2]), "MW"),), not_a_roster + r"ids 1-5, got array\("),
        ("bytes", ((b"MW", "MW"),), not_a_roster + "ids 1-5, got b'MW'$"),
        ("class id 0", ((0, 1), "MWHRP"), r"^rosters\[0\]\[0\]: unknown class id\(s\) \[0\]"),
        ("class id 6", ("M", (1, 2, 6)), r"^rosters\[0\]\[1\]: unknown class id\(s\) \[6\]"),
        ("class id 10**5000", ((10**5000,), "M"),
         r"^rosters\[0\]\[0\]: unknown class id\(s\) \[an integer of 16610 bits\]"),
        ("class id -2**63", ((np.int64(-(2**63)),), "M"),
         r"^rosters\[0\]\[0\]: unknown class id\(s\) \[np\.int64\(-9223372\.\.\.\]"),
        ("letter X", ("MWHRX", "MWHRP"), r"^rosters\[0\]\[0\]: unknown class letter.*'X'"),
        ("second pair bad", [("MWHRP", "MWHRP"), ("MWH", "MWQ")],
         r"^rosters\[1\]\[1\]: unknown class letter.*'Q'"),
        ("second pair not a pair", [("MWHRP", "MWHRP"), "MW"], r"^rosters\[1\]: expected a pair"),
    ]  # fmt: skip
    cases: list[Case] = [(f"rosters {w}", "make", {"rosters": v}, Refused(p))
                         for w, v, p in refused]  # fmt: skip
    cases += [
        ("rosters lower case", "make", {"rosters": ("mwhrp", "W")},
         _rosters_hold([1, 2, 3, 4, 5, 2, 0, 0, 0, 0])),
        ("rosters numpy ids", "make", {"rosters": ((np.int64(1), np.int32(5)), [4, 4])},
         _rosters_hold([1, 5, 0, 0, 0, 4, 4, 0, 0, 0])),
        ("rosters two pairs", "make", {"rosters": [("MWHRP", "MWHRP"), ("M", "W")]},
         _rosters_hold([1, 2, 3, 4, 5, 1, 2, 3, 4, 5], [1, 0, 0, 0, 0, 2, 0, 0, 0, 0])),
    ]  # fmt: skip
    return cases


def _weights_hold(*weights: float) -> Check:
    def check(env: Any) -> None:
        assert np.asarray(_native(env).pool.weights).tolist() == list(weights)

    return check


def _weight_cases() -> list[Case]:
    one = r"^weights: expected 1 finite non-negative weights with a positive sum, got "
    two = r"^weights: expected 2 finite non-negative weights with a positive sum, got "
    cases: list[Case] = [
        (f"weights={_label(v)}", "make", {"weights": v}, Refused(one))
        for v in ([1, 1], [], [-1.0], [math.nan], [math.inf], [0.0], 1.0, {"a": 1}, [[1.0]],
                  ["x"], [None], [1j], "1")
    ]  # fmt: skip
    both = {"map_id": (0, 47)}
    cases += [
        ("weights all zero of 2", "make", {**both, "weights": [0.0, 0.0]}, Refused(two)),
        ("weights one negative of 2", "make", {**both, "weights": [1.0, -1e-9]}, Refused(two)),
        ("weights one of 2", "make", {**both, "weights": [1.0]}, Refused(two)),
        ("weights 2.5", "make", {"weights": [2.5]}, _weights_hold(2.5)),
        ("weights numpy ints", "make", {"weights": np.array([3])}, _weights_hold(3.0)),
        ("weights one zero of 2", "make", {**both, "weights": (0.0, np.float32(1.0))},
         _weights_hold(0.0, 1.0)),
    ]  # fmt: skip
    return cases


def _reward_fn_cases() -> list[Case]:
    def shaped(state: Any, nxt: Any, facts: Any) -> jax.Array:
        return jnp.zeros(10)

    def check(env: Any) -> None:
        assert env.reward_fn is shaped

    cases: list[Case] = [
        (f"reward_fn={_label(v)}", "make", {"reward_fn": v},
         Refused(rf"^reward_fn: expected a callable, got {type(v).__name__}$"))
        for v in (5, "terminal", [shaped], np.float64(1.0), True)
    ]  # fmt: skip
    cases += [
        ("reward_fn=None", "make", {"reward_fn": None}, holds(reward_fn=None)),
        ("reward_fn=a function", "make", {"reward_fn": shaped}, check),
    ]
    return cases


def _mesh_cases() -> list[Case]:
    one = jax.make_mesh((1,), ("games",))
    four = jax.sharding.Mesh(np.array(jax.devices() * 4), ("games",))  # 4 slots on this device

    def sharded(env: Any) -> None:
        assert env.sharding is not None
        assert env.sharding.spec == jax.sharding.PartitionSpec("games")

    cases: list[Case] = [
        (f"mesh={_label(v)}", "make", {"mesh": v},
         Refused(rf"^mesh: expected a jax.sharding.Mesh, got {type(v).__name__}$"))
        for v in ("gpu", 8, [one], jax.devices()[0])
    ]  # fmt: skip
    cases += [
        (f"mesh_axis={_label(v)}", "make", {"mesh": one, "mesh_axis": v},
         Refused(r"^mesh_axis: expected one of \['games'\], got "))
        for v in ("x", "", 0, None.__class__.__name__)
    ]  # fmt: skip
    cases += [
        ("mesh_axis without a mesh", "make", {"mesh_axis": "games"},
         Refused(r"^mesh_axis: 'games' given without a mesh$")),
        ("num_envs=6 over 4 devices", "make", {"mesh": four, "num_envs": 6},
         Refused(r"^num_envs: 6 games do not split evenly over the 4 devices")),
        ("mesh of one device", "make", {"mesh": one, "num_envs": 3}, sharded),
        ("mesh with its axis named", "make", {"mesh": one, "mesh_axis": "games"}, sharded),
        ("num_envs=8 over 4 devices", "make", {"mesh": four, "num_envs": 8}, sharded),
        ("mesh=None", "make", {"mesh": None}, holds(sharding=None)),
    ]  # fmt: skip
    return cases


def _keyword_and_mode_cases() -> list[Case]:
    unknown = (
        r"^{}: not a setting of tdm; allowed \['map_id', 'num_envs', .*'reward_fn', 'mesh',"
        r" 'mesh_axis'\]$"
    )
    cases: list[Case] = [
        (f"unknown keyword {k}", "make", {k: v}, Refused(unknown.format(k)))
        for k, v in (("bogus", 1), ("Map_id", 0), ("num_env", 4), ("side_rule", "half"),
                     ("seed", 0), ("facts", "agent"))
    ]  # fmt: skip
    allowed = re.escape(str(sorted(MODES) + sorted(ALIASES))).replace("{", "{{").replace("}", "}}")
    mode = r"^mode: unknown mode {}(?: \(did you mean '[^']+'\?\))?; allowed " + allowed + "$"
    cases += [
        (f"mode={_label(v)}", "make", {"mode": v}, Refused(mode.format(re.escape(repr(v)))))
        for v in ("deathmatch", "TDM", "tdm-v1", "", " tdm", None, 5)
    ]
    return cases


def _adapter_cases() -> list[Case]:
    one_game = r"^{}: the {} adapter runs one game without messages; use marl_bgs\.make\('tdm', "
    facts = r"^facts: expected one of \[None, 'agent', 'full'\], got "
    cases: list[Case] = []
    for name, label in (("jaxmarl", "JaxMARL"), ("pettingzoo", "PettingZoo")):
        batch = Refused(one_game.format("num_envs", label))
        cases += [
            (f"{name} num_envs=2", name, {"num_envs": 2}, batch),
            (f"{name} num_envs=1", name, {"num_envs": 1}, batch),
            (f"{name} message_dim=0", name, {"message_dim": 0},
             Refused(one_game.format("message_dim", label))),
            (f"{name} unknown keyword", name, {"bogus": 1},
             Refused(r"^bogus: not a setting of tdm; allowed \[")),
            (f"{name} winning_score=True", name, {"winning_score": True},
             Refused(r"^winning_score: expected an integer in \[1, 1000\], got True$")),
            (f"{name} shield_speed=nan", name, {"shield_speed": math.nan},
             Refused(r"^shield_speed: expected a finite number in \[0\.0, 2\.0\], got nan$")),
            (f"{name} map_id=52", name, {"map_id": 52},
             Refused(r"^map_id: 52 is not a shipped map", MapError)),
            (f"{name} rosters=5", name, {"rosters": 5}, Refused(r"^rosters: expected a pair")),
            (f"{name} mode=nope", name, {"mode": "nope"}, Refused(r"^mode: unknown mode 'nope'")),
            (f"{name} numpy settings", name,
             {"winning_score": np.int64(3), "red_zone_depth": np.float32(2.5),
              "shared_sight": np.bool_(False), "spawn_swap": np.str_("none"),
              "map_id": np.int32(5)},
             holds(**{"rule_values.winning_score": 3, "rule_values.red_zone_depth": 2.5,
                      "shared_sight": False, "spawn_swap": "none", "num_envs": 1})),
        ]  # fmt: skip
    cases += [
        (f"jaxmarl facts={_label(v)}", "jaxmarl", {"facts": v}, Refused(facts))
        for v in ("agents", "Agent", 1, ["agent"], True, {})
    ]
    cases += [
        (f"jaxmarl-team opponent={_label(v)}", "jaxmarl-team", {"opponent": v}, Refused(why))
        for v, why in (
            ("tdm-alpha", r"^opponent: expected a Policy \(e\.g\. marl_bgs\.scripted_policy"),
            ("x" * 5000, r"^opponent: expected a Policy .*, got 'xxx"),
            (5, r"^opponent: expected a Policy .*, got 5$"),
            (["tdm-alpha"], r"^opponent: expected a Policy .*, got \['tdm-alpha'\]$"),
        )
    ]
    cases += [
        ("jaxmarl facts=agent", "jaxmarl", {"facts": "agent"}, lambda env: None),
        ("jaxmarl-team no opponent", "jaxmarl-team", {},
         Refused(r"^opponent: tdm-v\d+ has two teams to control")),
        ("scripted_policy name too long", "scripted", {"name": "x" * 5000},
         Refused(r"^name: unknown scripted team 'xxx.{0,60}; allowed")),
        ("jaxmarl-team opponent for two-bridge", "jaxmarl-team",
         {"mode": "two-bridge", "opponent": marl_bgs.scripted_policy("tdm-alpha")},
         Refused(r"^opponent: .* plays its second")),
        ("jaxmarl-team opponent=tdm-beta", "jaxmarl-team",
         {"opponent": marl_bgs.scripted_policy("tdm-beta")}, lambda env: None),
        ("pettingzoo render_mode=human", "pettingzoo", {"render_mode": "human"},
         Refused(r"^render_mode: only None is supported, got 'human'$")),
    ]  # fmt: skip
    return cases


def _numbers_cases() -> list[Case]:
    """`scripted_act`'s style numbers: other names or shapes than `scripted_numbers` gives."""
    beta = scripted_numbers("tdm-beta")
    short = {**beta, "class_bonus": np.zeros(2, np.float32)}
    extra = {**beta, "speed": np.float32(1)}
    missing = {k: v for k, v in beta.items() if k != "peel"}
    shape = r"^numbers.{}: expected shape \({}\)"
    names = r"^numbers: expected a dict of \['low_health', 'class_bonus',"
    return [
        (f"scripted numbers {what}", "scripted-numbers", {"numbers": numbers}, Refused(why))
        for what, numbers, why in [
            ("class_bonus of 2", short, r"^numbers.class_bonus: expected shape \(5,\), got \(2,\)"),
            ("rally of 3", {**beta, "rally": np.zeros(3)}, shape.format("rally", "2,")),
            ("peel as [1]", {**beta, "peel": [0.5]}, shape.format("peel", "") + r", got \(1,\)"),
            ("extra name", extra, names + r".*got \['anchor_radius'"),
            ("missing peel", missing, names),
            ("a list", list(beta.values()), names + r".*got list$"),
            ("None", None, names + r".*got NoneType$"),
            ("a name", "tdm-beta", names + r".*got str$"),
        ]
    ]  # fmt: skip


SETTING_CASES: list[Case] = (
    _rule_value_cases() + _num_envs_cases() + _static_setting_cases() + _map_cases()
    + _roster_cases() + _weight_cases() + _reward_fn_cases() + _mesh_cases()
    + _keyword_and_mode_cases()
    + _adapter_cases() + _numbers_cases()
)  # fmt: skip


def test_there_are_enough_malformed_settings():
    errors = [c for c in SETTING_CASES if isinstance(c[3], Refused)]
    assert len(errors) >= 50
    assert len(SETTING_CASES) - len(errors) >= 10  # valid edge cases
    assert len({c[0] for c in SETTING_CASES}) == len(SETTING_CASES)
    keywords = {k for _, b, kw, _ in SETTING_CASES if b == "make" for k in kw}
    every = {k for k in inspect.signature(make_tdm).parameters if k != "unknown"}
    assert every <= keywords  # every keyword of make("tdm", ...) is fuzzed


def _plain(env: marl_bgs.TDMEnv) -> None:
    """An accepted env holds plain Python values, whatever scalar types it was given."""
    assert type(env.num_envs) is int
    assert type(env.shared_sight) is bool
    assert type(env.message_dim) is int
    assert type(env.spawn_swap) is str
    for name, (lo, _) in LIMITS.items():
        assert type(getattr(env.rule_values, name)) is type(lo), name
    assert env.mode == marl_bgs.TeamDeathmatch(env.shared_sight, env.message_dim)
    hash(env.mode)  # static: equal settings share compiled programs
    assert env.rosters.dtype == np.int32


@pytest.mark.parametrize(
    ("what", "build", "kwargs", "expect"), SETTING_CASES, ids=[c[0] for c in SETTING_CASES]
)
def test_settings(record_property, what, build, kwargs, expect):
    del what  # the case's id
    record_property("outcome", check_setting(BUILDERS[build], kwargs, expect, _plain))


# --- hostile values in maps, pools, the registry and the adapter --------------------------------
def _facts_array(kind: list[str]) -> Callable[[], Any]:
    return lambda: _jaxmarl(facts=np.array(kind))


KNOWN_BAD: list[tuple[str, Callable[[], Any], str]] = [
    ("map_id=10**5000 (ValueError: int too long to print, maps/registry.py)",
     lambda: marl_bgs.make("tdm", map_id=10**5000), r"^map_id: "),
    ("map_id=10**400 (the whole id is printed: the message floods, maps/registry.py)",
     lambda: marl_bgs.make("tdm", map_id=10**400), r"^map_id: .{0,300}$"),
    ("weights=[10**400] (OverflowError, core/pool.py check_weights)",
     lambda: marl_bgs.make("tdm", weights=[10**400]), r"^weights: "),
    ("weights of 100000 (the whole list is printed: the message floods, core/pool.py)",
     lambda: marl_bgs.make("tdm", weights=[1.0] * 100_000), r"^weights: .{0,300}$"),
    ("mode=['tdm'] (TypeError: unhashable, core/registry.py resolve)",
     lambda: marl_bgs.make(["tdm"]), r"^mode: "),  # type: ignore[arg-type]
    ("facts=np.array(['agent', 'full']) (ValueError: ambiguous truth, adapters/jaxmarl.py)",
     _facts_array(["agent", "full"]), r"^facts: "),
    ("facts=np.array(['agent']) (accepted as an array, adapters/jaxmarl.py)",
     _facts_array(["agent"]), r"^facts: "),
]  # fmt: skip


@pytest.mark.parametrize(("what", "build", "pattern"), KNOWN_BAD, ids=[c[0] for c in KNOWN_BAD])
def test_known_gaps(record_property, what, build, pattern):
    del what
    record_property("outcome", "error")
    with pytest.raises(ConfigError) as err:
        build()
    assert re.match(pattern, str(err.value), re.DOTALL), str(err.value)[:200]


# --- the one case that steps ---------------------------------------------------------------------
def test_reward_fn_of_the_wrong_shape_is_refused_when_the_step_is_traced(record_property):
    record_property("outcome", "error")
    env = marl_bgs.make("tdm", reward_fn=lambda s, n, f: jnp.zeros(3))
    _, state = env.reset(jax.random.key(0))
    with pytest.raises(ConfigError, match=r"^reward_fn: expected one reward per agent, shape "
                       r"\(10,\) for one game, got shape \(3,\)") as err:  # fmt: skip
        env.step(jax.random.key(0), state, np.zeros((1, 10, 3), np.int32))
    assert type(err.value) is ConfigError


# --- the memory estimate -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "settings", [{}, {"message_dim": 64, "shared_sight": False}], ids=["default", "messages 64"]
)
def test_memory_estimate_bounds_a_compiled_step(settings):
    """`batch_memory_estimate` is an upper bound on what one compiled batched step holds (its
    arguments, outputs and temporaries), and not a loose one (within 4x)."""
    n = 64
    env = marl_bgs.make("tdm", num_envs=n, **settings)
    key = jax.random.key(0)
    state = jax.eval_shape(lambda k: env.reset(k)[1], key)
    actions = jax.ShapeDtypeStruct((n, 10, 3), jnp.int32)
    step = jax.jit(lambda k, s, a: env.step(k, s, a))
    stats = step.lower(key, state, actions).compile().memory_analysis()
    if stats is None:
        pytest.skip("this backend reports no memory analysis")
    measured = stats.temp_size_in_bytes + stats.argument_size_in_bytes + stats.output_size_in_bytes
    estimate = batch_memory_estimate(env.pool, n)
    assert measured <= estimate, (measured, estimate)
    assert estimate <= 4 * measured, (measured, estimate)
