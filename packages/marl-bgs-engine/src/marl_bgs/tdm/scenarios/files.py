"""Scenario files: format `marl-bgs-scenario-v1`, validated on load like any authored state.

A scenario is one exact snapshot of a game in progress on its own arena (a custom map, never one
of the 52), the controller that plays team B, and team A's verified winning lines. The file is
JSON; every field is checked and a bad one raises `ScenarioError` naming it:

- `format`, `id` (1-99), `name` (a slug), `challenge`, `description`, `skills` (from `SKILLS`),
  `opponent` (a scripted team: "tdm-alpha", "tdm-beta", ...);
- `arena`: a map document (format `marl-bgs-map-v1`, split "custom"), checked by the map parser;
- `score` [A, B], `ticks_left` (1-10: the game is drawn after tick 300), `wave` [A, B] (each
  team's respawn countdown), `units`: one object per unit with `agent` ("a_0".."b_4"), `cls`
  and the fields of `UnitSpec` (`health`, `cooldown`, statuses, ...), all checked by
  `author_state`;
- `lines`: team A's winning lines, each `{"name", "ticks": [{agent: {"move", "combat",
  "why"}}, ...]}` with moves by name in the agent's own frame (`stay`, `north`, `east`, ...) and
  combat pairs by name (`no_combat`, `ultimate`, `enemy_2_basic`, `ally_0_ultimate`, ...); an
  agent not listed on a tick stays and does not fight;
- `variants`: one key move of a line changed (`line`, `tick` from 1, `agent`, `move`, `combat`),
  the `outcome` it leads to ("loss" or "draw") and `why`.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from marl_bgs.core.arena import MAP_WIDTH, MIRROR_MOVE, MOVE_NAMES
from marl_bgs.core.checks import check_int, shown
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.files import read_json
from marl_bgs.tdm.actions import COMBAT_PAIRS
from marl_bgs.tdm.authoring import UnitSpec, author_state
from marl_bgs.tdm.classes import LETTERS, class_id
from marl_bgs.tdm.config import RuleValues
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.maps import MapSpec
from marl_bgs.tdm.maps import parse as parse_map
from marl_bgs.tdm.maps.symmetry import mirrored
from marl_bgs.tdm.scripted.styles import STYLES
from marl_bgs.tdm.state import GameState

FORMAT = "marl-bgs-scenario-v1"
MAX_FILE_BYTES = 200_000
MAX_ID = 99
MAX_LINES = 8
MAX_VARIANTS = 16
MAX_TEXT = 2000
MAX_TICKS_LEFT = 10  # an endgame: at most this many ticks before the draw (one replay program)
# The ten team skills of the paper's Table 2, in its order.
SKILLS = (
    "teammate modeling",
    "opponent modeling",
    "basic damage target timing",
    "ultimate timing",
    "tactical obstacle exploitation",
    "tactical positioning",
    "balancing defensive and offensive play",
    "strategic sacrifice",
    "plan adaptation",
    "multi-step team-level planning",
)
OUTCOMES = ("loss", "draw")
AGENT_NAMES = tuple(f"a_{k}" for k in range(TEAM_SIZE)) + tuple(f"b_{k}" for k in range(TEAM_SIZE))
_TOP_KEYS = {
    "format", "id", "name", "challenge", "description", "skills", "opponent", "arena", "score",
    "ticks_left", "wave", "units", "lines", "variants",
}  # fmt: skip
_UNIT_FIELDS = {f for f in UnitSpec.__dataclass_fields__ if f != "slot"}
_UNIT_KEYS = _UNIT_FIELDS | {"agent"}
_ACTION_KEYS = {"move", "combat", "why"}
_VARIANT_KEYS = {"line", "tick", "agent", "move", "combat", "outcome", "why"}
_SLUG = re.compile(r"[a-z0-9][a-z0-9_]{0,47}")


class ScenarioError(ConfigError):
    """A scenario file or request is invalid; the message names the field and what is allowed."""


@dataclass(frozen=True)
class Action:
    """One agent's choice on one tick of a line, in its own frame, and why."""

    move: int
    target: int
    ultimate: int
    why: str = ""

    @property
    def heads(self) -> tuple[int, int, int]:
        return (self.move, self.target, self.ultimate)


@dataclass(frozen=True)
class Line:
    """Team A's actions tick by tick: `ticks[t][k]` is roster slot k's action on tick t+1."""

    name: str
    ticks: tuple[dict[int, Action], ...]

    def actions(self) -> np.ndarray:
        """int32 [len(ticks), 5, 3]: team A's heads per tick (unlisted agents: stay, none)."""
        out = np.zeros((len(self.ticks), TEAM_SIZE, 3), np.int32)
        for t, tick in enumerate(self.ticks):
            for k, action in tick.items():
                out[t, k] = action.heads
        return out


@dataclass(frozen=True)
class Variant:
    """A line with one key move changed, and the outcome that change leads to."""

    line: int
    tick: int  # from 1
    agent: int  # team A roster slot
    action: Action
    outcome: str
    why: str

    def actions(self, lines: tuple[Line, ...]) -> np.ndarray:
        out = lines[self.line].actions()
        out[self.tick - 1, self.agent] = self.action.heads
        return out


@dataclass(frozen=True)
class Scenario:
    """One validated endgame scenario (see the module docstring for the fields)."""

    id: int
    name: str
    challenge: str
    description: str
    skills: tuple[str, ...]
    opponent: str
    arena: MapSpec
    score: tuple[int, int]
    ticks_left: int
    wave: tuple[int, int]
    units: tuple[UnitSpec, ...]
    lines: tuple[Line, ...]
    variants: tuple[Variant, ...]

    def state(self, rules: RuleValues | None = None, *, mirrored: bool = False) -> GameState:
        """The snapshot as a validated game state; `mirrored`: the same position reflected
        across x = 10 with team A on the right (its own frame sees the same game)."""
        rules = rules or RuleValues()
        arena, units = self.arena, list(self.units)
        if mirrored:
            arena, units = _mirror(arena, units)
        return author_state(
            units=units, map_id=arena, score=self.score, tick=rules.tick_limit - self.ticks_left,
            wave=self.wave, swap=mirrored, **asdict(rules),
        )  # fmt: skip

    @property
    def rosters(self) -> tuple[str, str]:
        """Each team's living classes as letters, e.g. ("MHP", "MWR")."""
        living = [(u.slot, LETTERS[class_id(u.cls, "cls") - 1]) for u in self.units if u.alive]
        team = lambda t: "".join(c for s, c in sorted(living) if s // TEAM_SIZE == t)  # noqa: E731
        return team(0), team(1)


def _mirror(arena: MapSpec, units: list[UnitSpec]) -> tuple[MapSpec, list[UnitSpec]]:
    flipped = replace(arena, obstacles=tuple(mirrored(o) for o in arena.obstacles))
    out = [
        replace(u, x=MAP_WIDTH - float(u.x), last_move=int(MIRROR_MOVE[u.last_move])) for u in units
    ]
    return flipped, out


def _fail(field: str, message: str) -> ScenarioError:
    return ScenarioError(f"{field}: {message}")


def _keys(raw: Any, allowed: set[str], field: str, required: set[str]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise _fail(field, f"expected a JSON object, got {shown(raw)}")
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise _fail(field, f"unknown key(s) {shown(unknown)}; allowed {sorted(allowed)}")
    missing = sorted(required - set(raw))
    if missing:
        raise _fail(field, f"missing key(s) {missing}")
    return raw


def _text(raw: Any, field: str, limit: int = MAX_TEXT, empty: bool = False) -> str:
    if not isinstance(raw, str) or len(raw) > limit or (not raw and not empty):
        raise _fail(field, f"expected a string of {0 if empty else 1}-{limit} characters, got "
                           f"{shown(raw)}")  # fmt: skip
    return raw


def _choice(raw: Any, allowed: tuple[str, ...] | list[str], field: str) -> str:
    if not isinstance(raw, str) or raw not in allowed:
        raise _fail(field, f"expected one of {list(allowed)}, got {shown(raw)}")
    return raw


def _int(raw: Any, field: str, lo: int, hi: int) -> int:
    return check_int(raw, field, lo, hi, error=ScenarioError)


def _pair(raw: Any, field: str, lo: int, hi: int) -> tuple[int, int]:
    if not isinstance(raw, list) or len(raw) != 2:
        raise _fail(field, f"expected a list [team A, team B], got {shown(raw)}")
    return _int(raw[0], f"{field}[0]", lo, hi), _int(raw[1], f"{field}[1]", lo, hi)


def _unit(raw: Any, field: str) -> UnitSpec:
    raw = _keys(raw, _UNIT_KEYS, field, {"agent", "cls", "x", "y"})
    agent = _choice(raw["agent"], AGENT_NAMES, f"{field}.agent")
    # Values are checked by author_state, which names the field as units[k].<name>.
    return UnitSpec(slot=AGENT_NAMES.index(agent), **{k: raw[k] for k in raw if k != "agent"})


def _action(raw: Any, field: str) -> Action:
    raw = _keys(raw, _ACTION_KEYS, field, {"move", "combat"})
    move = MOVE_NAMES.index(_choice(raw["move"], MOVE_NAMES, f"{field}.move"))
    target, ult = COMBAT_PAIRS[_choice(raw["combat"], list(COMBAT_PAIRS), f"{field}.combat")]
    return Action(move, target, ult, _text(raw.get("why", ""), f"{field}.why", empty=True))


def _tick(raw: Any, field: str) -> dict[int, Action]:
    if not isinstance(raw, dict):
        raise _fail(field, f"expected an object {{agent: action}}, got {shown(raw)}")
    team_a = AGENT_NAMES[:TEAM_SIZE]
    return {
        team_a.index(_choice(agent, team_a, f"{field} agent")): _action(a, f"{field}.{agent}")
        for agent, a in raw.items()
    }


def _line(raw: Any, field: str, ticks_left: int) -> Line:
    raw = _keys(raw, {"name", "ticks"}, field, {"name", "ticks"})
    ticks = raw["ticks"]
    if not isinstance(ticks, list) or not 1 <= len(ticks) <= ticks_left:
        raise _fail(f"{field}.ticks", f"expected a list of 1-{ticks_left} ticks (the ticks "
                                      f"left), got {shown(ticks)}")  # fmt: skip
    parsed = tuple(_tick(t, f"{field}.ticks[{i}]") for i, t in enumerate(ticks))
    return Line(_text(raw["name"], f"{field}.name", 80), parsed)


def _variant(raw: Any, field: str, lines: tuple[Line, ...]) -> Variant:
    raw = _keys(raw, _VARIANT_KEYS, field, _VARIANT_KEYS - {"why"})
    line = _int(raw["line"], f"{field}.line", 0, len(lines) - 1)
    tick = _int(raw["tick"], f"{field}.tick", 1, len(lines[line].ticks))
    team_a = AGENT_NAMES[:TEAM_SIZE]
    agent = team_a.index(_choice(raw["agent"], team_a, f"{field}.agent"))
    action = _action({"move": raw["move"], "combat": raw["combat"]}, field)
    if list(action.heads) == lines[line].actions()[tick - 1, agent].tolist():
        raise _fail(field, "changes nothing: the action is the line's own")
    outcome = _choice(raw["outcome"], OUTCOMES, f"{field}.outcome")
    return Variant(line, tick, agent, action, outcome, _text(raw.get("why", ""), f"{field}.why",
                                                             empty=True))  # fmt: skip


def _list(raw: Any, field: str, lo: int, hi: int) -> list[Any]:
    if not isinstance(raw, list) or not lo <= len(raw) <= hi:
        raise _fail(field, f"expected a list of {lo}-{hi} entries, got {shown(raw)}")
    return raw


def parse(raw: Any, source: str = "scenario") -> Scenario:
    """Validate a decoded scenario document; raise ScenarioError naming the field."""
    raw = _keys(raw, _TOP_KEYS, source, _TOP_KEYS - {"description", "variants"})
    if raw["format"] != FORMAT:
        raise _fail(f"{source}.format", f"expected {FORMAT!r}, got {shown(raw['format'])}")
    sid = _int(raw["id"], f"{source}.id", 1, MAX_ID)
    name = raw["name"]
    if not isinstance(name, str) or not _SLUG.fullmatch(name):
        raise _fail(f"{source}.name", f"expected a slug like 'keep_the_trap', got {shown(name)}")
    skills = tuple(_list(raw["skills"], f"{source}.skills", 1, len(SKILLS)))
    for i, s in enumerate(skills):
        _choice(s, SKILLS, f"{source}.skills[{i}]")
    if len(set(skills)) != len(skills):
        raise _fail(f"{source}.skills", "a skill is listed twice")
    opponent = _choice(raw["opponent"], sorted(STYLES), f"{source}.opponent")
    try:
        arena = parse_map(raw["arena"], f"{source}.arena")
    except ConfigError as err:
        raise ScenarioError(str(err)) from None
    if arena.split != "custom":
        raise _fail(f"{source}.arena.split", "a scenario's arena is its own: expected 'custom'")
    rules = RuleValues()
    ticks_left = _int(raw["ticks_left"], f"{source}.ticks_left", 1, MAX_TICKS_LEFT)
    score = _pair(raw["score"], f"{source}.score", 0, rules.winning_score - 1)
    wave = _pair(raw["wave"], f"{source}.wave", 0, rules.wave_period - 1)
    raw_units = _list(raw["units"], f"{source}.units", 2, 10)
    units = tuple(_unit(u, f"{source}.units[{i}]") for i, u in enumerate(raw_units))
    raw_lines = _list(raw["lines"], f"{source}.lines", 1, MAX_LINES)
    lines = tuple(_line(x, f"{source}.lines[{i}]", ticks_left) for i, x in enumerate(raw_lines))
    raw_variants = _list(raw.get("variants", []), f"{source}.variants", 0, MAX_VARIANTS)
    variants = tuple(
        _variant(v, f"{source}.variants[{i}]", lines) for i, v in enumerate(raw_variants)
    )
    scenario = Scenario(
        id=sid, name=name, challenge=_text(raw["challenge"], f"{source}.challenge", 80),
        description=_text(raw.get("description", ""), f"{source}.description", empty=True),
        skills=skills, opponent=opponent, arena=arena, score=score, ticks_left=ticks_left,
        wave=wave, units=units, lines=lines, variants=variants,
    )  # fmt: skip
    # Every unit value, position and overlap (author_state's checks), on both sides: float32
    # rounding can put a body that just fits into the mirrored obstacle, and make() builds both.
    for side in (False, True):
        try:
            scenario.state(mirrored=side)
        except ConfigError as err:
            mirror = " (in the mirror image, team A on the right)" if side else ""
            raise ScenarioError(f"{source}.{err}{mirror}") from None
    listed = {u.slot for u in units}
    acting = [
        (f"{source}.lines[{i}].ticks[{t}].{AGENT_NAMES[k]}", k)
        for i, line in enumerate(lines)
        for t, tick in enumerate(line.ticks)
        for k in tick
    ]
    acting += [(f"{source}.variants[{i}].agent", v.agent) for i, v in enumerate(variants)]
    for field, k in acting:
        if k not in listed:
            raise _fail(field, f"{AGENT_NAMES[k]} has no unit in the scenario")
    return scenario


def load_file(path: str | Path) -> Scenario:
    """Read and validate a scenario file from disk (size-limited; malformed JSON refused)."""
    path, raw = read_json(path, "scenario file", MAX_FILE_BYTES, ScenarioError)
    return parse(raw, source=path.name)


def _shipped_files() -> list[Any]:
    folder = resources.files("marl_bgs.tdm.scenarios").joinpath("data")
    return sorted((e for e in folder.iterdir() if e.name.endswith(".json")), key=str)


@cache
def shipped() -> dict[int, Scenario]:
    """The shipped scenarios by id (read and validated once per process)."""
    out: dict[int, Scenario] = {}
    for entry in _shipped_files():
        sc = load_file(Path(str(entry)))
        if sc.id in out or not entry.name.startswith(f"{sc.id}_"):
            raise ScenarioError(f"{entry.name}: id {sc.id} is repeated or disagrees with the name")
        out[sc.id] = sc
    return dict(sorted(out.items()))


def ids() -> list[int]:
    """Ids of the shipped scenarios."""
    return list(shipped())


def load(ref: int | str | Path | Scenario) -> Scenario:
    """A scenario by id, by name, from a file (a path ending in .json or a `pathlib.Path`), or a
    `Scenario` passed through."""
    if isinstance(ref, Scenario):
        return ref
    if isinstance(ref, int | np.integer) and not isinstance(ref, bool):
        if int(ref) not in shipped():
            raise ScenarioError(f"scenario: {shown(ref)} is not a shipped scenario; ids {ids()}")
        return shipped()[int(ref)]
    if isinstance(ref, str) and not ref.endswith(".json"):
        by_name = {s.name: s for s in shipped().values()}
        if ref not in by_name:
            raise ScenarioError(
                f"scenario: no shipped scenario is named {shown(ref)}; names {sorted(by_name)}"
            )
        return by_name[ref]
    if isinstance(ref, str | Path):
        return load_file(ref)
    raise ScenarioError(
        f"scenario: expected an id {ids()}, a name, a .json path or a Scenario, got {shown(ref)}"
    )
