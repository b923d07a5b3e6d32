"""Configuration and game-state validation: `make` and `author_state` reject bad input on the host.

Every rejection is a `ConfigError` (a `ValueError`) whose message names the field and the allowed
values; unknown maps raise `marl_bgs.maps.MapError`. Nothing here compiles a step: every `make`
call below fails before the start pool is built.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest

import marl_bgs
from marl_bgs import ConfigError, UnitSpec, author_state
from marl_bgs.core.checks import did_you_mean
from marl_bgs.core.registry import ALIASES, MODES
from marl_bgs.tdm.maps import MapError

U = UnitSpec
# Two units far apart on the open arena: the smallest valid authored state.
A_MAGE = U(slot=0, cls="M", x=5.0, y=5.0)
B_WARRIOR = U(slot=5, cls="W", x=15.0, y=5.0)


def authored(*units: UnitSpec, **kw: Any) -> marl_bgs.GameState:
    """author_state with the two default units unless others are given."""
    return author_state(units=list(units) or [A_MAGE, B_WARRIOR], **kw)


def test_config_error_is_a_value_error() -> None:
    assert issubclass(ConfigError, ValueError)
    assert issubclass(MapError, ConfigError)  # one except clause catches every bad setting
    with pytest.raises(ConfigError, match=r"^map_id: "):
        marl_bgs.make("tdm", map_id=999)


# ----------------------------------------------------------------------------------- make(...)


@pytest.mark.parametrize("mode", ["deathmatch", "TDM", "tdm-v1", "tdm-v3", ""])
def test_unknown_mode(mode: str) -> None:
    allowed = re.escape(str(sorted(MODES) + sorted(ALIASES)))  # every registered id, then aliases
    with pytest.raises(ConfigError, match=rf"^mode: unknown mode .*allowed {allowed}$"):
        marl_bgs.make(mode)


@pytest.mark.parametrize("num_envs", [0, -4, True, False, 2.0, "8", None])
def test_num_envs_must_be_a_positive_integer(num_envs: Any) -> None:
    with pytest.raises(ConfigError, match=r"^num_envs: expected an integer in \[1, "):
        marl_bgs.make("tdm", num_envs=num_envs)


@pytest.mark.parametrize(
    "spawn_swap", ["sometimes", "Half", None, True, np.array(["half"]), ["half"], b"half"]
)
def test_unknown_spawn_swap(spawn_swap: Any) -> None:
    allowed = r"\['half', 'none', 'all', 'random'\]"
    with pytest.raises(ConfigError, match=rf"^spawn_swap: expected one of {allowed}"):
        marl_bgs.make("tdm", spawn_swap=spawn_swap)


@pytest.mark.parametrize(
    ("rosters", "message"),
    [
        (("MWHRX", "MWHRP"), r"^rosters\[0\]\[0\]: unknown class letter.*'X'.*M, W, H, R, P"),
        (("MWHRP", "MWQRP"), r"^rosters\[0\]\[1\]: unknown class letter.*'Q'.*M, W, H, R, P"),
        (("", "MWHRP"), r"^rosters\[0\]\[0\]: a team has 1 to 5 agents, got 0"),
        (("MWHRP", "MWHRPM"), r"^rosters\[0\]\[1\]: a team has 1 to 5 agents, got 6"),
        (((), "MWHRP"), r"^rosters\[0\]\[0\]: a team has 1 to 5 agents, got 0"),
        (((1, 2, 9), "MWHRP"), r"^rosters\[0\]\[0\]: unknown class id.*\[9\].*1-5"),
        ((("MWHRP", "MWHRP"), ("MWH", (0, 1))), r"^rosters\[1\]\[1\]: unknown class id.*\[0\]"),
        ("MWHRP", r"^rosters: expected a pair"),
        ([], r"^rosters: expected a pair"),
        ([("MWHRP",)], r"^rosters\[0\]: expected a pair"),
    ],
)
def test_bad_rosters(rosters: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        marl_bgs.make("tdm", rosters=rosters)


RULE_CASES = [
    ("winning_score", [0, 1001, -5, 5.5, True, "20", None], r"\[1, 1000\]"),
    ("tick_limit", [0, 10_001, 300.0, False], r"\[1, 10000\]"),
    ("red_zone_depth", [-0.5, 10.5, math.nan, math.inf, True, "5"], r"\[0\.0, 10\.0\]"),
    ("wave_period", [0, 101, 2.5], r"\[1, 100\]"),
    ("shield_ticks", [-1, 31, 1.5], r"\[0, 30\]"),
    ("shield_speed", [-1.0, 2.5, 5.0, math.nan], r"\[0\.0, 2\.0\]"),
]


@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [pytest.param(f, v, a, id=f"{f}={v!r}") for f, values, a in RULE_CASES for v in values],
)
def test_rule_values_out_of_range_or_wrong_type(field: str, value: Any, allowed: str) -> None:
    with pytest.raises(ConfigError, match=rf"^{field}: .*{allowed}"):
        marl_bgs.make("tdm", **{field: value})
    with pytest.raises(ConfigError, match=rf"^{field}: .*{allowed}"):
        authored(**{field: value})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("winning_score", 1),
        ("winning_score", 1000),
        ("tick_limit", 1),
        ("tick_limit", 10_000),
        ("red_zone_depth", 0.0),
        ("red_zone_depth", 10),
        ("wave_period", 1),
        ("wave_period", 100),
        ("shield_ticks", 0),
        ("shield_ticks", 30),
        ("shield_speed", 0),
        ("shield_speed", 2.0),
    ],
)
def test_rule_values_at_their_limits_are_accepted(field: str, value: Any) -> None:
    state = authored(**{field: value})
    assert float(getattr(state.rules, field)) == pytest.approx(value)


@pytest.mark.parametrize("shared_sight", [1, "yes", None])
def test_shared_sight_must_be_a_bool(shared_sight: Any) -> None:
    with pytest.raises(ConfigError, match=r"^shared_sight: expected True or False"):
        marl_bgs.make("tdm", shared_sight=shared_sight)


@pytest.mark.parametrize("message_dim", [-1, 65, 2.0, True])
def test_message_dim_range(message_dim: Any) -> None:
    with pytest.raises(ConfigError, match=r"^message_dim: expected an integer in \[0, 64\]"):
        marl_bgs.make("tdm", message_dim=message_dim)


@pytest.mark.parametrize("map_id", [52, -1, 1000])
def test_unknown_map_id_lists_the_shipped_ids(map_id: int) -> None:
    with pytest.raises(
        MapError, match=rf"^map_id: {map_id} is not a shipped map; shipped ids: 0-51"
    ):
        marl_bgs.make("tdm", map_id=map_id)
    with pytest.raises(MapError, match=r"^map_id: .*shipped ids: 0-51"):
        authored(map_id=map_id)


@pytest.mark.parametrize(
    "map_id",
    [
        "Nowhere",
        True,
        [47, 99],
        3.0,
    ],
)
def test_bad_map_references(map_id: Any) -> None:
    with pytest.raises(MapError, match=r"^map_id: "):
        marl_bgs.make("tdm", map_id=map_id)


def test_empty_map_list() -> None:
    with pytest.raises(ConfigError, match=r"^map_id: expected a map or a non-empty list"):
        marl_bgs.make("tdm", map_id=[])


# ------------------------------------------------------------------------- author_state(...)


def test_valid_authored_state_holds_the_given_values() -> None:
    s = authored(
        U(slot=0, cls="M", x=5.0, y=5.0, health=40.0, burst=2, cooldown=30, recovery=5),
        U(slot=3, cls="rogue", x=2.0, y=8.0, alive=False, cooldown=7),
        U(slot=6, cls=2, x=15.0, y=5.0, stun=1, slow_charge=5, shield=3),
        score=(3, 19),
        tick=299,
        wave=(0, 4),
        swap=True,
    )
    assert s.units.class_id.tolist() == [1, 0, 0, 4, 0, 0, 2, 0, 0, 0]
    assert s.units.alive.tolist() == [True] + [False] * 5 + [True] + [False] * 3
    assert s.units.health.tolist()[:7] == [40.0, 0, 0, 0, 0, 0, 200.0]
    assert int(s.units.cooldown[3]) == 7
    assert (int(s.units.burst[0]), int(s.units.recovery[0]), int(s.units.shield[6])) == (2, 5, 3)
    assert s.score.tolist() == [3, 19]
    assert (int(s.tick), s.wave.tolist(), bool(s.swap), int(s.outcome)) == (299, [0, 4], True, 0)


def test_touching_bodies_are_accepted_overlapping_rejected() -> None:
    authored(U(slot=0, cls="M", x=5.0, y=5.0), U(slot=5, cls="W", x=6.0, y=5.0))
    with pytest.raises(ConfigError, match=r"^units: bodies of slots 0 and 5 overlap"):
        authored(U(slot=0, cls="M", x=5.0, y=5.0), U(slot=5, cls="W", x=5.9, y=5.0))
    with pytest.raises(ConfigError, match=r"^units: bodies of slots 1 and 2 overlap"):
        authored(
            U(slot=1, cls="W", x=5.0, y=5.0),
            U(slot=2, cls="H", x=5.3, y=5.4),
            B_WARRIOR,
        )


def test_shielded_and_dead_bodies_may_overlap() -> None:
    """Engine choice: only living unshielded bodies are solid, so only they are checked."""
    authored(U(slot=0, cls="M", x=5.0, y=5.0), U(slot=5, cls="W", x=5.2, y=5.0, shield=2))
    authored(U(slot=0, cls="M", x=5.0, y=5.0), U(slot=5, cls="W", x=5.2, y=5.0, alive=False))


@pytest.mark.parametrize(
    ("x", "y"),
    [(0.3, 5.0), (19.7, 5.0), (5.0, 0.2), (5.0, 9.9), (25.0, 5.0), (-1.0, 5.0), (5.0, 11.0)],
)
def test_positions_outside_the_map_are_rejected(x: float, y: float) -> None:
    with pytest.raises(ConfigError, match=r"^units\[0\]: position .* outside the map"):
        authored(U(slot=0, cls="M", x=x, y=y), B_WARRIOR)


def test_dead_units_must_lie_on_the_map_too() -> None:
    """A dead unit lies where it died (its own view and critics' views show it there)."""
    with pytest.raises(ConfigError, match=r"^units\[0\]: position \(50\.0, 5\.0\)"):
        authored(U(slot=0, cls="M", x=50.0, y=5.0, alive=False), B_WARRIOR)


@pytest.mark.parametrize(("x", "y"), [(0.5, 0.5), (19.5, 9.5), (0.5, 5.0)])
def test_positions_touching_the_border_are_accepted(x: float, y: float) -> None:
    s = authored(U(slot=0, cls="M", x=x, y=y), B_WARRIOR)
    assert s.units.pos[0].tolist() == pytest.approx([x, y])


@pytest.mark.parametrize("axis", ["x", "y"])
@pytest.mark.parametrize("value", [math.nan, math.inf, "5", None, True])
def test_coordinates_must_be_finite_numbers(axis: str, value: Any) -> None:
    spec = {"slot": 0, "cls": "M", "x": 5.0, "y": 5.0} | {axis: value}
    with pytest.raises(ConfigError, match=rf"^units\[0\]\.{axis}: expected a finite number"):
        authored(U(**spec), B_WARRIOR)


@pytest.mark.parametrize(("x", "y"), [(4.0, 7.5), (4.0, 6.9), (4.5, 7.9), (3.4, 7.5)])
def test_positions_inside_an_obstacle_are_rejected(x: float, y: float) -> None:
    """Map 47 has a pillar of radius 0.5 at (4, 7.5): a body must keep 1.0 from its centre."""
    with pytest.raises(ConfigError, match=r"^units\[0\]: .*into an obstacle"):
        authored(U(slot=0, cls="M", x=x, y=y), B_WARRIOR, map_id=47)


def test_position_touching_an_obstacle_is_accepted() -> None:
    s = authored(U(slot=0, cls="M", x=4.0, y=6.5), B_WARRIOR, map_id=47)
    assert s.units.pos[0].tolist() == [4.0, 6.5]
    assert int(s.map_id) == 47


@pytest.mark.parametrize(
    ("cls", "health", "limit"),
    [("M", 80.5, "80"), ("W", 201.0, "200"), ("R", 0.0, "100"), ("P", -5.0, "100"),
     ("H", math.nan, "100")],
)  # fmt: skip
def test_living_health_must_be_in_range(cls: str, health: float, limit: str) -> None:
    with pytest.raises(ConfigError, match=rf"^units\[0\]\.health: a living .* \(0, {limit}\]"):
        authored(U(slot=0, cls=cls, x=5.0, y=5.0, health=health), B_WARRIOR)


@pytest.mark.parametrize("health", ["full", True, [50.0]])
def test_health_must_be_a_number(health: Any) -> None:
    with pytest.raises(ConfigError, match=r"^units\[0\]\.health: "):
        authored(U(slot=0, cls="M", x=5.0, y=5.0, health=health), B_WARRIOR)


def test_health_limits_are_accepted() -> None:
    s = authored(
        U(slot=0, cls="M", x=5.0, y=5.0, health=80), U(slot=5, cls="W", x=15, y=5, health=0.01)
    )
    assert s.units.health[0] == 80.0
    assert s.units.health[5] == pytest.approx(0.01)


def test_dead_unit_with_health_is_rejected() -> None:
    with pytest.raises(ConfigError, match=r"^units\[0\]\.health: a dead unit has health 0"):
        authored(U(slot=0, cls="M", x=5.0, y=5.0, alive=False, health=10.0), B_WARRIOR)
    s = authored(U(slot=0, cls="M", x=5.0, y=5.0, alive=False, health=0.0), B_WARRIOR)
    assert not bool(s.units.alive[0])
    assert float(s.units.health[0]) == 0.0


@pytest.mark.parametrize("alive", ["no", 0, None])
def test_alive_must_be_a_bool(alive: Any) -> None:
    with pytest.raises(ConfigError, match=r"^units\[0\]\.alive: expected True or False"):
        authored(U(slot=0, cls="M", x=5.0, y=5.0, alive=alive), B_WARRIOR)


STATUSES = ["stun", "trap", "slow_charge", "slow_hunter", "slow_poison", "antiheal", "freedom",
            "burst", "shield", "recovery"]  # fmt: skip


@pytest.mark.parametrize("status", STATUSES)
def test_dead_unit_with_statuses_is_rejected(status: str) -> None:
    spec = U(slot=0, cls="M", x=5.0, y=5.0, alive=False, **{status: 1})
    with pytest.raises(ConfigError, match=rf"^units\[0\]\.{status}: a dead unit has no statuses"):
        authored(spec, B_WARRIOR)


def test_dead_unit_keeps_its_cooldown() -> None:
    """Engine choice: cooldowns keep running while an agent waits for its wave."""
    s = authored(U(slot=0, cls="M", x=5.0, y=5.0, alive=False, cooldown=12), B_WARRIOR)
    assert int(s.units.cooldown[0]) == 12


# Largest value of each duration right after it is applied (recovery: the class's delay).
CAPS = {
    "stun": 1, "trap": 4, "slow_charge": 5, "slow_hunter": 1, "slow_poison": 5, "antiheal": 4,
    "freedom": 1, "burst": 5, "cooldown": 30, "shield": 3, "recovery": 5,
}  # fmt: skip


@pytest.mark.parametrize(("status", "cap"), CAPS.items())
def test_durations_out_of_range(status: str, cap: int) -> None:
    for bad in (-1, cap + 1):
        spec = U(slot=0, cls="M", x=5.0, y=5.0, **{status: bad})
        with pytest.raises(ConfigError, match=rf"^units\[0\]\.{status}: .*\[0, {cap}\]"):
            authored(spec, B_WARRIOR)
    s = authored(U(slot=0, cls="M", x=5.0, y=5.0, **{status: cap}), B_WARRIOR)
    assert int(getattr(s.units, status)[0]) == cap


@pytest.mark.parametrize("value", [1.0, True, "2"])
def test_durations_must_be_integers(value: Any) -> None:
    with pytest.raises(ConfigError, match=r"^units\[0\]\.trap: expected an integer"):
        authored(U(slot=0, cls="M", x=5.0, y=5.0, trap=value), B_WARRIOR)


def test_duration_caps_follow_the_class_and_rules() -> None:
    """The Rogue's out-of-combat delay is 3; the shield cap is the configured shield_ticks."""
    with pytest.raises(ConfigError, match=r"^units\[0\]\.recovery: .*\[0, 3\]"):
        authored(U(slot=0, cls="R", x=5.0, y=5.0, recovery=4), B_WARRIOR)
    with pytest.raises(ConfigError, match=r"^units\[0\]\.shield: .*\[0, 2\]"):
        authored(U(slot=0, cls="R", x=5.0, y=5.0, shield=3), B_WARRIOR, shield_ticks=2)
    s = authored(U(slot=0, cls="R", x=5.0, y=5.0, shield=6), B_WARRIOR, shield_ticks=6)
    assert int(s.units.shield[0]) == 6


@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [("last_move", 9, r"\[0, 8\]"), ("last_target", 11, r"\[0, 10\]"), ("last_ult", 2, r"\[0, 1\]"),
     ("last_move", -1, r"\[0, 8\]")],
)  # fmt: skip
def test_last_actions_range(field: str, value: int, allowed: str) -> None:
    with pytest.raises(ConfigError, match=rf"^units\[0\]\.{field}: .*{allowed}"):
        authored(U(slot=0, cls="M", x=5.0, y=5.0, **{field: value}), B_WARRIOR)


@pytest.mark.parametrize("cls", ["X", "paladin", 0, 6, -1, 1.0, None, True])
def test_unknown_class(cls: Any) -> None:
    with pytest.raises(ConfigError, match=r"^units\[0\]\.cls: .*(M, W, H, R, P|\[1, 5\])"):
        authored(U(slot=0, cls=cls, x=5.0, y=5.0), B_WARRIOR)


@pytest.mark.parametrize(
    ("cls", "expected"), [("m", 1), ("Warrior", 2), ("H", 3), (4, 4), ("P", 5)]
)
def test_class_letters_names_and_ids(cls: Any, expected: int) -> None:
    s = authored(U(slot=0, cls=cls, x=5.0, y=5.0), B_WARRIOR)
    assert int(s.units.class_id[0]) == expected


def test_duplicate_slots() -> None:
    with pytest.raises(ConfigError, match=r"^units\[2\]\.slot: slot 0 is listed twice"):
        authored(A_MAGE, B_WARRIOR, U(slot=0, cls="H", x=8.0, y=2.0))


@pytest.mark.parametrize("slot", [-1, 10, 2.0, True, "0"])
def test_slot_range(slot: Any) -> None:
    with pytest.raises(ConfigError, match=r"^units\[0\]\.slot: expected an integer in \[0, 9\]"):
        authored(U(slot=slot, cls="M", x=5.0, y=5.0), B_WARRIOR)


def test_units_must_be_unit_specs() -> None:
    with pytest.raises(ConfigError, match=r"^units\[1\]: expected a UnitSpec, got dict"):
        author_state(units=[A_MAGE, {"slot": 5, "cls": "W", "x": 15, "y": 5}])
    with pytest.raises(ConfigError, match=r"^units: expected a list of UnitSpec"):
        author_state(units=None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("score", "winning_score"),
    [((20, 0), 20), ((0, 20), 20), ((25, 19), 20), ((20, 20), 20), ((3, 1), 3), ((3, 3), 3)],
)
def test_scores_that_already_decide_the_game(score: tuple[int, int], winning_score: int) -> None:
    """A running game never holds a score at the threshold: it would have ended (win or draw)."""
    with pytest.raises(ConfigError, match=r"^score: .*already decides the game"):
        authored(score=score, winning_score=winning_score)


@pytest.mark.parametrize(
    ("score", "message"),
    [
        ((-1, 0), r"^score\[0\]: expected an integer"),
        ((0, 1.5), r"^score\[1\]: expected an integer"),
        ((1, 2, 3), r"^score: expected a pair"),
        (5, r"^score: expected a pair"),
    ],
)
def test_score_shape_and_type(score: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        authored(score=score)


def test_scores_below_the_threshold_are_accepted() -> None:
    assert authored(score=(19, 19)).score.tolist() == [19, 19]
    assert authored(score=(2, 0), winning_score=3).score.tolist() == [2, 0]


@pytest.mark.parametrize(
    ("tick", "tick_limit", "allowed"),
    [(300, 300, r"\[0, 299\]"), (-1, 300, r"\[0, 299\]"), (10, 10, r"\[0, 9\]"),
     (5.0, 300, r"\[0, 299\]")],
)  # fmt: skip
def test_tick_must_be_before_the_limit(tick: Any, tick_limit: int, allowed: str) -> None:
    with pytest.raises(ConfigError, match=rf"^tick: expected an integer in {allowed}"):
        authored(tick=tick, tick_limit=tick_limit)
    assert int(authored(tick=tick_limit - 1, tick_limit=tick_limit).tick) == tick_limit - 1


@pytest.mark.parametrize(
    ("wave", "period", "message"),
    [((5, 0), 5, r"^wave\[0\]: expected an integer in \[0, 4\]"),
     ((0, -1), 5, r"^wave\[1\]: expected an integer in \[0, 4\]"),
     ((3, 0), 3, r"^wave\[0\]: expected an integer in \[0, 2\]"),
     ((1,), 5, r"^wave: expected a pair"), (2, 5, r"^wave: expected a pair")],
)  # fmt: skip
def test_wave_out_of_range(wave: Any, period: int, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        authored(wave=wave, wave_period=period)


def test_wave_defaults_to_a_full_period() -> None:
    assert authored().wave.tolist() == [4, 4]
    assert authored(wave_period=3).wave.tolist() == [2, 2]
    assert authored(wave=(0, 2), wave_period=3).wave.tolist() == [0, 2]


def test_a_team_with_no_unit() -> None:
    with pytest.raises(ConfigError, match=r"^units: team B has no unit"):
        authored(A_MAGE, U(slot=1, cls="W", x=8.0, y=5.0))
    with pytest.raises(ConfigError, match=r"^units: team A has no unit"):
        authored(B_WARRIOR)
    with pytest.raises(ConfigError, match=r"^units: an authored state needs at least one unit"):
        author_state(units=[])


def test_a_team_of_dead_units_still_has_units() -> None:
    """Engine choice: a dead unit belongs to its team and returns with the next wave."""
    s = authored(U(slot=0, cls="M", x=5.0, y=5.0, alive=False), B_WARRIOR)
    assert s.units.class_id.tolist()[0] == 1


@pytest.mark.parametrize("swap", [1, "yes", None])
def test_swap_must_be_a_bool(swap: Any) -> None:
    with pytest.raises(ConfigError, match=r"^swap: expected True or False"):
        authored(swap=swap)


@pytest.mark.parametrize("message_dim", [-1, 65, 1.5, True])
def test_authored_message_dim_range(message_dim: Any) -> None:
    with pytest.raises(ConfigError, match=r"^message_dim: expected an integer in \[0, 64\]"):
        authored(message_dim=message_dim)


def test_a_misspelled_name_gets_a_did_you_mean() -> None:
    assert did_you_mean("tdm-alfa", ["tdm-alpha", "tdm-beta"]) == " (did you mean 'tdm-alpha'?)"
    assert did_you_mean("TDM-ALPHA", ["tdm-alpha"]) == " (did you mean 'tdm-alpha'?)"
    assert did_you_mean("qqq", ["tdm-alpha"]) == ""  # nothing close: no hint
    assert did_you_mean("tdm-alpha", ["tdm-alpha"]) == ""
    assert did_you_mean(5, ["tdm-alpha"]) == ""
    assert did_you_mean("x" * 10**6, ["tdm-alpha"]) == ""  # long input stays cheap
    with pytest.raises(ConfigError, match=r"^mode: unknown mode 'tdm-v1' \(did you mean 'tdm-v2'"):
        marl_bgs.make("tdm-v1", map_id=0, num_envs=1)
    with pytest.raises(MapError, match=r"named 'crosfire' \(did you mean 'Crossfire'\?\); give"):
        marl_bgs.maps.load("crosfire")


def test_scalar_checks_raise_the_error_class_a_package_names() -> None:
    # core/checks.py owns the scalar policy for every package; each names its own error class.
    from marl_bgs.core.checks import check_bool, check_float, check_int

    class PackageError(ValueError):
        pass

    assert check_int(np.int64(3), "n", 0, 5, error=PackageError) == 3
    assert check_float(np.float32(0.5), "x", error=PackageError) == 0.5
    with pytest.raises(PackageError, match=r"^n: expected an integer in \[0, 5\], got True$"):
        check_int(True, "n", 0, 5, error=PackageError)
    with pytest.raises(PackageError, match=r"^x: expected a finite number, got nan$"):
        check_float(float("nan"), "x", error=PackageError)
    with pytest.raises(PackageError, match=r"^x: expected a finite number in \[0, 1\], got 2$"):
        check_float(2, "x", 0, 1, error=PackageError)
    with pytest.raises(PackageError, match=r"^f: expected True or False, got 1$"):
        check_bool(1, "f", error=PackageError)


def test_class_letters_have_one_table() -> None:
    # tdm/classes.py owns the letters; LETTERS is that table in class-id order.
    from marl_bgs.tdm.classes import CLASS_LETTERS, CLASS_NAMES, LETTERS, class_id

    assert LETTERS == "MWHRP"
    for k, letter in enumerate(LETTERS, start=1):
        assert class_id(letter, "cls") == CLASS_LETTERS[letter] == k
        assert CLASS_NAMES[k][0].upper() == letter
