"""Combat and abilities: exact numbers on hand-built single-game states.

Every state is authored (`author_state`), every tick is one `transition` with actions int32 [10, 3]
(move, target, ultimate) in each agent's own frame. `step` (jitted) is shared by every test; the
`run` fixture runs a subset both jitted and under `jax.disable_jit()`.

Expected values are written from the rules (docs/rules.md, the paper's Table S3), never read back
from the engine's class table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from marl_bgs import GameState, UnitSpec, author_state, maps
from marl_bgs.tdm.facts import agent_fact_summary
from marl_bgs.tdm.testing import relative_target, slot_actions
from marl_bgs.tdm.transition import transition

U = UnitSpec
STAY, NORTH, SOUTH, EAST, WEST = range(5)
Step = Callable[[GameState, jnp.ndarray], tuple[GameState, Any]]

step = jax.jit(transition)


def game(*units: UnitSpec, **kw: Any) -> GameState:
    return author_state(units=list(units), **kw)


rel = relative_target
acts = slot_actions


def hp(state: GameState) -> np.ndarray:
    return np.asarray(state.units.health)


def pos(state: GameState, slot: int) -> list[float]:
    return np.asarray(state.units.pos[slot]).tolist()


def custom_map(*obstacles: dict[str, Any]) -> maps.MapSpec:
    doc = {"format": "marl-bgs-map-v1", "id": 900, "name": "combat test", "split": "custom",
           "description": "", "obstacles": list(obstacles)}  # fmt: skip
    return maps.parse(doc)


def wall(x: float, y: float, w: float, h: float) -> dict[str, Any]:
    return {"kind": "wall", "x": x, "y": y, "width": w, "height": h, "theta": 0.0}


def pillar(x: float, y: float, r: float) -> dict[str, Any]:
    return {"kind": "pillar", "x": x, "y": y, "radius": r}


def accepted(facts: Any, slot: int) -> bool:
    return not bool(facts.combat_rejected[slot])


# ------------------------------------------------------------------------------ Basic values


@pytest.mark.parametrize(
    ("cls", "damage"),
    [("M", 13 * 1.15), ("W", 8.0), ("H", 6.0), ("R", 12.0)],
)
def test_basic_damage_of_each_class(cls: str, damage: float) -> None:
    """The Mage's own aura covers itself (x1.15); the others deal their base value."""
    s = game(U(slot=1, cls=cls, x=5.0, y=5.0), U(slot=7, cls="H", x=6.2, y=5.0))
    nxt, f = step(s, acts(basic={1: 7}))
    assert accepted(f, 1)
    assert bool(f.basic_used[1])
    assert not bool(f.ultimate_used[1])
    assert float(f.damage_basic[1, 7]) == pytest.approx(damage)
    assert float(np.sum(f.damage)) == pytest.approx(damage)
    assert hp(nxt)[7] == pytest.approx(100.0 - damage)


def test_basic_damage_from_team_b_uses_its_own_roster_naming() -> None:
    s = game(U(slot=2, cls="H", x=5.0, y=5.0), U(slot=8, cls="R", x=6.2, y=5.0))
    nxt, f = step(s, acts(basic={8: 2}))  # relative index 6 + 2: enemy roster slot 2
    assert int(f.accepted[8, 1]) == 8
    assert float(f.damage_basic[8, 2]) == pytest.approx(12.0)
    assert hp(nxt)[2] == pytest.approx(88.0)


def test_lesser_heal_on_an_ally_and_on_itself() -> None:
    """8 each; a Mage's aura next to the Priest does not raise healing."""
    s = game(
        U(slot=4, cls="P", x=5.0, y=5.0, health=60.0, recovery=5),
        U(slot=2, cls="H", x=7.5, y=5.0, health=50.0, recovery=5),
        U(slot=0, cls="M", x=5.0, y=6.5),
        U(slot=9, cls="P", x=15.0, y=5.0, health=60.0, recovery=5),
    )
    nxt, f = step(s, acts(basic={4: 2, 9: 9}))
    assert float(f.heal_basic[4, 2]) == pytest.approx(8.0)
    assert float(f.heal_basic[9, 9]) == pytest.approx(8.0)
    assert hp(nxt)[[2, 4, 9]].tolist() == pytest.approx([58.0, 60.0, 68.0])
    assert bool(f.freed[4, 2])
    assert bool(f.freed[9, 9])


def test_warrior_takes_less_damage_under_its_own_aura() -> None:
    s = game(U(slot=2, cls="H", x=5.0, y=5.0), U(slot=5, cls="W", x=8.0, y=5.0))
    nxt, f = step(s, acts(basic={2: 5}))
    assert float(f.damage_basic[2, 5]) == pytest.approx(6 * 0.85)
    assert float(f.warrior_aura_prevented[2, 5]) == pytest.approx(6 * 0.15)
    assert hp(nxt)[5] == pytest.approx(200 - 6 * 0.85)


# ------------------------------------------------------------------------------------ auras


@pytest.mark.parametrize(
    ("gap", "mult", "covered"), [(1.0, 1.15, 1), (2.0, 1.15, 1), (2.01, 1.0, 0)]
)
def test_mage_aura_radius(gap: float, mult: float, covered: int) -> None:
    """A teammate within 2 units of the Mage (boundary included) deals x1.15."""
    rx = 5.0 + gap
    s = game(
        U(slot=0, cls="M", x=5.0, y=5.0),
        U(slot=3, cls="R", x=rx, y=5.0),
        U(slot=7, cls="H", x=rx + 1.2, y=5.0),
    )
    nxt, f = step(s, acts(basic={3: 7}))
    assert int(f.mage_auras[3]) == covered
    assert float(f.damage_basic[3, 7]) == pytest.approx(12 * mult)
    assert float(f.mage_aura_added[3, 7]) == pytest.approx(12 * (mult - 1.0), abs=1e-5)
    assert hp(nxt)[7] == pytest.approx(100 - 12 * mult)


@pytest.mark.parametrize(("mages", "count"), [(1, 1), (2, 2), (3, 2)])
def test_mage_auras_multiply_up_to_two(mages: int, count: int) -> None:
    """Two auras give x1.3225 (1.15^2); a third adds nothing."""
    spots = [(5.0, 5.0), (5.0, 7.0), (7.0, 7.0)]
    mage_units = [U(slot=k, cls="M", x=x, y=y) for k, (x, y) in enumerate(spots[:mages])]
    s = game(*mage_units, U(slot=3, cls="R", x=6.0, y=6.0), U(slot=7, cls="H", x=7.0, y=5.0))
    _, f = step(s, acts(basic={3: 7}))
    assert int(f.mage_auras[3]) == count
    assert float(f.damage_basic[3, 7]) == pytest.approx(12 * 1.15**count)


@pytest.mark.parametrize(("warriors", "count"), [(0, 0), (1, 1), (2, 2), (3, 2)])
def test_warrior_auras_multiply_down_to_0_7225(warriors: int, count: int) -> None:
    """Each Warrior aura around the recipient cuts damage taken x0.85; at most two count."""
    spots = [(11.0, 5.0), (10.0, 6.5), (10.0, 3.5)]
    guards = [U(slot=5 + k, cls="W", x=x, y=y) for k, (x, y) in enumerate(spots[:warriors])]
    s = game(U(slot=2, cls="H", x=7.0, y=5.0), U(slot=8, cls="R", x=10.0, y=5.0), *guards)
    nxt, f = step(s, acts(basic={2: 8}))
    assert int(f.warrior_auras[8]) == count
    assert float(f.damage_basic[2, 8]) == pytest.approx(6 * 0.85**count)
    assert float(f.warrior_aura_prevented[2, 8]) == pytest.approx(6 * (1 - 0.85**count), abs=1e-5)
    assert hp(nxt)[8] == pytest.approx(100 - 6 * 0.85**count)


def test_aura_shares_go_to_the_auras_that_covered_the_hit() -> None:
    """Two Mages cover the Rogue (x1.3225) and one Warrior covers the Hunter it hits: each Mage
    is credited half the damage added, the Warrior all of the damage blocked."""
    s = game(
        U(slot=0, cls="M", x=5.0, y=5.0), U(slot=1, cls="M", x=5.0, y=7.0),
        U(slot=3, cls="R", x=6.0, y=6.0), U(slot=7, cls="H", x=7.0, y=5.0),
        U(slot=5, cls="W", x=8.5, y=5.0),
    )  # fmt: skip
    _, f = step(s, acts(basic={3: 7}))
    added = 12 * (1.15**2 - 1) * 0.85
    blocked = 12 * 1.15**2 * 0.15
    assert float(f.mage_aura_added[3, 7]) == pytest.approx(added, abs=1e-5)
    assert float(f.mage_aura_added_by[0, 3]) == pytest.approx(added / 2, abs=1e-5)
    assert float(f.mage_aura_added_by[1, 3]) == pytest.approx(added / 2, abs=1e-5)
    assert float(np.sum(f.mage_aura_added_by)) == pytest.approx(added, abs=1e-5)
    assert float(f.warrior_aura_prevented_by[5, 7]) == pytest.approx(blocked, abs=1e-5)
    assert float(np.sum(f.warrior_aura_prevented_by)) == pytest.approx(blocked, abs=1e-5)
    cover = np.asarray(f.aura_cover)
    assert np.argwhere(cover).tolist() == [
        [0, 0],
        [0, 1],
        [0, 3],
        [1, 0],
        [1, 1],
        [1, 3],
        [5, 5],
        [5, 7],
    ]


def test_warrior_aura_reaches_2_not_2_01() -> None:
    base = [U(slot=2, cls="H", x=7.0, y=5.0), U(slot=8, cls="R", x=10.0, y=5.0)]
    _, f = step(game(*base, U(slot=5, cls="W", x=12.0, y=5.0)), acts(basic={2: 8}))
    assert float(f.damage_basic[2, 8]) == pytest.approx(6 * 0.85)
    _, f = step(game(*base, U(slot=5, cls="W", x=12.01, y=5.0)), acts(basic={2: 8}))
    assert float(f.damage_basic[2, 8]) == pytest.approx(6.0)


def test_auras_pass_through_walls() -> None:
    """Auras need no line of sight: a wall between the Mage and the Rogue, and one between the
    victim and its Warrior, block sight (the Mage's own Basic is refused) but not the auras."""
    arena = custom_map(wall(6.0, 5.0, 0.1, 4.0), wall(7.9, 6.15, 1.4, 0.1))
    s = game(
        U(slot=0, cls="M", x=5.3, y=5.0),
        U(slot=3, cls="R", x=6.7, y=5.0),
        U(slot=7, cls="H", x=7.9, y=5.0),
        U(slot=5, cls="W", x=7.9, y=6.8),
        map_id=arena,
    )
    nxt, f = step(s, acts(basic={0: 7, 3: 7}, ult={5: 3}))
    assert bool(f.combat_rejected[0])  # the Mage cannot see the Hunter through the wall
    assert bool(f.combat_rejected[5])  # the Warrior cannot see the Rogue through the other one
    assert (int(f.mage_auras[3]), int(f.warrior_auras[7])) == (1, 1)
    assert float(f.damage_basic[3, 7]) == pytest.approx(12 * 1.15 * 0.85)
    assert hp(nxt)[7] == pytest.approx(100 - 12 * 1.15 * 0.85)


def test_shielded_emitters_give_no_aura() -> None:
    s = game(
        U(slot=0, cls="M", x=5.0, y=5.0, shield=2),
        U(slot=3, cls="R", x=6.0, y=5.0),
        U(slot=8, cls="R", x=7.2, y=5.0),
        U(slot=5, cls="W", x=8.2, y=5.0, shield=1),
    )
    nxt, f = step(s, acts(basic={3: 8}))
    assert (int(f.mage_auras[3]), int(f.warrior_auras[8])) == (0, 0)
    assert float(f.damage_basic[3, 8]) == pytest.approx(12.0)
    assert hp(nxt)[8] == pytest.approx(88.0)


def test_shielded_receivers_get_no_aura() -> None:
    """A shielded agent is covered by no aura, not even its own."""
    s = game(
        U(slot=0, cls="M", x=5.0, y=5.0),
        U(slot=3, cls="R", x=6.0, y=5.0, shield=3),
        U(slot=1, cls="M", x=5.0, y=6.0, shield=1),
        U(slot=5, cls="W", x=15.0, y=5.0),
        U(slot=6, cls="W", x=15.0, y=6.0, shield=2),
        U(slot=7, cls="H", x=16.0, y=5.0, shield=2),
    )
    _, f = step(s, acts())
    assert np.asarray(f.mage_auras)[[0, 1, 3]].tolist() == [1, 0, 0]
    assert np.asarray(f.warrior_auras)[[5, 6, 7]].tolist() == [1, 0, 0]


# ------------------------------------------------------------------------------------ Burst


def test_burst_multiplies_damage_for_the_next_five_ticks() -> None:
    """Burst on tick 0 (no damage that tick), x1.5 on ticks 1-5, back to normal on tick 6."""
    s = game(U(slot=0, cls="M", x=5.0, y=5.0), U(slot=5, cls="W", x=7.5, y=5.0))
    s, f = step(s, acts(ult={0: None}))
    assert bool(f.ultimate_used[0])
    assert not bool(f.basic_used[0])
    assert float(np.sum(f.damage)) == 0.0
    assert not bool(f.burst_active[0])
    assert (int(s.units.burst[0]), int(s.units.cooldown[0])) == (5, 30)
    boosted = 13 * 1.5 * 1.15 * 0.85
    plain = 13 * 1.15 * 0.85
    dealt = []
    for _ in range(6):
        s, f = step(s, acts(basic={0: 5}))
        dealt.append((float(f.damage_basic[0, 5]), bool(f.burst_active[0])))
    assert dealt == [(pytest.approx(boosted), True)] * 5 + [(pytest.approx(plain), False)]
    assert hp(s)[5] == pytest.approx(200 - 5 * boosted - plain)
    assert int(s.units.burst[0]) == 0


def test_mage_cannot_basic_on_the_burst_tick() -> None:
    """(enemy target, Ultimate) is not a legal pair for the Mage: it is repaired to nothing."""
    s = game(U(slot=0, cls="M", x=5.0, y=5.0), U(slot=5, cls="W", x=7.5, y=5.0))
    nxt, f = step(s, acts(ult={0: 5}))
    assert bool(f.combat_rejected[0])
    assert f.accepted[0].tolist() == [0, 0, 0]
    assert float(np.sum(f.damage)) == 0.0
    assert (int(nxt.units.burst[0]), int(nxt.units.cooldown[0])) == (0, 0)


def test_full_damage_pipeline() -> None:
    """base x Burst x the actor's Mage auras x the recipient's Warrior auras."""
    s = game(
        U(slot=0, cls="M", x=5.0, y=5.0, burst=3),
        U(slot=1, cls="M", x=5.0, y=6.5),
        U(slot=5, cls="W", x=7.5, y=5.0),
        U(slot=6, cls="W", x=8.5, y=6.0),
    )
    nxt, f = step(s, acts(basic={0: 5, 1: 5}))
    bursting = 13 * 1.5 * 1.15**2 * 0.85**2
    normal = 13 * 1.15**2 * 0.85**2
    assert float(f.damage_basic[0, 5]) == pytest.approx(bursting)
    assert float(f.damage_basic[1, 5]) == pytest.approx(normal)
    assert bool(f.burst_active[0])
    assert not bool(f.burst_active[1])
    # The aura facts are the damage each aura added or prevented, all else equal.
    assert float(f.mage_aura_added[0, 5]) == pytest.approx(bursting - 13 * 1.5 * 0.85**2)
    assert float(f.warrior_aura_prevented[0, 5]) == pytest.approx(13 * 1.5 * 1.15**2 - bursting)
    assert float(f.mage_aura_added[1, 5]) == pytest.approx(normal - 13 * 0.85**2)
    assert hp(nxt)[5] == pytest.approx(200 - bursting - normal)


# ----------------------------------------------------------------------------------- Charge


def test_charge(run: Step) -> None:
    """20 damage, stun 1, slow x0.5 for 5; the Warrior lands touching the target, which stays."""
    s = game(U(slot=1, cls="W", x=3.0, y=5.0), U(slot=7, cls="H", x=7.0, y=5.0))
    s, _, f = run(s, acts(ult={1: 7}))
    assert float(f.damage_ultimate[1, 7]) == pytest.approx(20.0)
    assert hp(s)[7] == pytest.approx(80.0)
    assert pos(s, 1) == pytest.approx([6.0, 5.0], abs=1e-5)
    assert pos(s, 7) == pytest.approx([7.0, 5.0])
    assert bool(f.stunned[1, 7])
    assert bool(f.slowed_charge[1, 7])
    u = s.units
    assert (int(u.stun[7]), int(u.slow_charge[7]), int(u.cooldown[1])) == (1, 5, 30)
    # Tick 1: stunned, the Hunter can neither move nor shoot back.
    s, _, f = run(s, acts(basic={7: 1}, move={7: NORTH}))
    assert bool(f.combat_rejected[7])
    assert bool(f.move_rejected[7])
    assert pos(s, 7) == pytest.approx([7.0, 5.0])
    # Ticks 2-5: half speed; tick 6: full speed.
    moved = []
    for _ in range(5):
        s, _, f = run(s, acts(move={7: NORTH}))
        moved.append(float(f.moved[7]))
    assert moved == pytest.approx([0.5, 0.5, 0.5, 0.5, 1.0])


def test_charge_along_a_diagonal() -> None:
    s = game(U(slot=1, cls="W", x=3.0, y=3.0), U(slot=7, cls="H", x=6.0, y=7.0))
    nxt, f = step(s, acts(ult={1: 7}))
    assert accepted(f, 1)
    assert pos(nxt, 1) == pytest.approx([6.0 - 0.6, 7.0 - 0.8], abs=1e-5)
    assert pos(nxt, 7) == pytest.approx([6.0, 7.0])


def test_charge_range_is_5_75() -> None:
    base = U(slot=1, cls="W", x=3.0, y=5.0)
    _, f = step(game(base, U(slot=7, cls="H", x=8.75, y=5.0)), acts(ult={1: 7}))
    assert accepted(f, 1)
    assert float(f.damage_ultimate[1, 7]) == pytest.approx(20.0)
    _, f = step(game(base, U(slot=7, cls="H", x=8.8, y=5.0)), acts(ult={1: 7}))
    assert bool(f.combat_rejected[1])
    assert float(np.sum(f.damage)) == 0.0


def test_charge_passes_over_a_wall() -> None:
    """The wall lies 0.2 beside the sight line: it leaves sight clear but blocks a walking body."""
    arena = custom_map(wall(5.0, 5.4, 1.0, 0.4))
    s = game(U(slot=1, cls="W", x=3.0, y=5.0), U(slot=7, cls="H", x=7.0, y=5.0), map_id=arena)
    nxt, f = step(s, acts(ult={1: 7}))
    assert accepted(f, 1)
    assert pos(nxt, 1) == pytest.approx([6.0, 5.0], abs=1e-5)
    # Walking the same line instead stops at the wall.
    walker = game(U(slot=1, cls="W", x=4.0, y=5.0), U(slot=7, cls="H", x=7.0, y=5.0), map_id=arena)
    after, _ = step(walker, acts(move={1: EAST}))
    assert pos(after, 1)[0] < 4.1


@pytest.mark.parametrize(
    ("blocker", "obstacles", "free_x"),
    [
        # Another body 0.6 beside the contact point (6, 5): it fits again from x = 6 - 0.8.
        (U(slot=8, cls="R", x=6.0, y=5.6), (), 5.2),
        # A pillar of radius 0.35 at (6, 5.75): it fits again from x = 6 - 0.4.
        (None, (pillar(6.0, 5.75, 0.35),), 5.6),
    ],
    ids=["body", "pillar"],
)
def test_charge_backs_off_when_the_contact_point_is_blocked(
    blocker: UnitSpec | None, obstacles: tuple[dict[str, Any], ...], free_x: float
) -> None:
    """Documented choice: the landing backs off along the line to the nearest sampled point that
    fits (the line is sampled in 1/16 steps, 3/16 = 0.1875 units here)."""
    units = [U(slot=1, cls="W", x=3.0, y=5.0), U(slot=7, cls="H", x=7.0, y=5.0)]
    arena = custom_map(*obstacles) if obstacles else 0
    s = game(*units, *([blocker] if blocker else []), map_id=arena)
    nxt, f = step(s, acts(ult={1: 7}))
    assert accepted(f, 1)
    assert float(f.damage_ultimate[1, 7]) == pytest.approx(20.0)
    x, y = pos(nxt, 1)
    assert y == pytest.approx(5.0)
    assert free_x - 0.1875 - 1e-4 <= x <= free_x + 1e-4
    assert pos(nxt, 7) == pytest.approx([7.0, 5.0])
    if blocker is not None:
        assert np.hypot(x - 6.0, y - 5.6) >= 1.0 - 1e-4
        assert pos(nxt, 8) == pytest.approx([6.0, 5.6])


def test_two_charges_in_one_tick_each_land_on_their_own_first_free_point() -> None:
    """One Warrior's contact point is free, the other's is blocked by a pillar: the search for the
    second must not move the first off its contact point."""
    arena = custom_map(pillar(6.0, 5.75, 0.35))
    s = game(
        U(slot=1, cls="W", x=3.0, y=2.0), U(slot=7, cls="H", x=7.0, y=2.0),
        U(slot=2, cls="W", x=3.0, y=5.0), U(slot=8, cls="H", x=7.0, y=5.0),
        map_id=arena,
    )  # fmt: skip
    nxt, f = step(s, acts(ult={1: 7, 2: 8}))
    assert accepted(f, 1)
    assert accepted(f, 2)
    assert pos(nxt, 1) == pytest.approx([6.0, 2.0], abs=1e-5)
    x, y = pos(nxt, 2)
    assert y == pytest.approx(5.0)
    assert 5.6 - 0.1875 - 1e-4 <= x <= 5.6 + 1e-4


def test_warrior_moves_after_its_charge() -> None:
    """Documented choice: the Charge relocation comes first, then the Warrior's ordinary move."""
    s = game(U(slot=1, cls="W", x=3.0, y=5.0), U(slot=7, cls="H", x=7.0, y=5.0))
    nxt, f = step(s, acts(ult={1: 7}, move={1: NORTH}))
    assert np.asarray(f.charge_to[1]).tolist() == pytest.approx([6.0, 5.0], abs=1e-5)
    assert pos(nxt, 1) == pytest.approx([6.0, 6.0], abs=1e-5)


# ----------------------------------------------------------------------------------- slows


def test_hunter_basic_slows_for_one_tick_and_a_new_hit_restarts_it() -> None:
    s = game(U(slot=2, cls="H", x=3.0, y=5.0), U(slot=5, cls="M", x=6.0, y=5.0))
    s, f = step(s, acts(basic={2: 5}))
    assert float(f.damage_basic[2, 5]) == pytest.approx(6.0)
    assert bool(f.slowed_hunter[2, 5])
    assert int(s.units.slow_hunter[5]) == 1
    s, f = step(s, acts(basic={2: 5}, move={5: NORTH}))  # slowed, and hit again
    assert float(f.moved[5]) == pytest.approx(0.85)
    assert int(s.units.slow_hunter[5]) == 1
    s, f = step(s, acts(move={5: NORTH}))  # the second hit's slow
    assert float(f.moved[5]) == pytest.approx(0.85)
    s, f = step(s, acts(move={5: NORTH}))
    assert float(f.moved[5]) == pytest.approx(1.0)
    assert pos(s, 5) == pytest.approx([6.0, 5.0 + 0.85 + 0.85 + 1.0], abs=1e-5)


@pytest.mark.parametrize(
    ("cls", "slows", "speed"),
    [
        ("M", {"slow_charge": 2}, 0.5),
        ("M", {"slow_charge": 2, "slow_hunter": 1}, 0.5 * 0.85),
        ("M", {"slow_charge": 2, "slow_poison": 2, "slow_hunter": 1}, 0.5 * 0.5 * 0.85),
        ("R", {"slow_hunter": 1}, 1.3 * 0.85),
        ("R", {}, 1.3),
        ("M", {"slow_charge": 2, "freedom": 1}, 0.85),
        ("M", {"slow_charge": 2, "slow_poison": 2, "freedom": 1}, 0.85),
        ("M", {"slow_hunter": 1, "freedom": 1}, 0.85),
        ("M", {"freedom": 1}, 1.0),
        ("R", {"slow_poison": 1, "freedom": 1}, 1.3 * 0.85),
    ],
)
def test_slows_multiply_and_freedom_sets_a_floor(
    cls: str, slows: dict[str, int], speed: float
) -> None:
    """Different slows multiply (0.2125 at most, above the 0.2 floor); Freedom keeps >= 0.85."""
    s = game(U(slot=0, cls=cls, x=5.0, y=3.0, **slows), U(slot=5, cls="W", x=15.0, y=5.0))
    nxt, f = step(s, acts(move={0: NORTH}))
    assert float(f.moved[0]) == pytest.approx(speed)
    assert pos(nxt, 0) == pytest.approx([5.0, 3.0 + speed], abs=1e-5)


# ------------------------------------------------------------------------------------- Trap


def trap_game() -> GameState:
    """A Hunter 2.5 from a Rogue; a Mage in range of the Rogue but out of the Hunter's aura."""
    return game(
        U(slot=2, cls="H", x=3.0, y=5.0),
        U(slot=0, cls="M", x=4.0, y=7.3),
        U(slot=8, cls="R", x=5.5, y=5.0),
        U(slot=9, cls="P", x=7.5, y=5.0),
    )


def test_trap_holds_four_ticks_despite_same_tick_damage() -> None:
    """10 damage and a stun of 4; damage on the Trap's own tick does not break it; healing does
    not break it either."""
    s, f = step(trap_game(), acts(ult={2: 8}, basic={0: 8}))
    assert float(f.damage_ultimate[2, 8]) == pytest.approx(10.0)
    assert float(f.damage_basic[0, 8]) == pytest.approx(13 * 1.15)
    assert bool(f.trapped[2, 8])
    assert not bool(f.trap_broken[8])
    assert int(s.units.trap[8]) == 4
    assert hp(s)[8] == pytest.approx(100 - 10 - 13 * 1.15)
    ys = []
    for t in range(5):
        heal = {9: 8} if t == 0 else {}
        s, f = step(s, acts(basic=heal, move={8: NORTH}))
        ys.append(pos(s, 8)[1])
        if t == 0:
            assert float(f.heal_basic[9, 8]) == pytest.approx(8.0)
            assert not bool(f.trap_broken[8])
    assert ys == pytest.approx([5.0, 5.0, 5.0, 5.0, 6.3], abs=1e-5)


def test_damage_on_a_later_tick_breaks_the_trap() -> None:
    s, _ = step(trap_game(), acts(ult={2: 8}))
    s, f = step(s, acts(move={8: NORTH}))  # tick 1: trapped
    assert pos(s, 8) == pytest.approx([5.5, 5.0])
    assert int(s.units.trap[8]) == 3
    s, f = step(s, acts(basic={0: 8}, move={8: NORTH}))  # tick 2: hit, still held this tick
    assert bool(f.trap_broken[8])
    assert np.flatnonzero(np.asarray(f.trap_broken_by[:, 8])).tolist() == [0]
    assert pos(s, 8) == pytest.approx([5.5, 5.0])
    assert int(s.units.trap[8]) == 0
    s, f = step(s, acts(move={8: NORTH}))  # tick 3: free
    assert not bool(f.move_rejected[8])
    assert pos(s, 8) == pytest.approx([5.5, 6.3], abs=1e-5)


def test_trap_reapplied_on_a_running_trap_stands() -> None:
    """The new Trap's damage breaks the running one; the new Trap stands for its full 4 ticks."""
    s = game(U(slot=2, cls="H", x=3.0, y=5.0), U(slot=8, cls="R", x=5.5, y=5.0, trap=2))
    s, f = step(s, acts(ult={2: 8}))
    assert float(f.damage_ultimate[2, 8]) == pytest.approx(10.0)
    assert bool(f.trapped[2, 8])
    assert bool(f.trap_broken[8])
    assert int(s.units.trap[8]) == 4
    ys = []
    for _ in range(5):
        s, _ = step(s, acts(move={8: NORTH}))
        ys.append(pos(s, 8)[1])
    assert ys == pytest.approx([5.0, 5.0, 5.0, 5.0, 6.3], abs=1e-5)


# ----------------------------------------------------------------------------------- Poison


def test_poison() -> None:
    """36 damage, stun 1, slow x0.5 for 5, healing halved for 4 ticks, no damage over time."""
    s = game(
        U(slot=3, cls="R", x=5.0, y=5.0),
        U(slot=7, cls="H", x=6.2, y=5.0),
        U(slot=9, cls="P", x=8.0, y=5.0),
    )
    s, f = step(s, acts(ult={3: 7}))
    assert float(f.damage_ultimate[3, 7]) == pytest.approx(36.0)
    assert bool(f.poisoned[3, 7])
    assert bool(f.stunned[3, 7])
    u = s.units
    assert (int(u.stun[7]), int(u.slow_poison[7]), int(u.antiheal[7])) == (1, 5, 4)
    assert hp(s)[7] == pytest.approx(64.0)
    # Tick 1: stunned (its Basic on the Rogue, in range, is refused); the Priest's heal is halved.
    s, f = step(s, acts(basic={7: 3, 9: 7}))
    assert bool(f.combat_rejected[7])
    assert float(f.heal_basic[9, 7]) == pytest.approx(4.0)
    heals = [4.0]
    for _ in range(4):
        s, f = step(s, acts(basic={9: 7}))
        heals.append(float(f.heal_basic[9, 7]))
    assert heals == pytest.approx([4.0, 4.0, 4.0, 4.0, 8.0])
    assert hp(s)[7] == pytest.approx(64.0 + 4 * 4 + 8)
    assert float(np.sum(f.damage)) == 0.0


def test_poison_leaves_no_damage_over_time() -> None:
    s = game(U(slot=3, cls="R", x=5.0, y=5.0), U(slot=7, cls="H", x=6.2, y=5.0))
    s, _ = step(s, acts(ult={3: 7}))
    for _ in range(5):
        s, f = step(s, acts())
        assert float(np.sum(f.damage)) == 0.0
        assert hp(s)[7] == pytest.approx(64.0)  # in combat: no regeneration either


def test_poison_slows_movement_for_five_ticks() -> None:
    """Stunned on tick 1, x0.5 on ticks 2-5 (five decisions from tick 1), full speed on tick 6."""
    s = game(U(slot=3, cls="R", x=5.0, y=3.0), U(slot=7, cls="H", x=6.2, y=3.0))
    s, _ = step(s, acts(ult={3: 7}))
    moved = []
    for _ in range(6):
        s, f = step(s, acts(move={7: NORTH}))
        moved.append(float(f.moved[7]))
    assert moved == pytest.approx([0.0, 0.5, 0.5, 0.5, 0.5, 1.0])


def test_poison_halves_regeneration() -> None:
    s = game(
        U(slot=2, cls="H", x=5.0, y=5.0, health=50.0, antiheal=2),
        U(slot=7, cls="H", x=15.0, y=5.0, health=50.0),
    )
    for expected in ([52.0, 54.0], [54.0, 58.0], [58.0, 62.0]):  # anti-heal gone after 2 ticks
        s, _ = step(s, acts())
        assert hp(s)[[2, 7]].tolist() == pytest.approx(expected)


# ---------------------------------------------------------------------------------- healing


def test_lesser_heal_grants_freedom_but_stuns_still_apply(run: Step) -> None:
    """Poisoned and healed on the same tick: stunned next tick although freed; then slowed."""
    s = game(
        U(slot=0, cls="M", x=5.0, y=5.0),
        U(slot=4, cls="P", x=5.0, y=2.0),
        U(slot=8, cls="R", x=6.2, y=5.0),
    )
    s, _, f = run(s, acts(basic={4: 0}, ult={8: 0}))
    assert bool(f.freed[4, 0])
    assert bool(f.poisoned[8, 0])
    # Same-tick heal is not yet halved: anti-heal starts with the next decision.
    assert hp(s)[0] == pytest.approx(80 - 36 + 8)
    assert (int(s.units.freedom[0]), int(s.units.stun[0])) == (1, 1)
    s, _, f = run(s, acts(move={0: SOUTH}))
    assert bool(f.move_rejected[0])
    assert float(f.moved[0]) == 0.0
    s, _, f = run(s, acts(move={0: SOUTH}))
    assert float(f.moved[0]) == pytest.approx(0.5)


def test_freedom_lifts_a_slow_for_one_tick() -> None:
    s = game(
        U(slot=0, cls="M", x=5.0, y=5.0, slow_charge=3),
        U(slot=4, cls="P", x=5.0, y=2.0),
        U(slot=5, cls="W", x=15.0, y=5.0),
    )
    s, _ = step(s, acts(basic={4: 0}))
    moved = []
    for _ in range(3):
        s, f = step(s, acts(move={0: NORTH}))
        moved.append(float(f.moved[0]))
    assert moved == pytest.approx([0.85, 0.5, 1.0])


def salvation_game(target: UnitSpec, **kw: Any) -> GameState:
    return game(U(slot=4, cls="P", x=5.0, y=2.0), target, U(slot=8, cls="R", x=6.2, y=5.0), **kw)


@pytest.mark.parametrize(
    ("target", "healed", "after"),
    [
        (U(slot=0, cls="M", x=5.0, y=5.0, health=10.0, recovery=5), 200.0, 80.0),
        (U(slot=1, cls="W", x=5.0, y=5.0, health=10.0, recovery=5), 200.0, 200.0),
        (U(slot=1, cls="W", x=5.0, y=5.0, health=50.0, recovery=5, antiheal=2), 100.0, 150.0),
        (U(slot=1, cls="W", x=5.0, y=5.0, health=150.0, recovery=5, antiheal=1), 100.0, 200.0),
    ],
    ids=["mage", "warrior", "warrior-poisoned", "warrior-poisoned-capped"],
)
def test_salvation_amount(target: UnitSpec, healed: float, after: float) -> None:
    """200 before reductions and the cap: it fills any class; 100 under Poison."""
    nxt, f = step(salvation_game(target), acts(ult={4: target.slot}))
    assert float(f.heal_ultimate[4, target.slot]) == pytest.approx(healed)
    assert hp(nxt)[target.slot] == pytest.approx(after)
    assert float(f.overheal[target.slot]) == pytest.approx(target.health + healed - after)
    assert int(nxt.units.cooldown[4]) == 30


def test_salvation_on_the_priest_itself() -> None:
    s = game(U(slot=4, cls="P", x=5.0, y=2.0, health=30.0), U(slot=8, cls="R", x=15.0, y=5.0))
    nxt, f = step(s, acts(ult={4: 4}))
    assert float(f.heal_ultimate[4, 4]) == pytest.approx(200.0)
    assert hp(nxt)[4] == 100.0


def test_salvation_saves_from_a_same_tick_killing_blow(run: Step) -> None:
    s = salvation_game(U(slot=0, cls="M", x=5.0, y=5.0, health=10.0, recovery=5))
    nxt, _, f = run(s, acts(ult={4: 0}, basic={8: 0}))
    assert float(f.damage_basic[8, 0]) == pytest.approx(12.0)
    assert bool(f.saved[0])
    assert not bool(f.died[0])
    assert bool(nxt.units.alive[0])
    assert hp(nxt)[0] == pytest.approx(80.0)  # 10 - 12 + 200, then capped
    # Without the Salvation the blow kills.
    nxt, _, f = run(s, acts(basic={8: 0}))
    assert bool(f.died[0])
    assert not bool(f.saved[0])
    assert not bool(nxt.units.alive[0])


def test_salvation_never_revives_the_dead() -> None:
    s = salvation_game(U(slot=0, cls="M", x=5.0, y=5.0, alive=False))
    nxt, f = step(s, acts(ult={4: 0}))
    assert bool(f.combat_rejected[4])
    assert float(np.sum(f.healing)) == 0.0
    assert not bool(nxt.units.alive[0])
    assert hp(nxt)[0] == 0.0
    assert int(nxt.units.cooldown[4]) == 0


def test_shielded_allies_cannot_be_healed() -> None:
    s = salvation_game(U(slot=0, cls="M", x=5.0, y=5.0, health=40.0, shield=2, recovery=5))
    for a in (acts(ult={4: 0}), acts(basic={4: 0})):
        nxt, f = step(s, a)
        assert bool(f.combat_rejected[4])
        assert float(np.sum(f.healing)) == 0.0
        assert hp(nxt)[0] == pytest.approx(40.0)


@pytest.mark.parametrize(("health", "alive"), [(5.0, True), (4.0, False), (4.5, True)])
def test_damage_and_healing_are_summed_before_deaths(health: float, alive: bool) -> None:
    """12 damage and an 8 heal on the same tick: net -4; exactly 0 health is death."""
    s = game(
        U(slot=0, cls="M", x=5.0, y=5.0, health=health, recovery=5),
        U(slot=4, cls="P", x=5.0, y=2.0),
        U(slot=8, cls="R", x=6.2, y=5.0),
    )
    nxt, f = step(s, acts(basic={4: 0, 8: 0}))
    assert bool(nxt.units.alive[0]) is alive
    assert bool(f.died[0]) is not alive
    assert bool(f.saved[0]) is alive
    assert hp(nxt)[0] == pytest.approx(health - 4.0 if alive else 0.0)


def test_health_is_capped_after_the_sum() -> None:
    """78 - 12 + 8 = 74: the heal is not lost to the cap before the damage is taken."""
    s = game(
        U(slot=0, cls="M", x=5.0, y=5.0, health=78.0, recovery=5),
        U(slot=4, cls="P", x=5.0, y=2.0),
        U(slot=8, cls="R", x=6.2, y=5.0),
    )
    nxt, f = step(s, acts(basic={4: 0, 8: 0}))
    assert hp(nxt)[0] == pytest.approx(74.0)
    assert float(f.overheal[0]) == 0.0


def test_healing_a_full_health_ally_is_capped() -> None:
    s = game(
        U(slot=2, cls="H", x=5.0, y=5.0, recovery=5),
        U(slot=4, cls="P", x=5.0, y=2.0),
        U(slot=8, cls="R", x=15.0, y=5.0),
    )
    nxt, f = step(s, acts(basic={4: 2}))
    assert float(f.heal_basic[4, 2]) == pytest.approx(8.0)
    assert hp(nxt)[2] == 100.0
    assert float(f.overheal[2]) == pytest.approx(8.0)


# -------------------------------------------------------------------------------- cooldowns


@pytest.mark.parametrize(("cls", "target"), [("M", None), ("W", 5), ("H", 5), ("R", 5), ("P", 0)])
def test_ultimate_cooldown_blocks_thirty_decisions(cls: str, target: int | None) -> None:
    """Every class's Ultimate is legal again 31 ticks after use (a 30-tick cooldown)."""
    s = game(U(slot=0, cls=cls, x=5.0, y=5.0), U(slot=5, cls="W", x=6.2, y=5.0))
    used = []
    for _ in range(32):
        s, f = step(s, acts(ult={0: target}))
        used.append(bool(f.ultimate_used[0]))
    assert used == [True] + [False] * 30 + [True]
    assert int(s.units.cooldown[0]) == 30


def test_authored_cooldown_counts_down() -> None:
    s = game(U(slot=0, cls="M", x=5.0, y=5.0, cooldown=1), U(slot=5, cls="W", x=15.0, y=5.0))
    s, f = step(s, acts(ult={0: None}))
    assert bool(f.combat_rejected[0])
    assert int(s.units.cooldown[0]) == 0
    s, f = step(s, acts(ult={0: None}))
    assert bool(f.ultimate_used[0])
    assert int(s.units.cooldown[0]) == 30


def test_the_ultimate_replaces_the_basic() -> None:
    s = game(U(slot=3, cls="R", x=5.0, y=5.0), U(slot=7, cls="H", x=6.2, y=5.0))
    nxt, f = step(s, acts(ult={3: 7}))
    assert bool(f.ultimate_used[3])
    assert not bool(f.basic_used[3])
    assert float(f.damage_basic[3, 7]) == 0.0
    assert float(f.damage_ultimate[3, 7]) == pytest.approx(36.0)
    assert hp(nxt)[7] == pytest.approx(64.0)
    # While the Ultimate cools down, the same request is refused entirely (no Basic instead).
    _, f = step(nxt, acts(ult={3: 7}))
    assert bool(f.combat_rejected[3])
    assert float(np.sum(f.damage)) == 0.0


# ------------------------------------------------------------------------ out-of-combat regen


@pytest.mark.parametrize(
    ("cls", "health", "regen", "after"),
    [("H", 50.0, 4.0, 54.0), ("W", 50.0, 8.0, 58.0), ("M", 50.0, 3.2, 53.2), ("R", 50.0, 4.0, 54.0),
     ("P", 98.0, 4.0, 100.0)],
)  # fmt: skip
def test_regeneration_is_four_percent_of_max(
    cls: str, health: float, regen: float, after: float
) -> None:
    s = game(U(slot=1, cls=cls, x=5.0, y=5.0, health=health), U(slot=5, cls="W", x=15.0, y=5.0))
    nxt, f = step(s, acts())
    assert float(f.regen[1]) == pytest.approx(regen)
    assert hp(nxt)[1] == pytest.approx(after)
    assert float(f.overheal[1]) == pytest.approx(health + regen - after)


@pytest.mark.parametrize(("cls", "delay"), [("H", 5), ("R", 3)])
def test_regeneration_waits_for_the_out_of_combat_delay(cls: str, delay: int) -> None:
    """Hit on tick 0: no regeneration on ticks 1..delay, then 4 per tick."""
    s = game(U(slot=0, cls="M", x=5.0, y=5.0), U(slot=7, cls=cls, x=7.5, y=5.0, health=60.0))
    s, f = step(s, acts(basic={0: 7}))
    after_hit = 60.0 - 13 * 1.15
    assert hp(s)[7] == pytest.approx(after_hit)
    assert bool(f.in_combat[7])
    recovery, health = [], []
    for _ in range(delay + 2):
        recovery.append(int(s.units.recovery[7]))
        s, f = step(s, acts())
        health.append(float(hp(s)[7]))
    assert recovery == [*range(delay, -1, -1), 0]
    assert health == pytest.approx([after_hit] * delay + [after_hit + 4, after_hit + 8])


def test_healing_an_in_combat_ally_keeps_both_in_combat() -> None:
    s = game(
        U(slot=4, cls="P", x=5.0, y=2.0),
        U(slot=2, cls="H", x=5.0, y=5.0, health=50.0, recovery=3),
        U(slot=8, cls="R", x=15.0, y=5.0),
    )
    nxt, f = step(s, acts(basic={4: 2}))
    assert bool(f.in_combat[4])
    assert bool(f.in_combat[2])
    assert np.asarray(nxt.units.recovery)[[2, 4]].tolist() == [5, 5]
    assert hp(nxt)[2] == pytest.approx(58.0)  # no regeneration on top


def test_healing_an_out_of_combat_full_health_ally_does_not_start_combat() -> None:
    s = game(
        U(slot=4, cls="P", x=5.0, y=2.0),
        U(slot=2, cls="H", x=5.0, y=5.0),
        U(slot=8, cls="R", x=15.0, y=5.0),
    )
    nxt, f = step(s, acts(basic={4: 2}))
    assert not bool(f.in_combat[4])
    assert not bool(f.in_combat[2])
    assert np.asarray(nxt.units.recovery)[[2, 4]].tolist() == [0, 0]


def test_healing_an_out_of_combat_injured_ally_keeps_its_regeneration() -> None:
    """Engine choice: a heal to an agent out of combat is not combat, so it still regenerates;
    a healer in combat keeps counting down."""
    s = game(
        U(slot=4, cls="P", x=5.0, y=2.0, recovery=4),
        U(slot=2, cls="H", x=5.0, y=5.0, health=50.0),
        U(slot=8, cls="R", x=15.0, y=5.0),
    )
    nxt, f = step(s, acts(basic={4: 2}))
    assert not bool(f.in_combat[2])
    assert not bool(f.in_combat[4])
    assert hp(nxt)[2] == pytest.approx(50.0 + 8.0 + 4.0)
    assert np.asarray(nxt.units.recovery)[[2, 4]].tolist() == [0, 3]


def test_taking_damage_stops_regeneration_on_that_tick() -> None:
    s = game(U(slot=0, cls="M", x=5.0, y=5.0), U(slot=7, cls="H", x=7.5, y=5.0, health=60.0))
    nxt, f = step(s, acts(basic={0: 7}))
    assert float(f.regen[7]) == 0.0
    assert hp(nxt)[7] == pytest.approx(60 - 13 * 1.15)
    # Dealing damage counts too: the attacking Mage below max does not regenerate.
    s = game(U(slot=0, cls="M", x=5.0, y=5.0, health=40.0), U(slot=7, cls="H", x=7.5, y=5.0))
    nxt, f = step(s, acts(basic={0: 7}))
    assert float(f.regen[0]) == 0.0
    assert hp(nxt)[0] == pytest.approx(40.0)
    assert int(nxt.units.recovery[0]) == 5


# ------------------------------------------------------------------------------------ facts


def test_facts_agree_with_the_next_state(run: Step) -> None:
    """A busy tick: every health change and status is explained by the facts."""
    s = game(
        U(slot=0, cls="M", x=5.0, y=5.0, burst=2),
        U(slot=1, cls="W", x=3.0, y=2.0),
        U(slot=2, cls="H", x=4.0, y=8.0),
        U(slot=3, cls="R", x=6.0, y=6.0, health=20.0, recovery=2),
        U(slot=4, cls="P", x=3.5, y=5.0, health=70.0),
        U(slot=5, cls="W", x=7.1, y=5.3),
        U(slot=6, cls="M", x=6.2, y=3.2, health=10.0, recovery=5),
        U(slot=7, cls="H", x=6.5, y=8.0, health=30.0, antiheal=3, recovery=0),
        U(slot=8, cls="R", x=7.0, y=6.9, health=5.0, recovery=3),
        U(slot=9, cls="P", x=9.0, y=7.0, health=60.0),
    )
    a = acts(
        basic={0: 5, 2: 8, 3: 8, 4: 3, 6: 3, 5: 3},
        ult={1: 6, 7: 2, 9: 9},
    )
    nxt, _, f = run(s, a)
    assert not np.any(np.asarray(f.combat_rejected)), np.asarray(f.combat_rejected)
    u0, u1 = s.units, nxt.units
    h0, h1 = np.asarray(u0.health), np.asarray(u1.health)
    taken = np.asarray(f.damage).sum(axis=0)
    healed = np.asarray(f.healing).sum(axis=0)
    raw = h0 - taken + healed + np.asarray(f.regen)
    max_h = np.array([80, 200, 100, 100, 100, 200, 80, 100, 100, 100], np.float32)
    died = np.asarray(f.died)
    assert died.tolist() == (raw <= 0).tolist()
    assert h1 == pytest.approx(np.where(died, 0.0, np.minimum(raw, max_h)), abs=1e-4)
    assert np.asarray(f.overheal) == pytest.approx(np.maximum(raw - max_h, 0.0), abs=1e-4)
    assert np.asarray(f.saved).tolist() == ((h0 - taken <= 0) & ~died).tolist()
    assert (np.asarray(u1.alive) == ~died).all()
    # The expected numbers of this tick.
    assert float(f.damage_basic[0, 5]) == pytest.approx(13 * 1.5 * 1.15 * 0.85)
    assert float(f.damage_ultimate[1, 6]) == pytest.approx(20.0)  # Charge on the Mage
    # The Rogue (20) takes 14.95 + 8 and gets 8: saved by the heal.
    assert hp(nxt)[3] == pytest.approx(20 - 13 * 1.15 - 8 + 8)
    assert np.asarray(f.saved).nonzero()[0].tolist() == [3]
    assert float(f.damage_ultimate[7, 2]) == pytest.approx(10.0)
    assert float(f.heal_ultimate[9, 9]) == pytest.approx(200.0)
    assert died.nonzero()[0].tolist() == [6, 8]
    # Statuses: applied ones are at their full duration in the next state, on living units.
    living = np.asarray(u1.alive)
    for fact, field, full in [
        (f.stunned, "stun", 1), (f.slowed_charge, "slow_charge", 5),
        (f.trapped, "trap", 4), (f.slowed_hunter, "slow_hunter", 1),
        (f.freed, "freedom", 1), (f.poisoned, "antiheal", 4),
    ]:  # fmt: skip
        got = np.asarray(fact).any(axis=0) & living
        assert ((np.asarray(getattr(u1, field)) == full) == got).all(), field
    assert np.asarray(f.trapped).nonzero()[1].tolist() == [2]
    assert np.asarray(f.freed).nonzero()[1].tolist() == [3]
    assert np.asarray(f.slowed_hunter).nonzero()[1].tolist() == [8]
    assert np.asarray(f.stunned).nonzero()[1].tolist() == [6]
    assert np.asarray(f.in_combat)[[0, 2, 3, 4, 5, 7, 8]].all()
    assert not bool(f.in_combat[9])  # healing itself at full health, out of combat


# ------------------------------------------------------------------ useful and excess healing


def only_pair(matrix: Any, actor: int, recipient: int) -> bool:
    """Every entry of a [10, 10] matrix but (actor, recipient) is zero."""
    m = np.array(matrix)
    m[actor, recipient] = 0.0
    return not np.any(m)


@pytest.mark.parametrize(
    ("health", "recovery", "regen", "useful", "excess"),
    [
        (100.0, 5, 0.0, 0.0, 8.0),
        (95.0, 5, 0.0, 5.0, 3.0),
        (92.0, 5, 0.0, 8.0, 0.0),
        (50.0, 5, 0.0, 8.0, 0.0),
        (100.0, 0, 4.0, 0.0, 8.0),
        (95.0, 0, 4.0, 1.0, 7.0),
        (90.0, 0, 4.0, 6.0, 2.0),
        (88.0, 0, 4.0, 8.0, 0.0),
    ],
    ids=["full", "missing 5", "missing 8", "missing 50", "full, regenerating",
         "missing 5, regenerating", "missing 10, regenerating", "missing 12, regenerating"],
)  # fmt: skip
def test_lesser_heal_splits_into_useful_and_excess_healing(
    health: float, recovery: int, regen: float, useful: float, excess: float
) -> None:
    """A Lesser Heal (8) on a Hunter (max 100): what the cap cuts is excess, the rest useful.

    In combat (recovery 5) the Hunter does not regenerate; out of combat (recovery 0) it also
    regenerates 4, and the cap's loss is charged to the heal first: useful healing is what the heal
    added beyond what regeneration alone would have reached, never overstated."""
    s = game(
        U(slot=2, cls="H", x=5.0, y=5.0, health=health, recovery=recovery),
        U(slot=4, cls="P", x=5.0, y=2.0),
        U(slot=8, cls="R", x=15.0, y=5.0),
    )
    nxt, f = step(s, acts(basic={4: 2}))
    assert float(f.regen[2]) == pytest.approx(regen)
    assert float(f.heal_basic[4, 2]) == pytest.approx(8.0)
    assert hp(nxt)[2] == pytest.approx(min(100.0, health + 8.0 + regen))
    assert float(f.useful_healing[4, 2]) == pytest.approx(useful)
    assert float(f.excess_healing[4, 2]) == pytest.approx(excess)
    assert only_pair(f.useful_healing, 4, 2)
    assert only_pair(f.excess_healing, 4, 2)
    summary = agent_fact_summary(f)
    assert float(summary["healing_done"][4]) == pytest.approx(useful)
    assert float(summary["excess_healing"][4]) == pytest.approx(excess)
    assert float(summary["healing_received"][2]) == pytest.approx(useful)
    assert np.asarray(summary["excess_healing"])[[0, 1, 2, 3, 5, 6, 7, 8, 9]].tolist() == [0] * 9


def test_two_equal_heals_share_the_excess_equally() -> None:
    """Two Lesser Heals (8 + 8) on a Hunter missing 10 in combat: 6 lost, 3 charged to each."""
    s = game(
        U(slot=2, cls="H", x=5.0, y=5.0, health=90.0, recovery=5),
        U(slot=3, cls="P", x=5.0, y=2.5),
        U(slot=4, cls="P", x=7.5, y=5.0),
        U(slot=8, cls="R", x=15.0, y=5.0),
    )
    nxt, f = step(s, acts(basic={3: 2, 4: 2}))
    assert hp(nxt)[2] == pytest.approx(100.0)
    assert float(f.overheal[2]) == pytest.approx(6.0)
    useful, excess = np.asarray(f.useful_healing), np.asarray(f.excess_healing)
    assert useful[[3, 4], 2].tolist() == pytest.approx([5.0, 5.0])
    assert excess[[3, 4], 2].tolist() == pytest.approx([3.0, 3.0])
    assert np.array_equal(useful + excess, np.asarray(f.healing))
    summary = agent_fact_summary(f)
    assert np.asarray(summary["healing_done"])[[3, 4]].tolist() == pytest.approx([5.0, 5.0])
    assert float(summary["healing_received"][2]) == pytest.approx(10.0)


def test_a_heal_and_a_salvation_share_the_excess_in_proportion() -> None:
    """A Lesser Heal (8) and a Salvation (200) on a Warrior at 50 of 200 in combat: 58 is lost,
    charged 8/208 and 200/208 of it; useful healing sums to the 150 missing."""
    s = game(
        U(slot=1, cls="W", x=5.0, y=5.0, health=50.0, recovery=5),
        U(slot=3, cls="P", x=5.0, y=2.5),
        U(slot=4, cls="P", x=8.0, y=5.0),
        U(slot=8, cls="R", x=15.0, y=5.0),
    )
    nxt, f = step(s, acts(basic={3: 1}, ult={4: 1}))
    assert float(f.heal_basic[3, 1]) == pytest.approx(8.0)
    assert float(f.heal_ultimate[4, 1]) == pytest.approx(200.0)
    assert hp(nxt)[1] == pytest.approx(200.0)
    assert float(f.overheal[1]) == pytest.approx(58.0)
    useful, excess = np.asarray(f.useful_healing), np.asarray(f.excess_healing)
    assert excess[[3, 4], 1].tolist() == pytest.approx([8 * 58 / 208, 200 * 58 / 208], rel=1e-5)
    assert useful[[3, 4], 1].tolist() == pytest.approx([8 * 150 / 208, 200 * 150 / 208], rel=1e-5)
    assert np.array_equal(useful + excess, np.asarray(f.healing))  # exactly, entry by entry
    assert float(useful[:, 1].sum()) == pytest.approx(150.0)
    assert float(excess[:, 1].sum()) == pytest.approx(float(f.overheal[1]))
    assert not np.any(np.delete(excess, 1, axis=1))  # no other recipient lost healing
