"""Fuzz: malformed scenario files handed to `marl_bgs.scenarios.load_file`, `load` and `make`.

Every input below is generated from the shipped scenario 6 ("keep_the_trap"), the valid base each
case mutates, and each must end in exactly one outcome class: a `ScenarioError` (a `ConfigError`)
whose message starts with the file and the field it names, or, for the valid edge cases among
them, a scenario that loads with exactly the values written. No `TypeError`, `OverflowError`,
`RecursionError`, bare `ConfigError` or numpy/JAX error may escape, and nothing may be misread
silently.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest

import marl_bgs
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.scenarios import SKILLS, Scenario, ScenarioError, load, load_file
from marl_bgs.tdm.scenarios.files import MAX_FILE_BYTES, MAX_LINES, MAX_VARIANTS
from marl_bgs.testing import DELETE, mutated

pytestmark = pytest.mark.fuzz_family("scenario files")

NAME = "m.json"  # every case is written to tmp_path / NAME, so errors start with "m.json"
FILE = r"^scenario file '[^']*m\.json' "  # file-level refusals name the file
RAW = "@@raw@@"  # _raw: a placeholder replaced by a literal json.dumps cannot write

SHIPPED = (
    resources.files("marl_bgs.tdm.scenarios").joinpath("data", "6_keep_the_trap.json").read_bytes()
)
# The valid base document: units a_0..a_4 then b_0..b_4 (living: a_0 M, a_2 H at 7 HP, a_4 P,
# b_0 M, b_1 W, b_3 R; dead: a_1, a_3, b_2, b_4), one 5-tick line, three variants of line 0.
VALID: dict[str, Any] = json.loads(SHIPPED)
COOLDOWN_CAP = C.DURATION_CAPS["cooldown"]
STAY = {"move": "stay", "combat": "no_combat"}

_HUGE = {10**30: "10**30", 2**63: "2**63"}


def _label(value: Any) -> str:
    """A short case id for a value (huge integers by their formula, long strings cut)."""
    if isinstance(value, int) and not isinstance(value, bool) and value in _HUGE:
        return _HUGE[value]
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:12]}...({len(text)} chars)"


def _mutate(path: str, value: Any, base: dict[str, Any] = VALID) -> dict[str, Any]:
    """A deep copy of `base` with the dotted `path` ("units.0.health") set to `value`."""
    return mutated(base, path, value)


def _edit(doc: dict[str, Any], **paths: Any) -> dict[str, Any]:
    """`doc` with several dotted paths set (keyword "units__0__x" is the path "units.0.x")."""
    for key, value in paths.items():
        doc = _mutate(key.replace("__", "."), value, doc)
    return doc


def _raw(path: str, literal: str, base: dict[str, Any] = VALID) -> str:
    """The document as JSON text with the value at `path` replaced by a raw JSON literal."""
    return json.dumps(_mutate(path, RAW, base)).replace(f'"{RAW}"', literal)


def _field(path: str) -> str:
    """The message prefix of a field: "units.0.x" -> r"^m\\.json\\.units\\[0\\]\\.x: "."""
    parts = [f"[{p}]" if p.isdigit() else f".{p}" for p in path.split(".")]
    return "^" + re.escape(NAME + "".join(parts)) + ": "


Expect = str | Callable[[Scenario], bool]  # a regex for ScenarioError, or a check of the scenario


# --- file level -----------------------------------------------------------------------------------
def _file_level_cases() -> list[tuple[str, Any, Expect]]:
    bad_json = FILE + "is not valid JSON"
    text = json.dumps(VALID)
    cases: list[tuple[str, Any, Expect]] = [
        ("empty file", b"", bad_json),
        ("whitespace only", " \n\t ", bad_json),
        ("not JSON", "{not json", bad_json),
        ("plain text", "keep the trap", bad_json),
        ("trailing comma", '{"format": "marl-bgs-scenario-v1",}', bad_json),
        ("two documents", text * 2, bad_json),
        ("bad UTF-8 bytes", b"\xff\xfe{}", bad_json),
        (
            "latin-1 byte in the challenge",
            text.replace("Keep", "K\udce9ep").encode("utf-8", "surrogateescape"),
            bad_json,
        ),
        ("UTF-8 byte order mark", b"\xef\xbb\xbf" + text.encode(), bad_json),
        ("UTF-16 encoded", text.encode("utf-16"), bad_json),
        ("NUL byte after the document", text.encode() + b"\x00", bad_json),
        ("100000 nested lists", "[" * 100_000 + "]" * 100_000, bad_json),
        (
            "50000 nested lists in a unit",
            _raw("units.0.health", "[" * 50_000 + "]" * 50_000),
            bad_json,
        ),
        ("a 5000-digit id", _raw("id", "9" * 5000), bad_json),
        (
            "top-level duplicate key",
            text[:-1] + ', "score": [0, 0]}',
            FILE + "is not valid JSON: duplicate key.*score",
        ),
        (
            "duplicate key in a unit",
            _raw("units.0", '{"agent": "a_0", "cls": "M", "x": 8.6, "x": 8.6, "y": 7.6}'),
            FILE + "is not valid JSON: duplicate key.*'x'",
        ),
        (
            "duplicate agent in a tick",
            _raw(
                "lines.0.ticks.1",
                '{"a_0": ' + json.dumps(STAY) + ', "a_0": ' + json.dumps(STAY) + "}",
            ),
            FILE + "is not valid JSON: duplicate key.*a_0",
        ),
        (
            "one byte over the size limit",
            text + " " * (MAX_FILE_BYTES + 1 - len(text)),
            FILE + f"is larger than {MAX_FILE_BYTES} bytes",
        ),
        (
            "exactly the size limit",
            text + " " * (MAX_FILE_BYTES - len(text)),
            lambda s: s.id == 6 and len(s.units) == 10,
        ),
        (
            "shipped scenario 6, byte for byte",
            SHIPPED,
            lambda s: (
                (s.id, s.name, s.score, s.ticks_left, s.wave, s.opponent)
                == (6, "keep_the_trap", (17, 19), 5, (4, 4), "tdm-alpha")
                and [len(ln.ticks) for ln in s.lines] == [5]
                and [v.outcome for v in s.variants] == ["draw", "loss", "loss"]
                and s.rosters == ("MHP", "MWR")
            ),
        ),
    ]
    end = SHIPPED.rindex(b"}")  # any cut before the last brace leaves the object unclosed
    for cut in (1, 100, end // 2, end):
        cases.append((f"shipped scenario cut at byte {cut}", SHIPPED[:cut], bad_json))
    return cases


# --- top-level keys -------------------------------------------------------------------------------
def _top_level_cases() -> list[tuple[str, Any, Expect]]:
    top = r"^m\.json: expected a JSON object"
    cases: list[tuple[str, Any, Expect]] = [
        ("top-level list", [VALID], top),
        ("top-level string", '"keep_the_trap"', top),
        ("top-level number", 6, top),
        ("top-level null", None, top),
        ("top-level true", True, top),
        (
            "unknown top-level key",
            {**VALID, "version": 2},
            r"^m\.json: unknown key\(s\) "
            r"\['version'\]",
        ),
        ("a map document", json.loads(json.dumps(VALID["arena"])), r"^m\.json: unknown key"),
    ]
    required = (
        "format",
        "id",
        "name",
        "challenge",
        "skills",
        "opponent",
        "arena",
        "score",
        "ticks_left",
        "wave",
        "units",
        "lines",
    )
    for key in required:
        cases.append(
            (f"missing {key}", _mutate(key, DELETE), rf"^m\.json: missing key\(s\) \['{key}'\]")
        )
    bad = {
        "format": ("marl-bgs-scenario-v2", "marl-bgs-map-v1", "", None, 1, ["x"]),
        "id": (0, 100, -1, True, 6.0, "6", None, [6], 10**30, 2**63),
        "name": (
            "Keep the trap",
            "keep-the-trap",
            "_keep",
            "Keep_the_trap",
            "",
            "a" * 49,
            "keep_the_trap\n",
            5,
            None,
        ),
        "challenge": ("", "c" * 81, None, 5, ["Keep the trap"]),
        "description": ("d" * 2001, None, 0),
        "skills": ("teammate modeling", [], None, {"teammate modeling": 1}, [*SKILLS, SKILLS[0]]),
        "opponent": ("tdm-delta", "TDM-Alpha", "", None, ["tdm-alpha"]),
        "ticks_left": (0, 11, 300, 301, -1, "5", 5.0, True, None),
        "score": (
            [20, 19],
            [17, 20],
            [-1, 19],
            [17, 19, 0],
            [17],
            "17-19",
            [17.0, 19],
            [True, 19],
            [17, 10**30],
            None,
        ),
        "wave": ([5, 4], [4, -1], [4], [4, 4.5], [None, 4], None),
    }
    for key, values in bad.items():
        for value in values:
            cases.append(
                (
                    f"{key} {_label(value)}",
                    _mutate(key, value),
                    _field(key) + "|" + _field(f"{key}.0") + "|" + _field(f"{key}.1"),
                )
            )
    cases += [
        ("skill unknown", _mutate("skills", ["teamwork"]), _field("skills.0") + "expected one of"),
        ("skill in title case", _mutate("skills", ["Teammate Modeling"]), _field("skills.0")),
        ("skill not a string", _mutate("skills", [SKILLS[0], 1]), _field("skills.1")),
        (
            "skill listed twice",
            _mutate("skills", [SKILLS[3], SKILLS[0], SKILLS[3]]),
            _field("skills") + "a skill is listed twice",
        ),
        (
            "ticks_left below the line's length",
            _mutate("ticks_left", 4),
            _field("lines.0.ticks") + "expected a list of 1-4 ticks",
        ),
    ]
    # Valid edge cases: what the checks must not refuse, kept exactly as written.
    cases += [
        ("description omitted", _mutate("description", DELETE), lambda s: s.description == ""),
        ("variants omitted", _mutate("variants", DELETE), lambda s: s.variants == ()),
        ("no variants", _mutate("variants", []), lambda s: s.variants == ()),
        ("id 1", _mutate("id", 1), lambda s: s.id == 1),
        ("id 99", _mutate("id", 99), lambda s: s.id == 99),
        ("name of 48 characters", _mutate("name", "z" * 48), lambda s: s.name == "z" * 48),
        ("name a digit", _mutate("name", "6"), lambda s: s.name == "6"),
        (
            "challenge of 80 characters",
            _mutate("challenge", "c" * 80),
            lambda s: s.challenge == "c" * 80,
        ),
        (
            "description of 2000 characters",
            _mutate("description", "d" * 2000),
            lambda s: s.description == "d" * 2000,
        ),
        (
            "all ten skills",
            _mutate("skills", list(SKILLS[::-1])),
            lambda s: s.skills == SKILLS[::-1],
        ),
        ("opponent tdm-beta", _mutate("opponent", "tdm-beta"), lambda s: s.opponent == "tdm-beta"),
        ("score 0-0", _mutate("score", [0, 0]), lambda s: s.score == (0, 0)),
        ("score 19-19", _mutate("score", [19, 19]), lambda s: s.score == (19, 19)),
        (
            "wave 0",
            _mutate("wave", [0, 0]),
            lambda s: s.wave == (0, 0) and np.asarray(s.state().wave).tolist() == [0, 0],
        ),
        (
            "ticks_left 10 (the most: an endgame)",
            _mutate("ticks_left", 10),
            lambda s: s.ticks_left == 10 and int(s.state().tick) == 290,
        ),
        (
            "ticks_left equal to the line's length",
            _mutate("ticks_left", 5),
            lambda s: s.ticks_left == 5 and int(s.state().tick) == 295,
        ),
        (
            "plain Python ints throughout",
            VALID,
            lambda s: (
                all(type(v) is int for v in (s.id, s.ticks_left, *s.score, *s.wave))
                and all(
                    type(v) is int
                    for ln in s.lines
                    for t in ln.ticks
                    for k, a in t.items()
                    for v in (k, *a.heads)
                )
                and all(
                    type(x) is int
                    for v in s.variants
                    for x in (v.line, v.tick, v.agent, *v.action.heads)
                )
            ),
        ),
    ]
    return cases


# --- arena ----------------------------------------------------------------------------------------
def _arena_cases() -> list[tuple[str, Any, Expect]]:
    pillar = {"kind": "pillar", "x": 12.0, "y": 5.0, "radius": 0.6}
    return [
        (
            "arena in split test",
            _edit(VALID, arena__split="test", arena__id=47, arena__obstacles=[]),
            _field("arena.split") + "a scenario's arena is its own: expected 'custom'",
        ),
        (
            "arena in split train",
            _edit(VALID, arena__split="train", arena__id=12, arena__obstacles=[]),
            _field("arena.split") + "a scenario's arena is its own",
        ),
        ("arena split unknown", _mutate("arena.split", "mine"), _field("arena.split")),
        (
            "arena pillar across the east border",
            _mutate("arena.obstacles.1", {**pillar, "x": 19.7}),
            _field("arena.obstacles.1") + "obstacle crosses the map border in x",
        ),
        (
            "arena wall across the north border",
            _mutate("arena.obstacles.0.y", 9.5),
            _field("arena.obstacles.0") + "obstacle crosses the map border in y",
        ),
        (
            "unknown key in the arena",
            _mutate("arena.colour", "red"),
            _field("arena")[:-2] + r": unknown key\(s\) \['colour'\]",
        ),
        (
            "unknown key in an arena obstacle",
            _mutate("arena.obstacles.1.theta", 0.0),
            _field("arena.obstacles.1") + "unknown key",
        ),
        (
            "arena format wrong",
            _mutate("arena.format", "marl-bgs-scenario-v1"),
            _field("arena.format"),
        ),
        ("arena a list", _mutate("arena", []), _field("arena")[:-2] + ": expected a JSON object"),
        ("arena a map name", _mutate("arena", "crossfire"), _field("arena")[:-2] + ": expected"),
        (
            "arena pillar on a spawn pad",
            _mutate("arena.obstacles.1", {**pillar, "x": 19.5, "radius": 0.4}),
            _field("arena.obstacles.1") + "overlaps the body on the right pad 2",
        ),
        (
            "arena radius NaN",
            _raw("arena.obstacles.1.radius", "NaN"),
            _field("arena.obstacles.1.radius"),
        ),
        # A unit that fitted the old arena now stands in the new pillar: author_state's check.
        (
            "unit inside a moved pillar",
            _mutate("arena.obstacles.1", {**pillar, "x": 13.0, "y": 3.0}),
            _field("units.6")[:-2] + r": position \(13\.0, 3\.0\) puts the body outside the map or "
            "into an obstacle",
        ),
        (
            "arena without obstacles",
            _mutate("arena.obstacles", []),
            lambda s: s.arena.obstacles == () and s.arena.split == "custom",
        ),
        (
            "arena with a name of 64 characters",
            _mutate("arena.name", "n" * 64),
            lambda s: s.arena.name == "n" * 64 and s.arena.id == 0,
        ),
    ]


# --- units ----------------------------------------------------------------------------------------
def _unit_cases() -> list[tuple[str, Any, Expect]]:
    cases: list[tuple[str, Any, Expect]] = []
    # Index k of "units" is agent a_k (k < 5) or b_{k-5}; 0 a living Mage (80 HP), 1 a dead
    # Warrior, 2 the Hunter at 7 HP, 5 the enemy Mage, 8 the enemy Rogue (cooldown 12).
    for value in ("c_0", "a_5", "b_9", "A_0", "a0", "", 0, None):
        cases.append(
            (
                f"unit agent {_label(value)}",
                _mutate("units.0.agent", value),
                _field("units.0.agent") + "expected one of",
            )
        )
    for value in ("X", "", "unused", 0, 6, True, None, ["M"]):
        cases.append(
            (
                f"unit class {_label(value)}",
                _mutate("units.0.cls", value),
                _field("units.0.cls") + "unknown class",
            )
        )
    living = _field("units.0.health") + r"a living mage has health in \(0, 80\]"
    for value in (0, 0.0, -1, 80.5, 81, 10**30):
        cases.append(
            (f"living unit health {_label(value)}", _mutate("units.0.health", value), living)
        )
    for value in ("80", True, [80], {"hp": 80}):
        cases.append(
            (
                f"unit health {_label(value)}",
                _mutate("units.0.health", value),
                _field("units.0.health") + "expected a number",
            )
        )
    for literal in ("1e999", "-1e999", "NaN", "Infinity", "1" + "0" * 400):
        what = literal if len(literal) < 10 else "10**400"
        cases.append(
            (f"raw health {what}", _raw("units.0.health", literal), _field("units.0.health"))
        )
        cases.append(
            (
                f"raw x {what}",
                _raw("units.5.x", literal),
                _field("units.5.x") + "expected a finite number",
            )
        )
    cases += [
        ("raw y 1e999 on a dead unit", _raw("units.1.y", "1e999"), _field("units.1.y")),
        (
            "dead unit with health 5",
            _mutate("units.1.health", 5),
            _field("units.1.health") + "a dead unit has health 0, got 5",
        ),
        (
            "dead unit with health 1e-9",
            _mutate("units.1.health", 1e-9),
            _field("units.1.health") + "a dead unit has health 0",
        ),
        (
            "dead unit stunned",
            _mutate("units.1.stun", 1),
            _field("units.1.stun") + "a dead unit has no statuses, got 1",
        ),
        ("dead unit trapped", _mutate("units.7.trap", 2), _field("units.7.trap") + "a dead unit"),
        ("dead unit with a shield", _mutate("units.9.shield", 1), _field("units.9.shield")),
        ("dead unit recovering", _mutate("units.3.recovery", 1), _field("units.3.recovery")),
        (
            "agent listed twice",
            _mutate("units.1.agent", "a_0"),
            _field("units.1.slot") + "slot 0 is listed twice",
        ),
        (
            "enemy listed twice",
            _mutate("units.9.agent", "b_3"),
            _field("units.9.slot") + "slot 8 is listed twice",
        ),
        (
            "bodies overlapping",
            _mutate("units.8.x", 9.5),
            _field("units")[:-2] + r": bodies of slots 2 and 8 overlap \(distance 0\.500\)",
        ),
        (
            "bodies just overlapping",
            _mutate("units.8.x", 9.99),
            _field("units")[:-2] + ": bodies of slots 2 and 8 overlap",
        ),
        (
            "unit inside the pillar",
            _edit(VALID, units__5__x=12.0, units__5__y=5.0),
            _field("units.5")[:-2] + r": position \(12\.0, 5\.0\) puts the body outside the map",
        ),
        (
            "unit inside the wall",
            _edit(VALID, units__0__x=8.0, units__0__y=2.0),
            _field("units.0")[:-2] + ": position",
        ),
        (
            "unit off the east edge",
            _mutate("units.5.x", 20.0),
            _field("units.5")[:-2] + r": position \(20\.0, 7\.8\)",
        ),
        ("unit off the map", _mutate("units.5.x", -3.0), _field("units.5")[:-2] + ": position"),
        (
            "dead unit off the map",
            _mutate("units.1.y", 10.2),
            _field("units.1")[:-2] + ": position",
        ),
        (
            "body half over the south border",
            _mutate("units.5.y", 0.4),
            _field("units.5")[:-2] + ": position",
        ),
        # Just within the tolerance of the pillar on the snapshot's side, but float32 rounding
        # puts it into the pillar in the mirror image (side 1 of every scenario env).
        (
            "dead unit grazing the pillar",
            _edit(VALID, units__9__x=13.0999, units__9__y=5.0),
            _field("units.9")[:-2] + r": position \(6\.9001, 5\.0\) .*\(in the mirror image",
        ),
        (
            "cooldown above its cap",
            _mutate("units.4.cooldown", COOLDOWN_CAP + 1),
            _field("units.4.cooldown") + rf"expected an integer in \[0, {COOLDOWN_CAP}\]",
        ),
        ("negative cooldown", _mutate("units.4.cooldown", -1), _field("units.4.cooldown")),
        ("trap above its cap", _mutate("units.8.trap", C.TRAP_TICKS + 1), _field("units.8.trap")),
        (
            "rogue recovery above its class's delay",
            _mutate("units.8.recovery", 4),
            _field("units.8.recovery") + r"expected an integer in \[0, 3\]",
        ),
        ("shield above shield_ticks", _mutate("units.0.shield", 4), _field("units.0.shield")),
        ("freedom 2", _mutate("units.0.freedom", 2), _field("units.0.freedom")),
        ("last_move 9", _mutate("units.0.last_move", 9), _field("units.0.last_move")),
        ("last_target 12", _mutate("units.0.last_target", 12), _field("units.0.last_target")),
        ("last_ult 2", _mutate("units.0.last_ult", 2), _field("units.0.last_ult")),
        ("bool cooldown", _mutate("units.4.cooldown", True), _field("units.4.cooldown")),
        ("bool stun", _mutate("units.0.stun", False), _field("units.0.stun")),
        ("float cooldown 2.0", _mutate("units.4.cooldown", 2.0), _field("units.4.cooldown")),
        ("string burst", _mutate("units.0.burst", "1"), _field("units.0.burst")),
        (
            "alive 0",
            _mutate("units.1.alive", 0),
            _field("units.1.alive") + "expected True or False",
        ),
        ("alive 'false'", _mutate("units.1.alive", "false"), _field("units.1.alive")),
        ("bool x", _mutate("units.0.x", True), _field("units.0.x") + "expected a finite number"),
        ("string y", _mutate("units.0.y", "7.6"), _field("units.0.y")),
        (
            "unknown unit key",
            _mutate("units.0.hp", 80),
            _field("units.0")[:-2] + r": unknown key\(s\) \['hp'\]",
        ),
        (
            "unit with a slot",
            _mutate("units.0.slot", 0),
            _field("units.0")[:-2] + r": unknown key\(s\) \['slot'\]",
        ),
        (
            "unit without x",
            _mutate("units.0.x", DELETE),
            _field("units.0")[:-2] + r": missing key\(s\) \['x'\]",
        ),
        (
            "unit without agent",
            _mutate("units.0.agent", DELETE),
            _field("units.0")[:-2] + ": missing",
        ),
        ("unit a string", _mutate("units.0", "a_0"), _field("units.0")[:-2] + ": expected a JSON"),
        ("unit a list", _mutate("units.0", ["a_0", "M", 8.6, 7.6]), _field("units.0")[:-2] + ":"),
        ("units an object", _mutate("units", {"a_0": VALID["units"][0]}), _field("units")),
        ("units null", _mutate("units", None), _field("units")),
        (
            "one unit",
            _mutate("units", VALID["units"][:1]),
            _field("units") + "expected a list of 2-10",
        ),
        ("eleven units", _mutate("units", [*VALID["units"], VALID["units"][0]]), _field("units")),
        (
            "team B has no unit",
            _mutate("units", VALID["units"][:5]),
            _field("units")[:-2] + ": team B has no unit",
        ),
    ]
    # Valid edge cases: each value is loaded and built exactly as written.
    cases += [
        (
            "health exactly max",
            _mutate("units.2.health", 100),
            lambda s: s.units[2].health == 100 and float(s.state().units.health[2]) == 100.0,
        ),
        (
            "health omitted: full",
            _mutate("units.2.health", DELETE),
            lambda s: s.units[2].health is None and float(s.state().units.health[2]) == 100.0,
        ),
        (
            "tiny living health 0.25",
            _mutate("units.2.health", 0.25),
            lambda s: s.units[2].health == 0.25 and float(s.state().units.health[2]) == 0.25,
        ),
        (
            "dead unit with health 0",
            _mutate("units.1.health", 0),
            lambda s: s.units[1].health == 0 and not s.units[1].alive,
        ),
        (
            "dead unit with a cooldown",
            _mutate("units.1.cooldown", 3),
            lambda s: s.units[1].cooldown == 3 and int(s.state().units.cooldown[1]) == 3,
        ),
        (
            "freedom 1",
            _mutate("units.0.freedom", 1),
            lambda s: s.units[0].freedom == 1 and int(s.state().units.freedom[0]) == 1,
        ),
        (
            "cooldown at its cap",
            _mutate("units.4.cooldown", COOLDOWN_CAP),
            lambda s: s.units[4].cooldown == COOLDOWN_CAP,
        ),
        (
            "unit at the map corner, exactly fitting",
            _edit(VALID, units__5__x=19.5, units__5__y=0.5),
            lambda s: (
                (s.units[5].x, s.units[5].y) == (19.5, 0.5)
                and np.asarray(s.state().units.pos[5]).tolist() == [19.5, 0.5]
            ),
        ),
        (
            "integer coordinates",
            _edit(VALID, units__2__x=9, units__2__y=5),
            lambda s: (s.units[2].x, s.units[2].y) == (9, 5) and type(s.units[2].x) is int,
        ),
        ("class by name", _mutate("units.0.cls", "mage"), lambda s: s.units[0].cls == "mage"),
        (
            "class by id",
            _mutate("units.8.cls", 4),
            lambda s: s.units[8].cls == 4 and s.rosters == ("MHP", "MWR"),
        ),
        (
            "bodies touching",
            _edit(VALID, units__8__x=10.0),
            lambda s: s.units[8].x == 10.0 and s.units[2].x == 9.0,
        ),
        (
            "shielded body overlapping",
            _edit(VALID, units__8__x=9.5, units__8__shield=1),
            lambda s: s.units[8].x == 9.5 and s.units[8].shield == 1,
        ),
        (
            "unit keys in any order",
            _mutate("units.8", dict(reversed(list(VALID["units"][8].items())))),
            lambda s: s.units[8].slot == 8 and s.units[8].cooldown == 12,
        ),
        (
            "units listed in any order",
            _mutate("units", VALID["units"][::-1]),
            lambda s: [u.slot for u in s.units] == list(range(9, -1, -1)),
        ),
    ]
    return cases


# --- lines ----------------------------------------------------------------------------------------
def _line_cases() -> list[tuple[str, Any, Expect]]:
    line = VALID["lines"][0]
    action = "lines.0.ticks.0.a_0"
    tick0 = "m.json.lines[0].ticks[0] agent: "
    cases: list[tuple[str, Any, Expect]] = [
        ("no lines", _mutate("lines", []), _field("lines") + "expected a list of 1-8 entries"),
        (f"{MAX_LINES + 1} lines", _mutate("lines", [line] * (MAX_LINES + 1)), _field("lines")),
        ("lines an object", _mutate("lines", line), _field("lines")),
        ("lines null", _mutate("lines", None), _field("lines")),
        (
            "line a string",
            _mutate("lines.0", "bait the Charge"),
            _field("lines.0")[:-2] + ": expected a JSON object",
        ),
        ("line a list of ticks", _mutate("lines.0", line["ticks"]), _field("lines.0")[:-2] + ":"),
        (
            "line without name",
            _mutate("lines.0.name", DELETE),
            _field("lines.0")[:-2] + r": missing key\(s\) \['name'\]",
        ),
        (
            "line with an unknown key",
            _mutate("lines.0.outcome", "win"),
            _field("lines.0")[:-2] + r": unknown key\(s\) \['outcome'\]",
        ),
        ("line name empty", _mutate("lines.0.name", ""), _field("lines.0.name")),
        ("line name of 81 characters", _mutate("lines.0.name", "n" * 81), _field("lines.0.name")),
        (
            "line without ticks",
            _mutate("lines.0.ticks", []),
            _field("lines.0.ticks") + "expected a list of 1-5 ticks",
        ),
        (
            "line longer than the ticks left",
            _mutate("lines.0.ticks", [*line["ticks"], {}]),
            _field("lines.0.ticks") + r"expected a list of 1-5 ticks \(the ticks left\)",
        ),
        (
            "ticks an object",
            _mutate("lines.0.ticks", {"1": line["ticks"][0]}),
            _field("lines.0.ticks"),
        ),
        (
            "tick a list",
            _mutate("lines.0.ticks.0", [line["ticks"][0]["a_0"]]),
            _field("lines.0.ticks.0") + r"expected an object \{agent: action\}",
        ),
        ("tick null", _mutate("lines.0.ticks.2", None), _field("lines.0.ticks.2")),
        (
            "team B's agent b_0 in a tick",
            _mutate("lines.0.ticks.0.b_0", STAY),
            "^" + re.escape(tick0) + r"expected one of \['a_0', .*got 'b_0'",
        ),
        (
            "unknown agent c_0 in a tick",
            _mutate("lines.0.ticks.0.c_0", STAY),
            "^" + re.escape(tick0),
        ),
        ("agent a_5 in a tick", _mutate("lines.0.ticks.0.a_5", STAY), "^" + re.escape(tick0)),
        (
            "agent by slot number in a tick",
            _mutate("lines.0.ticks.0.0", STAY),
            "^" + re.escape(tick0),
        ),
        ("action a string", _mutate(action, "east"), _field(action)[:-2] + ": expected a JSON"),
        (
            "action without combat",
            _mutate(f"{action}.combat", DELETE),
            _field(action)[:-2] + r": missing key\(s\) \['combat'\]",
        ),
        (
            "action with an unknown key",
            _mutate(f"{action}.target", 6),
            _field(action)[:-2] + r": unknown key\(s\) \['target'\]",
        ),
        ("why of 2001 characters", _mutate(f"{action}.why", "w" * 2001), _field(f"{action}.why")),
        ("why null", _mutate(f"{action}.why", None), _field(f"{action}.why")),
    ]
    for value in ("up", "North", "north-east", "", None, 3, ["east"]):
        cases.append(
            (
                f"move {_label(value)}",
                _mutate(f"{action}.move", value),
                _field(f"{action}.move") + "expected one of",
            )
        )
    for value in (
        "enemy_5_basic",
        "ally_x_basic",
        "enemy_0",
        "enemy_-1_basic",
        "basic",
        "Enemy_0_basic",
        "",
        None,
        6,
        [6, 0],
    ):
        cases.append(
            (
                f"combat {_label(value)}",
                _mutate(f"{action}.combat", value),
                _field(f"{action}.combat") + "expected one of",
            )
        )
    no_why = copy.deepcopy(VALID)
    for ln in no_why["lines"]:
        for tick in ln["ticks"]:
            for act in tick.values():
                act.pop("why", None)
    for v in no_why["variants"]:
        v.pop("why")
    second = {"name": "again", "ticks": [{"a_0": {"move": "west", "combat": "ally_4_ultimate"}}]}
    cases += [
        (
            "why omitted everywhere",
            no_why,
            lambda s: (
                all(a.why == "" for ln in s.lines for t in ln.ticks for a in t.values())
                and all(v.why == "" for v in s.variants)
                and len(s.variants) == 3
            ),
        ),
        (
            "an extra line",
            _mutate("lines", [line, second]),
            lambda s: (
                [ln.name for ln in s.lines] == ["bait the Charge", "again"]
                and s.lines[1].ticks[0][0].heads == (4, 5, 1)
                and s.lines[1].actions().tolist()
                == [[[4, 5, 1], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]]
            ),
        ),
        (
            f"{MAX_LINES} lines",
            _mutate("lines", [line] * MAX_LINES),
            lambda s: len(s.lines) == MAX_LINES,
        ),
        (
            "an empty tick (all stay)",
            _mutate("lines.0.ticks.3", {}),
            lambda s: s.lines[0].ticks[3] == {} and not s.lines[0].actions()[3].any(),
        ),
        (
            "a one-tick line",
            _edit(
                VALID,
                lines__0__ticks=line["ticks"][:1],
                variants=[v for v in VALID["variants"] if v["tick"] == 1],
            ),
            lambda s: len(s.lines[0].ticks) == 1 and s.lines[0].ticks[0][2].heads == (0, 9, 1),
        ),
        (
            "a dead agent commanded (it may respawn)",
            _mutate("lines.0.ticks.1.a_1", {"move": "north", "combat": "no_combat"}),
            lambda s: s.lines[0].ticks[1][1].heads == (1, 0, 0),
        ),
        (
            "why of 2000 characters",
            _mutate(f"{action}.why", "w" * 2000),
            lambda s: s.lines[0].ticks[0][0].why == "w" * 2000,
        ),
        (
            "untargeted ultimate while moving southwest",
            _mutate("lines.0.ticks.4.a_0", {"move": "southwest", "combat": "ultimate"}),
            lambda s: s.lines[0].ticks[4][0].heads == (8, 0, 1),
        ),
    ]
    return cases


# --- variants -------------------------------------------------------------------------------------
def _variant_cases() -> list[tuple[str, Any, Expect]]:
    v0 = VALID["variants"][0]  # line 0, tick 1, a_0 east no_combat (the line: east ultimate)
    cases: list[tuple[str, Any, Expect]] = [
        (
            "variant line 1 of one",
            _mutate("variants.0.line", 1),
            _field("variants.0.line") + r"expected an integer in \[0, 0\]",
        ),
        ("variant line -1", _mutate("variants.0.line", -1), _field("variants.0.line")),
        ("variant line '0'", _mutate("variants.0.line", "0"), _field("variants.0.line")),
        ("variant line false", _mutate("variants.0.line", False), _field("variants.0.line")),
        (
            "variant tick 0",
            _mutate("variants.0.tick", 0),
            _field("variants.0.tick") + r"expected an integer in \[1, 5\]",
        ),
        ("variant tick beyond the line", _mutate("variants.0.tick", 6), _field("variants.0.tick")),
        ("variant tick 1.0", _mutate("variants.0.tick", 1.0), _field("variants.0.tick")),
        ("variant agent b_0", _mutate("variants.0.agent", "b_0"), _field("variants.0.agent")),
        ("variant agent 0", _mutate("variants.0.agent", 0), _field("variants.0.agent")),
        ("variant move unknown", _mutate("variants.0.move", "up"), _field("variants.0.move")),
        (
            "variant combat enemy_5_basic",
            _mutate("variants.0.combat", "enemy_5_basic"),
            _field("variants.0.combat"),
        ),
        (
            "variant the line's own action",
            _mutate("variants.0.combat", "ultimate"),
            _field("variants.0") + "changes nothing: the action is the line's own",
        ),
        (
            "variant of an unlisted agent staying",
            _mutate("variants.0", {**v0, "agent": "a_1", "move": "stay", "combat": "no_combat"}),
            _field("variants.0") + "changes nothing",
        ),
        (
            "variant repeating tick 5's heal",
            _mutate(
                "variants.2",
                {**v0, "tick": 5, "agent": "a_4", "move": "stay", "combat": "ally_2_basic"},
            ),
            _field("variants.2") + "changes nothing",
        ),
        (
            "variant outcome win",
            _mutate("variants.0.outcome", "win"),
            _field("variants.0.outcome") + r"expected one of \['loss', 'draw'\]",
        ),
        (
            "variant outcome Loss",
            _mutate("variants.0.outcome", "Loss"),
            _field("variants.0.outcome"),
        ),
        ("variant outcome null", _mutate("variants.0.outcome", None), _field("variants.0.outcome")),
        (
            "variant with an unknown key",
            _mutate("variants.0.note", "x"),
            _field("variants.0")[:-2] + r": unknown key\(s\) \['note'\]",
        ),
        (
            "variant without outcome",
            _mutate("variants.0.outcome", DELETE),
            _field("variants.0")[:-2] + r": missing key\(s\) \['outcome'\]",
        ),
        (
            "variant without move",
            _mutate("variants.1.move", DELETE),
            _field("variants.1")[:-2] + r": missing key\(s\) \['move'\]",
        ),
        (
            "variant why of 2001 characters",
            _mutate("variants.0.why", "w" * 2001),
            _field("variants.0.why"),
        ),
        ("variant a list", _mutate("variants.0", [0, 1, "a_0"]), _field("variants.0")[:-2] + ":"),
        ("variants an object", _mutate("variants", v0), _field("variants")),
        ("variants null", _mutate("variants", None), _field("variants")),
        (
            f"{MAX_VARIANTS + 1} variants",
            _mutate("variants", [v0] * (MAX_VARIANTS + 1)),
            _field("variants") + f"expected a list of 0-{MAX_VARIANTS} entries",
        ),
    ]
    second = {"name": "again", "ticks": [{"a_4": {"move": "stay", "combat": "ally_2_basic"}}]}
    on_second = {
        "line": 1,
        "tick": 1,
        "agent": "a_4",
        "move": "stay",
        "combat": "ally_4_basic",
        "outcome": "loss",
    }
    cases += [
        (
            f"{MAX_VARIANTS} variants",
            _mutate("variants", [v0] * MAX_VARIANTS),
            lambda s: len(s.variants) == MAX_VARIANTS,
        ),
        (
            "variant of the second line",
            _edit(VALID, lines=[*VALID["lines"], second], variants=[on_second]),
            lambda s: (
                s.variants[0].line == 1
                and s.variants[0].agent == 4
                and s.variants[0].actions(s.lines).tolist()[0][4] == [0, 5, 0]
                and s.variants[0].why == ""
            ),
        ),
        (
            "variant on the last tick of the line",
            _mutate("variants.0", {**v0, "tick": 5, "move": "north"}),
            lambda s: (s.variants[0].tick, s.variants[0].action.heads) == (5, (1, 0, 0)),
        ),
    ]
    return cases


FILE_CASES: list[tuple[str, Any, Expect]] = (
    _file_level_cases()
    + _top_level_cases()
    + _arena_cases()
    + _unit_cases()
    + _line_cases()
    + _variant_cases()
)


def test_there_are_enough_malformed_scenario_files(enough_fuzz_cases):
    enough_fuzz_cases(FILE_CASES)


@pytest.mark.parametrize(("what", "content", "expect"), FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_scenario_files(tmp_path, fuzz_outcome, case_bytes, what, content, expect):
    del what  # the case's id
    path = tmp_path / NAME
    path.write_bytes(case_bytes(content))
    scenario = fuzz_outcome(expect, lambda: load_file(path), ScenarioError)
    if scenario is not None:
        assert scenario == load(path)  # a Path is read as a file
        assert scenario == load(str(path))  # so is a string ending in .json


# --- references: paths, names and ids -------------------------------------------------------------
def _reference_cases() -> list[tuple[str, str, Callable[[Path], Any], Expect]]:
    """(id, file or folder to create as "name:content" or "name/", reference, expect)."""
    ok = json.dumps(VALID)
    return [
        (
            "missing .json path",
            "",
            lambda d: str(d / "absent.json"),
            r"^scenario file '[^']*absent\.json' does not exist",
        ),
        (
            "missing pathlib.Path",
            "",
            lambda d: d / "absent",
            r"^scenario file '[^']*absent' does not exist",
        ),
        (
            "a directory named .json",
            "dir.json/",
            lambda d: str(d / "dir.json"),
            r"^scenario file '[^']*dir\.json' is not a regular file",
        ),
        (
            "a directory as a Path",
            "dir/",
            lambda d: d / "dir",
            r"^scenario file '[^']*dir' is not a regular file",
        ),
        (
            "path too long",
            "",
            lambda d: "a" * 5000 + ".json",
            r"^scenario file 'a+\.\.\. cannot be read",
        ),
        ("NUL in a .json path", "", lambda d: "x\x00.json", r"^scenario file 'x\\x00\.json' "),
        (
            "string path without .json",
            "my_scenario:" + ok,
            lambda d: "my_scenario",
            r"^scenario: no shipped scenario is named 'my_scenario'",
        ),
        ("unknown shipped id", "", lambda d: 99, r"^scenario: 99 is not a shipped scenario"),
        ("id 0", "", lambda d: 0, r"^scenario: 0 is not a shipped scenario"),
        ("bool reference", "", lambda d: True, r"^scenario: expected an id"),
        ("float reference", "", lambda d: 6.0, r"^scenario: expected an id"),
        ("bytes path", "", lambda d: bytes(d / NAME), r"^scenario: expected an id"),
        ("None reference", "", lambda d: None, r"^scenario: expected an id"),
        ("a decoded document", "", lambda d: VALID, r"^scenario: expected an id"),
        (
            "string path to a malformed file",
            "m.json:" + json.dumps({**VALID, "id": 2**63}),
            lambda d: str(d / NAME),
            _field("id"),
        ),
        (
            "pathlib.Path with .txt suffix",
            "my.txt:" + ok,
            lambda d: d / "my.txt",
            lambda s: s.id == 6 and s.name == "keep_the_trap",
        ),
        ("relative .json string path", "rel.json:" + ok, lambda d: "rel.json", lambda s: s.id == 6),
        ("shipped id", "", lambda d: 6, lambda s: s.name == "keep_the_trap"),
        ("shipped id as numpy int", "", lambda d: np.int64(6), lambda s: s.id == 6),
        ("shipped name", "", lambda d: "keep_the_trap", lambda s: s.id == 6),
    ]


REFERENCE_CASES = _reference_cases()


@pytest.mark.parametrize(
    ("what", "setup", "ref", "expect"), REFERENCE_CASES, ids=[c[0] for c in REFERENCE_CASES]
)
def test_scenario_references(tmp_path, monkeypatch, fuzz_outcome, what, setup, ref, expect):
    del what
    monkeypatch.chdir(tmp_path)  # relative references resolve inside tmp_path
    if setup:
        name, _, content = setup.partition(":")
        if name.endswith("/"):
            (tmp_path / name).mkdir()
        else:
            (tmp_path / name).write_text(content, encoding="utf-8")
    reference = ref(tmp_path)
    fuzz_outcome(expect, lambda: load(reference), ScenarioError)


def test_load_file_refuses_a_non_path(record_property):
    record_property("outcome", "error")
    with pytest.raises(ScenarioError, match=r"^scenario file: expected a str or pathlib\.Path"):
        load_file(6)  # type: ignore[arg-type]


# --- make -----------------------------------------------------------------------------------------
MAKE_CASES = [
    ("make with a huge id", {**VALID, "id": 10**30}, _field("id")),
    ("make with NaN health", _raw("units.0.health", "NaN"), _field("units.0.health")),
    (
        "make with team B's agent in a line",
        _mutate("lines.0.ticks.0.b_0", STAY),
        r"^m\.json\.lines\[0\]\.ticks\[0\] agent: ",
    ),
    (
        "make with a unit that does not fit the mirror image",
        _edit(VALID, units__9__x=13.0999, units__9__y=5.0),
        _field("units.9")[:-2] + ": position",
    ),
    ("make with a truncated file", SHIPPED[:500], FILE + "is not valid JSON"),
]


@pytest.mark.parametrize(("what", "content", "expect"), MAKE_CASES, ids=[c[0] for c in MAKE_CASES])
def test_make_with_malformed_scenario_files(
    tmp_path, record_property, case_bytes, what, content, expect
):
    del what
    record_property("outcome", "error")
    path = tmp_path / NAME
    path.write_bytes(case_bytes(content))
    with pytest.raises(ScenarioError, match=expect):
        marl_bgs.make_scenario(str(path), num_envs=2)
    with pytest.raises(ScenarioError, match=expect):
        marl_bgs.make_scenario(path, num_envs=2)


def test_make_with_a_custom_scenario_file(tmp_path, record_property):
    record_property("outcome", "accepted")
    doc = _edit(VALID, id=42, name="custom_fuzz", score=[3, 11], ticks_left=9, wave=[1, 2])
    path = tmp_path / "custom.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    env = marl_bgs.make_scenario(str(path), num_envs=2)
    _, state = env.reset(jax.random.key(0))
    assert np.asarray(state.game.score).tolist() == [[3, 11], [3, 11]]
    assert np.asarray(state.game.tick).tolist() == [291, 291]
    assert np.asarray(state.game.wave).tolist() == [[1, 2], [1, 2]]
    health = np.asarray(state.game.units.health[0]).tolist()
    assert health == [80.0, 0.0, 7.0, 0.0, 1.0, 20.0, 40.0, 0.0, 26.0, 0.0]
