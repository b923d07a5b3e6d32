"""Fuzz: malformed authored states handed to `marl_bgs.author_state(...)` with `UnitSpec`s.

Every input below is generated, not hand-picked one by one, and each must end in exactly one
outcome class: a `ConfigError` whose message starts with the field it names ("units[0].health: ",
"score[1]: ", "map_id: ", ...), or, for the valid edge cases among them, a state holding exactly
the values given. Numpy scalars of the right kind are accepted for every field (the project's one
policy, `marl_bgs.core.checks`); bools are never numbers. No `TypeError`, `OverflowError` or
numpy/JAX error may escape, and nothing may be misread silently.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import fields, replace
from typing import Any

import numpy as np
import pytest

import marl_bgs
from marl_bgs import UnitSpec, author_state
from marl_bgs.tdm import classes as C

pytestmark = pytest.mark.fuzz_family("authored states")

U = UnitSpec
A = U(slot=0, cls="M", x=5.0, y=5.0)  # team A's Mage, full health (80)
B = U(slot=5, cls="W", x=15.0, y=5.0)  # team B's Warrior
CUSTOM_FILE = "<a custom map file written to tmp_path>"  # replaced by the test with a real path

Expect = str | Callable[[marl_bgs.GameState], bool]  # a regex for ConfigError, or a state check
Case = tuple[str, dict[str, Any], Expect]

# Integer fields of UnitSpec and their largest value (Mage; default rules: shield_ticks 3).
INT_CAPS = {
    **{k: int(v) for k, v in C.DURATION_CAPS.items()},
    "shield": 3,
    "recovery": int(C.OOC_DELAY[1]),
    "last_move": 8,
    "last_target": 10,
    "last_ult": 1,
}
BAD_INTS = ["1", None, 1.0, True, np.bool_(True), np.float32(1), 10**30, 2**63, -1, np.int64(-5)]
NOT_NUMBERS = ["5", None, True, np.bool_(True), [5.0], np.complex128(5)]
NON_FINITE = [math.nan, math.inf, -math.inf, np.float32(np.nan), 10**400, -(10**400)]


_HUGE = {10**30: "10**30", 2**63: "2**63", 10**400: "10**400", -(10**400): "-10**400"}


def _label(value: Any) -> str:
    """A short case id for a value (huge integers by their formula)."""
    if isinstance(value, int) and not isinstance(value, bool) and value in _HUGE:
        return _HUGE[value]
    return repr(value)


def _unit(**changes: Any) -> dict[str, Any]:
    """author_state keywords: team A's Mage with `changes`, and team B's Warrior."""
    return {"units": [replace(A, **changes), B]}


def _state(**kw: Any) -> dict[str, Any]:
    return {"units": [A, B], **kw}


def _field(name: str) -> str:
    """The message prefix of a field of unit 0, or of a keyword ("score[1]")."""
    unit_fields = {f.name for f in fields(UnitSpec)}
    head = f"units[0].{name}" if name in unit_fields else name
    return "^" + head.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.") + ": "


def _unit_field_cases() -> list[Case]:
    cases: list[Case] = []
    for value in ("0", None, 0.0, True, np.bool_(True), np.float32(0), -1, 10, 10**30, 2**63,
                  np.int64(-1)):  # fmt: skip
        cases.append((f"slot {_label(value)}", _unit(slot=value), _field("slot")))
    for value in ("X", "", "MW", None, 0, 6, 1.0, True, np.float32(1), 10**30, ["M"]):
        cases.append((f"cls {_label(value)}", _unit(cls=value), _field("cls") + "unknown class"))
    finite = "expected a finite number"
    for value in NOT_NUMBERS + NON_FINITE:
        cases.append((f"x {_label(value)}", _unit(x=value), _field("x") + finite))
    for value in (None, math.nan, 10**400, np.complex64(1)):
        cases.append((f"y {_label(value)}", _unit(y=value), _field("y") + finite))
    outside = r"^units\[0\]: position .* puts the body outside the map"
    for x, y in ((10**30, 5.0), (2**63, 5.0), (-1.0, 5.0), (1e300, 5.0), (5.0, -1e300),
                 (np.float64(25.0), 5.0), (0.49, 5.0), (5.0, 9.6)):  # fmt: skip
        cases.append((f"position ({_label(x)}, {_label(y)})", _unit(x=x, y=y), outside))
    for value in ("50", True, np.bool_(False), [50.0], np.complex64(3)):
        cases.append(
            (f"health {_label(value)}", _unit(health=value), _field("health") + "expected a")
        )
    living = _field("health") + r"a living mage has health in \(0, 80\]"
    for value in (math.nan, math.inf, 10**400, 0, 0.0, -5.0, 80.5, 2**63, np.float32(80.01)):
        cases.append((f"living health {_label(value)}", _unit(health=value), living))
    for value in (0, 1, "True", None, np.int64(1), 1.0):
        cases.append(
            (f"alive {_label(value)}", _unit(alive=value), _field("alive") + "expected True")
        )
    for k, (name, cap) in enumerate(INT_CAPS.items()):
        # Each integer field gets three of the wrong values (cycling) and one past its cap.
        for value in [BAD_INTS[(3 * k + j) % len(BAD_INTS)] for j in range(3)] + [cap + 1]:
            cases.append((f"{name} {_label(value)}", _unit(**{name: value}), _field(name)))
    return cases


def _unit_list_cases() -> list[Case]:
    dead = {"alive": False}
    many = [U(slot=i % 10, cls="M", x=1.0 + 1.5 * i, y=1.0 + (i % 2) * 2) for i in range(11)]
    return [
        ("dead unit stunned", _unit(**dead, stun=1), _field("stun") + "a dead unit has no"),
        ("dead unit shielded", _unit(**dead, shield=2), _field("shield") + "a dead unit has no"),
        ("dead unit recovering", _unit(**dead, recovery=1), _field("recovery") + "a dead unit"),
        ("dead unit with health", _unit(**dead, health=10.0), _field("health") + "a dead unit has"),
        ("dead unit with NaN health", _unit(**dead, health=math.nan), _field("health") + "a dead"),
        ("dead unit with float32 health", _unit(**dead, health=np.float32(1)),
         _field("health") + "a dead unit has health 0"),
        ("duplicate slot", {"units": [A, B, U(slot=0, cls="H", x=8.0, y=2.0)]},
         r"^units\[2\]\.slot: slot 0 is listed twice"),
        ("duplicate slot as np.int64", {"units": [A, B, U(slot=np.int64(5), cls="H", x=8, y=2)]},
         r"^units\[2\]\.slot: slot 5 is listed twice"),
        ("11 units", {"units": many}, r"^units\[10\]\.slot: slot 0 is listed twice"),
        ("unit inside a pillar (map 47)", {**_unit(x=4.0, y=7.5), "map_id": 47},
         r"^units\[0\]: position \(4\.0, 7\.5\) .*into an obstacle"),
        ("unit grazing a wall (map 47)", {**_unit(x=8.0, y=5.9), "map_id": 47},
         r"^units\[0\]: position .*into an obstacle"),
        ("two bodies overlapping", {"units": [A, replace(B, x=5.9)]},
         r"^units: bodies of slots 0 and 5 overlap \(distance 0\.900\)"),
        ("two team-mates on one spot", {"units": [A, U(slot=1, cls="P", x=5.0, y=5.0), B]},
         r"^units: bodies of slots 0 and 1 overlap"),
        ("no units", {"units": []}, r"^units: an authored state needs at least one unit"),
        ("team B empty", {"units": [A]}, r"^units: team B has no unit"),
        ("team A empty", {"units": [B]}, r"^units: team A has no unit"),
        ("units None", {"units": None}, r"^units: expected a list of UnitSpec, got NoneType"),
        ("units a string", {"units": "MW"}, r"^units: expected a list of UnitSpec, got str"),
        ("units a single UnitSpec", {"units": A}, r"^units: expected a list of UnitSpec"),
        ("units a numpy array", {"units": np.array([A, B])}, r"^units: expected a list"),
        ("units a dict", {"units": {0: A, 5: B}}, r"^units: expected a list of UnitSpec, got dict"),
        ("unit a dict", {"units": [A, {"slot": 5, "cls": "W", "x": 15, "y": 5}]},
         r"^units\[1\]: expected a UnitSpec, got dict"),
        ("unit None", {"units": [A, None]}, r"^units\[1\]: expected a UnitSpec, got NoneType"),
    ]  # fmt: skip


def _keyword_cases() -> list[Case]:
    cases: list[Case] = []
    for value in (52, -1, 2**63, "Nowhere", True, np.bool_(True), 47.0, None, "x/y.txt", {}):
        cases.append((f"map_id {_label(value)}", _state(map_id=value), _field("map_id")))
    for value, field in (((20, 0), "score"), ((19, 25), "score"), ((-1, 0), "score[0]"),
                         ((0, 1.5), "score[1]"), ((1, 2, 3), "score"), (5, "score"),
                         (None, "score"), ((np.int64(1), True), "score[1]"), ("00", "score"),
                         ((10**30, 0), "score[0]"), ((0, np.float64(1)), "score[1]"),
                         (np.array([1, 2]), "score")):  # fmt: skip
        cases.append((f"score {_label(value)}", _state(score=value), _field(field)))
    for value in (-1, 300, 5.0, True, None, 2**63, np.float32(3), "0"):
        cases.append((f"tick {_label(value)}", _state(tick=value), _field("tick")))
    for value, field in (((5, 0), "wave[0]"), ((0, -1), "wave[1]"), ((1,), "wave"),
                         (2, "wave"), ((0.0, 0), "wave[0]"), ((0, True), "wave[1]"),
                         ("04", "wave"), ((0, 2**63), "wave[1]")):  # fmt: skip
        cases.append((f"wave {_label(value)}", _state(wave=value), _field(field)))
    for value in (1, 0, "yes", None, np.int64(1), 1.0):
        cases.append(
            (f"swap {_label(value)}", _state(swap=value), _field("swap") + "expected True")
        )
    for value in (-1, 65, 1.5, True, np.bool_(False), 2**63, "8"):
        cases.append(
            (f"message_dim {_label(value)}", _state(message_dim=value), _field("message_dim"))
        )
    rules = {
        "winning_score": (0, 1001, 2.0, True, 10**30),
        "tick_limit": (0, 10_001, np.float64(300), None),
        "red_zone_depth": (math.nan, math.inf, -0.1, 10.5, "5", 10**400, np.bool_(True)),
        "wave_period": (0, 101, np.int64(-3)),
        "shield_ticks": (-1, 31, 1.0),
        "shield_speed": (2.5, math.nan, -(10**400), np.complex64(1)),
    }
    for name, values in rules.items():
        for value in values:
            cases.append((f"{name} {_label(value)}", _state(**{name: value}), _field(name)))
    cases += [
        ("shield above shield_ticks", {**_unit(shield=3), "shield_ticks": 2},
         _field("shield") + r".*\[0, 2\]"),
        ("tick at a shorter tick_limit", _state(tick=10, tick_limit=10), _field("tick")),
        ("score at a lower winning_score", _state(score=(3, 0), winning_score=3), _field("score")),
        ("wave past a shorter period", _state(wave=(3, 0), wave_period=3), _field("wave[0]")),
    ]  # fmt: skip
    for name in ("foo", "rosters", "num_envs", "Tick", "map"):
        cases.append((f"unknown keyword {name}", _state(**{name: 1}),
                      rf"^{name}: not a keyword of author_state; allowed \['units'"))  # fmt: skip
    return cases


def _valid_cases() -> list[Case]:
    """Boundary values and numpy scalars that must be accepted with exactly the values given."""
    numpy_unit = U(slot=np.int64(1), cls=np.int8(2), x=np.float32(8.0), y=np.float64(2.0),
                   health=np.float32(150.0), alive=np.True_, stun=np.int32(1), trap=np.uint8(4),
                   cooldown=np.int16(30), last_move=np.int64(8), last_target=np.int64(10),
                   last_ult=np.int8(1))  # fmt: skip
    full_roster = [U(slot=i, cls="MWHRP"[i], x=2.0, y=1.0 + 2 * i) for i in range(5)] + [
        U(slot=5 + i, cls="MWHRP"[i], x=18.0, y=1.0 + 2 * i) for i in range(5)
    ]
    caps = {name: cap for name, cap in INT_CAPS.items() if name not in ("last_move",)}

    def units_hold(**expected: Any) -> Callable[[marl_bgs.GameState], bool]:
        return lambda s: all(
            np.allclose(np.asarray(getattr(s.units, k))[0], v) for k, v in expected.items()
        )

    return [
        ("numpy scalars in every unit field", {"units": [A, numpy_unit, B]},
         lambda s: (s.units.class_id.tolist()[1], float(s.units.health[1]), int(s.units.trap[1]),
                    int(s.units.cooldown[1]), int(s.units.last_target[1]))
         == (2, 150.0, 4, 30, 10)),
        ("numpy scalars in every keyword",
         _state(map_id=np.int64(47), score=(np.int64(19), np.uint8(0)), tick=np.int16(299),
                wave=(np.int64(0), np.int32(4)), swap=np.True_, message_dim=np.int64(0),
                winning_score=np.int64(20), red_zone_depth=np.float32(10.0),
                shield_speed=np.float64(0.0)),
         lambda s: (int(s.map_id), s.score.tolist(), int(s.tick), s.wave.tolist(), bool(s.swap))
         == (47, [19, 0], 299, [0, 4], True)),
        ("health exactly max", _unit(health=80), units_hold(health=80.0)),
        ("health 1e-6", _unit(health=1e-6), units_hold(health=1e-6)),
        ("health None is full health", _unit(health=None), units_hold(health=80.0)),
        ("dead, health None is 0", _unit(alive=False), units_hold(health=0.0, alive=False)),
        ("dead with integer health 0 and a cooldown", _unit(alive=False, health=0, cooldown=30),
         units_hold(health=0.0, cooldown=30)),
        ("south-west corner", _unit(x=0.5, y=0.5), units_hold(pos=[0.5, 0.5])),
        ("north-east corner", {"units": [A, replace(B, x=19.5, y=9.5)]},
         lambda s: s.units.pos[5].tolist() == [19.5, 9.5]),
        ("integer position", _unit(x=5, y=5), units_hold(pos=[5.0, 5.0])),
        ("touching a pillar on map 47", {**_unit(x=4.0, y=6.5), "map_id": 47},
         lambda s: s.units.pos[0].tolist() == [4.0, 6.5] and int(s.map_id) == 47),
        ("every status at its cap", _unit(**caps), units_hold(**caps)),
        ("last_move 8", _unit(last_move=8), units_hold(last_move=8)),
        ("bodies touching exactly", {"units": [A, replace(B, x=6.0)]},
         lambda s: s.units.pos[5].tolist() == [6.0, 5.0]),
        ("shielded bodies overlapping", {"units": [A, replace(B, x=5.2, shield=2)]},
         lambda s: int(s.units.shield[5]) == 2),
        ("ten units", {"units": full_roster},
         lambda s: s.units.class_id.tolist() == [1, 2, 3, 4, 5] * 2),
        ("class names and ids", {"units": [replace(A, cls="mage"), replace(B, cls=5)]},
         lambda s: s.units.class_id.tolist()[:6] == [1, 0, 0, 0, 0, 5]),
        ("last tick, scores one short", _state(tick=299, score=(19, 19)),
         lambda s: (int(s.tick), s.score.tolist()) == (299, [19, 19])),
        ("rule limits", _state(winning_score=1000, tick_limit=10_000, red_zone_depth=0.0,
                               wave_period=1, shield_ticks=30, shield_speed=2.0, tick=9999),
         lambda s: int(s.tick) == 9999 and int(s.rules.winning_score) == 1000),
        ("wave bounds", _state(wave=(0, 4)), lambda s: s.wave.tolist() == [0, 4]),
        ("widest messages", _state(message_dim=64), lambda s: s.messages.shape[-1] == 64),
        ("units as a tuple", {"units": (A, B)}, lambda s: s.units.alive.tolist()[5]),
        ("map by name", _state(map_id="crossfire"), lambda s: int(s.map_id) == 47),
        ("custom map file", _state(map_id=CUSTOM_FILE), lambda s: int(s.map_id) == -1),
    ]  # fmt: skip


STATE_CASES: list[Case] = (
    _unit_field_cases() + _unit_list_cases() + _keyword_cases() + _valid_cases()
)


def test_there_are_enough_malformed_authored_states(enough_fuzz_cases):
    enough_fuzz_cases(STATE_CASES)


@pytest.mark.parametrize(("what", "kwargs", "expect"), STATE_CASES, ids=[c[0] for c in STATE_CASES])
def test_authored_states(tmp_path, fuzz_outcome, what, kwargs, expect):
    del what  # the case's id
    if kwargs.get("map_id") is CUSTOM_FILE:
        doc = {"format": "marl-bgs-map-v1", "id": 7, "name": "Mine", "split": "custom",
               "obstacles": [{"kind": "pillar", "x": 10.0, "y": 8.0, "radius": 1.0}]}  # fmt: skip
        path = tmp_path / "mine.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        kwargs = {**kwargs, "map_id": str(path)}
    fuzz_outcome(expect, lambda: author_state(**kwargs))
