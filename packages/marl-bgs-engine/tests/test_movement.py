"""Movement: the nine moves, class speeds, slows, stuns, obstacles, map bounds, body blocking,
spawn shields, and the two fairness checks (slot order and left-right mirror).

Every state is built by hand with `author_state` and stepped with the engine's `transition`;
positions are world coordinates (team A on the left unless `swap=True`), actions are given in each
agent's own frame.
"""

from __future__ import annotations

import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs import UnitSpec, author_state
from marl_bgs.core.geometry import body_fits
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.actions import can_move
from marl_bgs.tdm.statuses import movement_speed, speed_fraction

S2 = math.sqrt(0.5)
# World displacement of each own-frame move for a left-spawning agent.
LEFT = {
    0: (0.0, 0.0),
    1: (0.0, 1.0),
    2: (0.0, -1.0),
    3: (1.0, 0.0),
    4: (-1.0, 0.0),
    5: (S2, S2),
    6: (-S2, S2),
    7: (S2, -S2),
    8: (-S2, -S2),
}
STATUS_FIELDS = (
    "alive", "health", "stun", "trap", "slow_charge", "slow_hunter", "slow_poison", "antiheal",
    "freedom", "burst", "cooldown", "shield", "recovery",
)  # fmt: skip


def acts(moves=None, combat=None) -> jnp.ndarray:
    """Actions [10, 3] from {slot: move} and {slot: (target, ultimate)}."""
    a = np.zeros((10, 3), np.int32)
    for slot, m in (moves or {}).items():
        a[slot, 0] = m
    for slot, (t, u) in (combat or {}).items():
        a[slot, 1:] = (t, u)
    return jnp.asarray(a)


def go(step, state, moves=None, combat=None):
    """One tick: (world positions [10, 2] as numpy, next state, facts)."""
    nxt, _, facts = step(state, acts(moves, combat))
    return np.asarray(nxt.units.pos), nxt, facts


def far_enemy(slot: int = 5, x: float = 19.5, y: float = 9.5, cls: str = "W") -> UnitSpec:
    """A bystander out of the way (every authored state needs both teams)."""
    return UnitSpec(slot=slot, cls=cls, x=x, y=y)


def write_map(path, obstacles, name="test") -> str:
    doc = {"format": "marl-bgs-map-v1", "id": 900, "name": name, "split": "custom",
           "obstacles": obstacles}  # fmt: skip
    path.write_text(json.dumps(doc))
    marl_bgs.maps.load_file(path)  # validated (and playable)
    return str(path)


@pytest.fixture(scope="module")
def contact_map(tmp_path_factory):
    """A pillar (8, 5) r 0.5 and a thin wall at x = 12 (0.01 wide, y 2..8)."""
    return write_map(
        tmp_path_factory.mktemp("maps") / "contact.json",
        [
            {"kind": "pillar", "x": 8.0, "y": 5.0, "radius": 0.5},
            {"kind": "wall", "x": 12.0, "y": 5.0, "width": 0.01, "height": 6.0, "theta": 0.0},
        ],
    )


@pytest.fixture(scope="module")
def barrier_map(tmp_path_factory):
    """A thin wall at x = 10 from y = 0 to 8.9 (a gap of 1.1 at the top keeps pads connected)."""
    return write_map(
        tmp_path_factory.mktemp("maps") / "barrier.json",
        [{"kind": "wall", "x": 10.0, "y": 4.45, "width": 0.01, "height": 8.9, "theta": 0.0}],
    )


# --- the nine moves ----------------------------------------------------------------------------
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("move", range(9))
def test_nine_moves_in_own_frame_with_unit_diagonals(step, move, swap):
    # Slot 0 (team A) and slot 5 (team B) stand in the open; with swap, team A is on the right.
    a_x, b_x = (15.0, 5.0) if swap else (5.0, 15.0)
    state = author_state(
        map_id=0, swap=swap,
        units=[UnitSpec(slot=0, cls="W", x=a_x, y=5.0), UnitSpec(slot=5, cls="W", x=b_x, y=5.0)],
    )  # fmt: skip
    pos, _, facts = go(step, state, {0: move, 5: move})
    dx, dy = LEFT[move]
    a_sign, b_sign = (-1.0, 1.0) if swap else (1.0, -1.0)  # right-spawning teams see x mirrored
    assert pos[0] == pytest.approx((a_x + a_sign * dx, 5.0 + dy), abs=1e-6)
    assert pos[5] == pytest.approx((b_x + b_sign * dx, 5.0 + dy), abs=1e-6)
    expected = 0.0 if move == 0 else 1.0
    assert np.asarray(facts.moved)[[0, 5]] == pytest.approx([expected, expected], abs=1e-6)
    assert not np.any(np.asarray(facts.move_rejected))


def test_last_move_is_recorded_in_world_frame(step):
    state = author_state(
        map_id=0,
        units=[UnitSpec(slot=0, cls="W", x=5, y=5), UnitSpec(slot=5, cls="W", x=15, y=5)],
    )
    _, nxt, _ = go(step, state, {0: 5, 5: 5})  # both northeast in their own frames
    assert int(nxt.units.last_move[0]) == 5  # northeast
    assert int(nxt.units.last_move[5]) == 6  # northwest in the world


# --- speeds and slows --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cls", "speed"), [("M", 1.0), ("W", 1.0), ("H", 1.0), ("R", 1.3), ("P", 1.0)]
)
def test_class_speed(step, cls, speed):
    state = author_state(map_id=0, units=[UnitSpec(slot=0, cls=cls, x=5, y=5), far_enemy()])
    pos, _, facts = go(step, state, {0: 3})
    assert pos[0] == pytest.approx((5.0 + speed, 5.0), abs=1e-6)
    assert float(facts.moved[0]) == pytest.approx(speed, abs=1e-6)
    pos, _, _ = go(step, state, {0: 7})  # diagonals move the same distance
    assert pos[0] == pytest.approx((5.0 + speed * S2, 5.0 - speed * S2), abs=1e-6)


@pytest.mark.parametrize(
    ("charge", "hunter", "poison", "freedom", "fraction"),
    [
        (0, 0, 0, 0, 1.0),
        (5, 0, 0, 0, 0.5),
        (0, 1, 0, 0, 0.85),
        (0, 0, 5, 0, 0.5),
        (3, 1, 0, 0, 0.425),
        (2, 0, 4, 0, 0.25),
        (0, 1, 2, 0, 0.425),
        (1, 1, 1, 0, 0.2125),  # all three multiply (the 0.2 floor does not bind)
        (5, 0, 0, 1, 0.85),  # Blessing of Freedom: slows cannot push below 0.85
        (5, 1, 5, 1, 0.85),
        (0, 1, 0, 1, 0.85),
        (0, 0, 0, 1, 1.0),  # the floor never speeds anyone up
    ],
)
@pytest.mark.parametrize(("cls", "base"), [("W", 1.0), ("R", 1.3)])
def test_slows_multiply_and_freedom_floor(
    step, cls, base, charge, hunter, poison, freedom, fraction
):
    unit = UnitSpec(slot=0, cls=cls, x=5, y=5, slow_charge=charge, slow_hunter=hunter,
                    slow_poison=poison, freedom=freedom)  # fmt: skip
    state = author_state(map_id=0, units=[unit, far_enemy()])
    pos, nxt, _ = go(step, state, {0: 1})
    assert pos[0] == pytest.approx((5.0, 5.0 + base * fraction), abs=1e-6)
    # Statuses age once per tick.
    assert int(nxt.units.slow_charge[0]) == max(charge - 1, 0)
    assert int(nxt.units.slow_poison[0]) == max(poison - 1, 0)


def test_speed_floor_is_a_fifth_of_base_speed(monkeypatch):
    """The shipped multipliers never reach the floor, so make them harsher to see it hold."""
    state = author_state(
        map_id=0,
        units=[UnitSpec(slot=0, cls="R", x=5, y=5, slow_charge=1, slow_hunter=1, slow_poison=1),
               UnitSpec(slot=1, cls="R", x=5, y=7, slow_charge=1, slow_hunter=1, slow_poison=1,
                        freedom=1),
               UnitSpec(slot=2, cls="R", x=5, y=3, slow_charge=1),
               far_enemy()],
    )  # fmt: skip
    monkeypatch.setattr(C, "CHARGE_SLOW_MULT", 0.1)
    frac = np.asarray(speed_fraction(state.units))
    assert frac[0] == pytest.approx(0.2)  # 0.1 * 0.85 * 0.5 = 0.0425 -> floor 0.2
    assert frac[1] == pytest.approx(0.85)
    assert frac[2] == pytest.approx(0.2)


@pytest.mark.parametrize("status", ["stun", "trap"])
def test_stunned_and_trapped_agents_do_not_move(step, status):
    units = [UnitSpec(slot=0, cls="W", x=5, y=5, **{status: 1}),
             UnitSpec(slot=1, cls="R", x=5, y=7, **{status: 1}), far_enemy()]  # fmt: skip
    state = author_state(map_id=0, units=units)
    pos, nxt, facts = go(step, state, {0: 3, 1: 5, 5: 3})
    assert pos[0] == pytest.approx((5.0, 5.0))
    assert pos[1] == pytest.approx((5.0, 7.0))
    assert np.asarray(facts.move_rejected)[[0, 1]].tolist() == [True, True]
    assert np.asarray(facts.accepted)[[0, 1], 0].tolist() == [0, 0]
    assert pos[5] == pytest.approx((18.5, 9.5))  # the free one walked (east in its own frame)
    # The stun lasted one decision: next tick the agents move again.
    assert int(getattr(nxt.units, status)[0]) == 0
    pos2, _, _ = go(step, nxt, {0: 3})
    assert pos2[0] == pytest.approx((6.0, 5.0))


def test_dead_agents_do_not_move_and_do_not_block(step):
    state = author_state(
        map_id=0,
        units=[UnitSpec(slot=0, cls="W", x=5, y=5, alive=False, health=0.0),
               UnitSpec(slot=1, cls="W", x=7, y=5), far_enemy()],
    )  # fmt: skip
    pos, _, facts = go(step, state, {0: 3, 1: 4})
    assert pos[0] == pytest.approx((5.0, 5.0))
    assert bool(facts.move_rejected[0])
    assert pos[1] == pytest.approx((6.0, 5.0))  # walks onto the corpse's spot unhindered


# --- obstacles and the map border ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("x0", "move", "x1"),
    [
        (6.0, 3, 7.0),  # pillar (8, 5) r 0.5: contact at x = 7 after a full step
        (6.25, 3, 7.0),  # contact three quarters of the way
        (6.5, 3, 7.0),  # half way
        (7.0, 3, 7.0),  # already touching: cannot move into it
        (10.745, 3, 11.495),  # thin wall at x = 12 (half-width 0.005): contact at 11.495
        (11.495, 3, 11.495),
        (13.505, 4, 12.505),  # from the other side
    ],
)
def test_obstacles_stop_a_body_at_contact(step, contact_map, x0, move, x1):
    state = author_state(map_id=contact_map, units=[UnitSpec(slot=0, cls="W", x=x0, y=5.0),
                                                     far_enemy()])  # fmt: skip
    pos, _, _ = go(step, state, {0: move})
    assert pos[0] == pytest.approx((x1, 5.0), abs=1e-4)


@pytest.mark.parametrize(
    ("x0", "shield", "x1"),
    [(6.3, 0, 7.0), (11.0, 0, 11.495), (11.0, 2, 11.495)],
)
def test_obstacles_stop_a_body_exactly_at_contact_off_the_sampling_grid(
    step, contact_map, x0, shield, x1
):
    units = [UnitSpec(slot=0, cls="W", x=x0, y=5.0, shield=shield), far_enemy()]
    pos, _, _ = go(step, author_state(map_id=contact_map, units=units), {0: 3})
    assert pos[0] == pytest.approx((x1, 5.0), abs=1e-3)


def test_obstacles_never_overlapped_or_passed_off_the_grid(step, contact_map):
    # Whatever the start, a body moving into an obstacle stops before it and never overlaps it.
    for x0 in np.linspace(6.0, 7.0, 11):
        pos, _, _ = go(step, author_state(map_id=contact_map, units=[
            UnitSpec(slot=0, cls="R", x=float(x0), y=5.0), far_enemy()]), {0: 3})  # fmt: skip
        assert x0 - 1e-6 <= pos[0, 0] <= 7.0 + 1e-4
        assert pos[0, 1] == pytest.approx(5.0)


def test_diagonal_into_a_border_slides_along_it(step):
    state = author_state(
        map_id=0,
        units=[UnitSpec(slot=0, cls="W", x=0.5, y=5.0), UnitSpec(slot=1, cls="W", x=0.5, y=9.5),
               UnitSpec(slot=5, cls="W", x=19.5, y=5.0), UnitSpec(slot=6, cls="W", x=19.5, y=0.5)],
    )  # fmt: skip
    # 0: northwest along the west border -> slides north; 1: northwest into the corner -> stays;
    # 5 (team B, mirrored): northeast in its frame = northwest in the world -> moves freely;
    # 6: southwest in its frame = southeast in the world, into the corner -> stays.
    pos, _, _ = go(step, state, {0: 6, 1: 6, 5: 6, 6: 8})
    assert pos[0] == pytest.approx((0.5, 5.0 + S2), abs=1e-6)
    assert pos[1] == pytest.approx((0.5, 9.5), abs=1e-6)
    assert pos[5] == pytest.approx((19.5, 5.0 + S2), abs=1e-6)  # world northeast: slides north
    assert pos[6] == pytest.approx((19.5, 0.5), abs=1e-6)


@pytest.mark.parametrize(
    ("start", "move", "end"),
    [
        ((5.0, 9.25), 1, (5.0, 9.5)),  # north into the top border
        ((5.0, 0.75), 2, (5.0, 0.5)),
        ((0.75, 5.0), 4, (0.5, 5.0)),
        ((19.0, 5.0), 3, (19.5, 5.0)),
        ((0.5, 0.5), 8, (0.5, 0.5)),
    ],
)
def test_map_bounds(step, start, move, end):
    units = [UnitSpec(slot=0, cls="W", x=start[0], y=start[1]), far_enemy(x=10.0, y=5.0)]
    pos, _, _ = go(step, author_state(map_id=0, units=units), {0: move})
    assert pos[0] == pytest.approx(end, abs=1e-4)


def _side_ok(before: np.ndarray, after: np.ndarray, wall_x: float) -> None:
    assert np.all(np.sign(before[:, 0] - wall_x) == np.sign(after[:, 0] - wall_x))
    assert np.all(np.abs(after[:, 0] - wall_x) >= 0.505 - 1e-3)  # never overlapping it either


SHIELD_SPEEDS = [1.0, 1.5, 2.0]  # 2.0 is the largest allowed shield speed


@pytest.mark.parametrize("shield_speed", SHIELD_SPEEDS)
def test_thin_walls_are_never_tunnelled_through(step, barrier_map, shield_speed):
    rng = np.random.default_rng(int(shield_speed))
    for _ in range(12):
        # Ten shielded agents (they pass through one another) hugging the 0.01-wide wall.
        side = rng.choice([-1.0, 1.0], size=10)
        x = 10.0 + side * rng.uniform(0.506, 1.2, size=10)
        y = rng.uniform(0.6, 5.0, size=10)
        units = [UnitSpec(slot=i, cls="MWHRP"[i % 5], x=float(x[i]), y=float(y[i]), shield=2)
                 for i in range(10)]  # fmt: skip
        state = author_state(map_id=barrier_map, units=units, shield_speed=shield_speed)
        moves = {i: int(m) for i, m in enumerate(rng.integers(1, 9, size=10))}
        pos, _, _ = go(step, state, moves)
        _side_ok(np.stack([x, y], -1), pos, 10.0)


@pytest.mark.parametrize("shield_speed", SHIELD_SPEEDS)
def test_thin_wall_on_map_47_is_not_tunnelled(step, shield_speed):
    # Map 47: pillars (10, 0.5) and (10, 2.5) r 0.5 joined by a 0.01-wide wall from y 1 to 2.
    units = [UnitSpec(slot=0, cls="R", x=9.4, y=1.5), UnitSpec(slot=1, cls="W", x=10.6, y=1.5),
             UnitSpec(slot=2, cls="W", x=9.45, y=1.6, shield=2), far_enemy()]  # fmt: skip
    state = author_state(map_id=47, units=units, shield_speed=shield_speed)
    pos, _, _ = go(step, state, {0: 3, 1: 4, 2: 3})
    assert pos[0, 0] < 9.5
    assert pos[1, 0] > 10.5
    assert pos[2, 0] < 9.5


# --- bodies --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("gap", "a_end", "b_end"),
    [
        (3.0, 9.0, 10.0),  # both full steps, ending touching
        (2.5, 8.75, 9.75),  # each gives up the same share
        (2.0, 8.5, 9.5),
        (1.5, 8.25, 9.25),
    ],
)
def test_two_agents_walking_into_each_other(step, gap, a_end, b_end):
    # Slot 0 (team A) walks east, slot 5 (team B) walks east in its own frame = west in the world.
    units = [UnitSpec(slot=0, cls="W", x=8.0, y=5.0), UnitSpec(slot=5, cls="W", x=8.0 + gap, y=5.0)]
    state = author_state(map_id=0, units=units)
    pos, _, _ = go(step, state, {0: 3, 5: 3})
    assert pos[0] == pytest.approx((a_end, 5.0), abs=1e-5)
    assert pos[5] == pytest.approx((b_end, 5.0), abs=1e-5)


@pytest.mark.parametrize(("gap", "a_end"), [(2.0, 9.0), (1.5, 8.5), (1.25, 8.25), (1.0, 8.0)])
@pytest.mark.parametrize("same_team", [False, True])
def test_agent_walking_into_a_standing_one(step, gap, a_end, same_team):
    other = 1 if same_team else 5
    state = author_state(map_id=0, units=[UnitSpec(slot=0, cls="W", x=8.0, y=5.0),
                                          UnitSpec(slot=other, cls="M", x=8.0 + gap, y=5.0),
                                          far_enemy(slot=6)])  # fmt: skip
    pos, _, _ = go(step, state, {0: 3})
    assert pos[0] == pytest.approx((a_end, 5.0), abs=1e-5)
    assert pos[other] == pytest.approx((8.0 + gap, 5.0))  # the standing body is never pushed


@pytest.mark.parametrize(
    ("fast", "gap"),
    [("W", 1.2), ("W", 1.5), ("W", 2.0), ("W", 2.5), ("W", 2.6), ("W", 3.5), ("R", 2.0),
     ("R", 2.5), ("R", 2.7), ("R", 3.5)],
)  # fmt: skip
def test_head_on_collisions_are_symmetric_and_leave_bodies_apart(step, gap, fast):
    # Whatever the details, equal agents give up equal shares, nobody overlaps and nobody gets
    # past the other.
    units = [
        UnitSpec(slot=0, cls=fast, x=8.0, y=5.0),
        UnitSpec(slot=5, cls=fast, x=8.0 + gap, y=5.0),
    ]
    state = author_state(map_id=0, units=units)
    pos, _, facts = go(step, state, {0: 3, 5: 3})
    assert pos[5, 0] - pos[0, 0] >= 1.0 - 1e-4
    assert float(facts.moved[0]) == pytest.approx(float(facts.moved[5]), abs=1e-5)
    assert pos[0, 0] >= 8.0
    assert pos[5, 0] <= 8.0 + gap
    assert pos[:, 1][[0, 5]] == pytest.approx([5.0, 5.0])


def test_bodies_never_overlap_after_a_crowded_tick(step, tools):
    rng = np.random.default_rng(3)
    for _ in range(8):
        state = author_state(map_id=47, units=tools.random_units(rng, shields=False))
        moves = {i: int(m) for i, m in enumerate(rng.integers(0, 9, size=10))}
        pos, nxt, _ = go(step, state, moves)
        alive = np.asarray(nxt.units.alive)
        d = np.linalg.norm(pos[:, None] - pos[None], axis=-1)[alive][:, alive]
        assert np.all(d[~np.eye(len(d), dtype=bool)] >= 1.0 - 1e-3)


@pytest.mark.parametrize(
    ("cls", "other", "gap"), [("W", "W", 1.0), ("R", "W", 1.0), ("R", "W", 1.2), ("R", "R", 1.5)]
)
def test_bodies_never_pass_through_each_other(step, cls, other, gap):
    # Head-on, touching or nearly: slot 0 walks east, slot 5 west. Bodies block, so neither may
    # end up on the other's far side (touching, neither can move at all).
    units = [
        UnitSpec(slot=0, cls=cls, x=8.0, y=5.0),
        UnitSpec(slot=5, cls=other, x=8.0 + gap, y=5.0),
    ]
    state = author_state(map_id=0, units=units)
    pos, _, _ = go(step, state, {0: 3, 5: 3})
    assert pos[5, 0] - pos[0, 0] >= 1.0 - 1e-4
    if gap == 1.0:
        assert pos[0] == pytest.approx((8.0, 5.0))
        assert pos[5] == pytest.approx((9.0, 5.0))


def test_two_agents_walking_into_each_other_stop_at_contact_off_the_grid(step):
    state = author_state(map_id=0, units=[UnitSpec(slot=0, cls="W", x=8.0, y=5.0),
                                          UnitSpec(slot=5, cls="W", x=10.6, y=5.0)])  # fmt: skip
    pos, _, _ = go(step, state, {0: 3, 5: 3})
    assert pos[5, 0] - pos[0, 0] == pytest.approx(1.0, abs=1e-3)


# --- spawn shields -------------------------------------------------------------------------------
def test_shielded_agents_pass_through_bodies(step):
    state = author_state(
        map_id=0,
        units=[UnitSpec(slot=0, cls="W", x=8.0, y=5.0, shield=2),  # shielded, moves 2 per tick
               UnitSpec(slot=1, cls="W", x=9.0, y=5.0),  # ally in the way
               UnitSpec(slot=5, cls="W", x=10.25, y=5.0),  # enemy in the way
               UnitSpec(slot=6, cls="W", x=12.0, y=5.0)],  # walks west through the shielded one
    )  # fmt: skip
    pos, nxt, facts = go(step, state, {0: 3, 6: 3})
    assert pos[0] == pytest.approx((10.0, 5.0))  # overlapping the enemy at 10.25 is fine
    assert pos[6] == pytest.approx((11.25, 5.0))  # blocked by the enemy at 10.25, not by slot 0
    assert not np.any(np.asarray(facts.shield_cleared))
    assert int(nxt.units.shield[0]) == 1


def test_shield_ending_leaves_the_body_clear(step):
    state = author_state(
        map_id=0,
        units=[UnitSpec(slot=0, cls="W", x=8.0, y=5.0, shield=1),  # last shielded tick
               UnitSpec(slot=5, cls="W", x=9.2, y=5.0)],
    )  # fmt: skip
    pos, nxt, facts = go(step, state, {0: 3})  # moves 2 to (10, 5), over the enemy at 9.2
    assert int(nxt.units.shield[0]) == 0
    assert np.asarray(facts.shield_cleared).tolist() == [True] + [False] * 9
    assert pos[5] == pytest.approx((9.2, 5.0))  # the solid body stays put
    assert np.linalg.norm(pos[0] - pos[5]) >= 1.0 - 1e-4
    assert bool(body_fits(jnp.asarray(pos[0]), nxt.obstacles))
    # The nearest clear point of the 0.25 grid: one cell east of where it arrived.
    assert pos[0] == pytest.approx((10.25, 5.0))


def test_shield_ending_clear_of_each_other(step):
    # Two agents whose shields end on top of each other and of a solid body.
    state = author_state(
        map_id=0,
        units=[UnitSpec(slot=0, cls="W", x=5.0, y=5.0, shield=1),
               UnitSpec(slot=1, cls="R", x=5.3, y=5.2, shield=1),
               UnitSpec(slot=2, cls="P", x=6.0, y=5.5), far_enemy()],
    )  # fmt: skip
    pos, _nxt, facts = go(step, state, {})
    d = np.linalg.norm(pos[:3, None] - pos[None, :3], axis=-1)
    assert np.all(d[~np.eye(3, dtype=bool)] >= 1.0 - 1e-4)
    assert pos[2] == pytest.approx((6.0, 5.5))
    assert np.asarray(facts.shield_cleared)[:3].any()


def test_shield_not_ending_is_not_cleared(step):
    state = author_state(map_id=0, units=[UnitSpec(slot=0, cls="W", x=8.0, y=5.0, shield=3),
                                          UnitSpec(slot=5, cls="W", x=8.5, y=5.0)])  # fmt: skip
    pos, _, facts = go(step, state, {})
    assert pos[0] == pytest.approx((8.0, 5.0))
    assert not np.any(np.asarray(facts.shield_cleared))


# --- fairness: slot order and mirror --------------------------------------------------------------
def assert_same_units(new, old, perm: np.ndarray, mirror: bool) -> None:
    pos_old = np.asarray(old.pos)[perm]
    if mirror:
        pos_old[:, 0] = 20.0 - pos_old[:, 0]
    np.testing.assert_allclose(np.asarray(new.pos), pos_old, atol=1e-4)
    for f in STATUS_FIELDS:
        np.testing.assert_allclose(
            np.asarray(getattr(new, f)), np.asarray(getattr(old, f))[perm], atol=1e-4, err_msg=f
        )


@pytest.mark.parametrize("kind", ["within_teams", "teams_swapped", "teams_swapped_mirrored"])
def test_collisions_do_not_depend_on_slot_order(step, sample_one, tools, kind):
    rng = np.random.default_rng({"within_teams": 0, "teams_swapped": 1}.get(kind, 2))
    mirror = kind == "teams_swapped_mirrored"
    key = jax.random.key(7)
    shortened = 0
    for trial in range(6):
        state = author_state(map_id=47, units=tools.random_units(rng, shields=True))
        key, k = jax.random.split(key)
        actions = np.array(sample_one(k, state))
        actions[:, 0] = rng.integers(0, 9, size=10)  # push everyone around, legal or not
        perm = tools.within_team_perm(rng) if kind == "within_teams" else tools.TEAM_SWAP.copy()
        if kind != "within_teams" and trial % 2:
            perm = tools.TEAM_SWAP[tools.within_team_perm(rng)]
        nxt, _, facts = step(state, jnp.asarray(actions))
        other = tools.relabel(state, perm, mirror)
        nxt2, _, facts2 = step(other, jnp.asarray(tools.relabel_actions(actions, perm)))
        assert_same_units(nxt2.units, nxt.units, perm, mirror)
        np.testing.assert_allclose(
            np.asarray(facts2.moved), np.asarray(facts.moved)[perm], atol=1e-4
        )
        np.testing.assert_array_equal(
            np.asarray(facts2.shield_cleared), np.asarray(facts.shield_cleared)[perm]
        )
        np.testing.assert_allclose(
            np.asarray(facts2.damage), np.asarray(facts.damage)[perm][:, perm], atol=1e-4
        )
        speed = np.asarray(movement_speed(state.units, state.rules.shield_speed))
        free = np.asarray(can_move(state)) & (actions[:, 0] > 0)
        shortened += int(np.sum(free & (np.asarray(facts.moved) < speed - 1e-3)))
    assert shortened >= 6  # the states are crowded enough that many moves were cut short


def test_shields_ending_at_the_same_point_do_not_depend_on_slot_order(step):
    # Two shielded allies walk into the same point (7, 5) on their last shielded tick.
    def game(first: int, second: int):
        units = [UnitSpec(slot=first, cls="W", x=5.0, y=5.0, shield=1),
                 UnitSpec(slot=second, cls="R", x=9.0, y=5.0, shield=1), far_enemy()]  # fmt: skip
        pos, _, _ = go(step, author_state(map_id=0, units=units), {first: 3, second: 4})
        return pos[first], pos[second]

    warrior, rogue = game(0, 1)
    warrior2, rogue2 = game(1, 0)
    assert warrior2 == pytest.approx(warrior)
    assert rogue2 == pytest.approx(rogue)


def _mirror_run(step, sample_one, tools, state, ticks: int, seed: int) -> None:
    mirrored = tools.relabel(state, np.arange(10), mirror=True)
    key = jax.random.key(seed)
    for _ in range(ticks):
        key, k = jax.random.split(key)
        actions = sample_one(k, state)
        state, r1, f1 = step(state, actions)
        mirrored, r2, f2 = step(mirrored, actions)
        assert_same_units(mirrored.units, state.units, np.arange(10), mirror=True)
        np.testing.assert_allclose(np.asarray(f2.damage), np.asarray(f1.damage), atol=1e-4)
        np.testing.assert_array_equal(np.asarray(r2), np.asarray(r1))
        np.testing.assert_array_equal(np.asarray(mirrored.score), np.asarray(state.score))


def test_left_right_mirror_from_the_start(step, sample_one, tools):
    units = [UnitSpec(slot=i, cls="MWHRP"[i % 5], x=0.5 if i < 5 else 19.5, y=1.0 + 2 * (i % 5))
             for i in range(10)]  # fmt: skip
    state = author_state(map_id=47, units=units)
    _mirror_run(step, sample_one, tools, state, ticks=8, seed=0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_left_right_mirror_crowded(step, sample_one, tools, seed):
    rng = np.random.default_rng(seed)
    state = author_state(map_id=47, units=tools.random_units(rng, shields=False))
    _mirror_run(step, sample_one, tools, state, ticks=6, seed=seed)


def test_left_right_mirror_when_shields_end_on_each_other(step, tools):
    units = [UnitSpec(slot=0, cls="W", x=8.0, y=5.0, shield=1),
             UnitSpec(slot=1, cls="W", x=8.6, y=5.0, shield=1), far_enemy()]  # fmt: skip
    state = author_state(map_id=0, units=units)
    nxt, _, _ = step(state, acts())
    nxt_m, _, _ = step(tools.relabel(state, np.arange(10), mirror=True), acts())
    assert_same_units(nxt_m.units, nxt.units, np.arange(10), mirror=True)


def _five_warriors_on_map_0():
    """Five Warriors (slots 0-4) facing their targets (slots 5-9) on map 0, whose obstacles block
    three of the contact points: (obstacles, pos, target, solid)."""
    obstacles = marl_bgs.maps.load(0).to_obstacles()
    ys = [3.0, 7.0, 11.0, 15.0, 19.0]
    pos = jnp.asarray([[4.0, y] for y in ys] + [[9.0, y] for y in ys])
    target, solid = jnp.asarray([5, 6, 7, 8, 9] + [-1] * 5), jnp.ones(10, bool)
    return obstacles, pos, target, solid


def test_every_charger_of_a_tick_lands_where_it_would_charging_alone():
    # Five Warriors charge at once: each lands where it lands charging alone (landings are
    # searched against start-of-tick positions), the three whose contact points map 0's
    # obstacles block (backing off) as well as the two that land at contact.
    from marl_bgs.tdm.charge import charge

    obstacles, pos, target, solid = _five_warriors_on_map_0()
    every = jnp.arange(10) < 5
    landed = jax.jit(charge)
    together = np.asarray(landed(pos, every, target, solid, obstacles))
    for i in range(5):
        alone = landed(pos, jnp.arange(10) == i, target, solid, obstacles)
        np.testing.assert_array_equal(together[i], np.asarray(alone)[i])
    assert together[:2, 0].tolist() == [8.0, 8.0]  # at contact with its target
    assert (together[2:5, 0] < 8.0).all()  # backed off
    np.testing.assert_array_equal(together[5:], np.asarray(pos)[5:])


def test_a_games_charges_land_alike_alone_and_in_any_batch():
    # The landing search runs for as many groups of chargers as a game has; in a batch the other
    # games (more chargers, or none) must not change where a game's Warriors land.
    from marl_bgs.tdm.charge import charge

    obstacles, pos, target, solid = _five_warriors_on_map_0()
    chargers = jnp.asarray([jnp.arange(10) < k for k in (5, 3, 1, 0)])
    batch = jax.jit(jax.vmap(charge, in_axes=(None, 0, None, None, None)))
    together = np.asarray(batch(pos, chargers, target, solid, obstacles))
    for g, charger in enumerate(chargers):
        alone = np.asarray(jax.jit(charge)(pos, charger, target, solid, obstacles))
        np.testing.assert_array_equal(together[g], alone)
        moved = np.any(alone != np.asarray(pos), axis=-1)
        assert not np.any(moved & ~np.asarray(charger))  # only chargers move
    assert np.any(together[0] != np.asarray(pos))  # the five-charger game's Warriors do


def test_charge_and_shield_clearing_take_any_number_of_bodies():
    # Neither rule assumes ten bodies: four bodies alone land exactly where the same four do
    # among ten whose other six are dead (neither solid nor clearing).
    from marl_bgs.tdm.charge import charge
    from marl_bgs.tdm.shields import clear_bodies, free_grid

    obstacles = marl_bgs.maps.load(0).to_obstacles()
    pos4 = jnp.asarray([[5.0, 5.0], [9.0, 5.2], [9.3, 5.0], [14.0, 3.0]])
    pos10 = jnp.concatenate([pos4, jnp.tile(jnp.asarray([[1.0, 1.0]]), (6, 1))])
    pad = lambda a, fill: jnp.concatenate([a, jnp.full(6, fill, a.dtype)])  # noqa: E731
    charger, solid = (
        jnp.asarray([True, False, False, False]),
        jnp.asarray([True, True, False, True]),
    )
    target = jnp.asarray([1, -1, -1, -1])
    landed4 = jax.jit(charge)(pos4, charger, target, solid, obstacles)
    landed10 = jax.jit(charge)(
        pos10, pad(charger, False), pad(target, -1), pad(solid, False), obstacles
    )
    np.testing.assert_array_equal(landed4, landed10[:4])
    assert float(jnp.linalg.norm(landed4[0] - pos4[1])) == pytest.approx(1.0, abs=1e-4)

    ending = jnp.asarray([False, False, True, False])  # ends its shield inside body 1
    free, left, cls = free_grid(obstacles), jnp.asarray([True] * 4), jnp.zeros(4, jnp.int32)
    cleared4, moved4 = jax.jit(clear_bodies)(pos4, ending, solid, free, left, cls)
    cleared10, _ = jax.jit(clear_bodies)(
        pos10, pad(ending, False), pad(solid, False), free, pad(left, True), pad(cls, 0)
    )
    np.testing.assert_array_equal(cleared4, cleared10[:4])
    assert np.asarray(moved4).tolist() == [False, False, True, False]
    assert float(jnp.linalg.norm(cleared4[2] - pos4[1])) >= 1.0 - 1e-4
