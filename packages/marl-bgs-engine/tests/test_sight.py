"""Sight: obstacles block sight and targeted abilities, units do not; sight radii; shared sight
for observations only; dead teammates and shielded enemies; the paper's S7.2 example on map 47.

Views and masks come from the public environment (a batch of copies of one authored state);
`seen_directly` is the agent's own sight, `visible` what its view shows.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import marl_bgs
from marl_bgs import UnitSpec, author_state, batch_states
from marl_bgs.tdm.perception import sight_lines

ENEMY = 6  # target index of enemy roster slot 0 (6-10: enemy slots 0-4); 1-5: own slots 0-4


def first(tree):
    return jax.tree.map(lambda a: np.asarray(a[0]), tree)


def look(env, state):
    """(views, masks) of one game, through the batched public API."""
    batch = batch_states([state] * env.num_envs)
    return first(env.views(batch)), first(env.action_masks(batch))


@pytest.fixture(scope="module")
def env_no_share():
    return marl_bgs.make("tdm", map_id=47, num_envs=4, shared_sight=False)


def s72_state():
    """Paper S7.2: tick 12 of TDM-Alpha v TDM-Beta on map 47, as Team A's Mage reads it.

    Enemy slots 1, 3 and 4 are hidden from all of team A in the paper; they stand far away here.
    """
    units = [
        UnitSpec(slot=0, cls="M", x=8.313756, y=3.0042372, last_move=3),
        UnitSpec(slot=1, cls="W", x=5.885046, y=1.4976649, last_move=3),
        UnitSpec(slot=2, cls="H", x=9.048565, y=3.7180176, last_move=3),
        UnitSpec(slot=3, cls="R", x=7.534366, y=3.6408086, last_move=7),
        UnitSpec(slot=4, cls="P", x=4.826409, y=3.5277374),
        UnitSpec(slot=5, cls="M", x=11.712831, y=3.0268838, last_move=4),
        UnitSpec(slot=6, cls="W", x=19.5, y=3.0),
        UnitSpec(slot=7, cls="H", x=11.0110035, y=3.7395618, last_move=4),
        UnitSpec(slot=8, cls="R", x=19.5, y=7.0),
        UnitSpec(slot=9, cls="P", x=19.5, y=9.0),
    ]
    return author_state(map_id=47, units=units, tick=12, wave=(2, 2))


def test_paper_s72_mage_sight_and_legal_pairs(env47):
    view, masks = look(env47, s72_state())
    u = view.units
    # Row order: own slots 0-4 (Mage, Warrior, Hunter, Rogue, Priest), then enemy slots 0-4.
    # Own eyes: not the Priest behind the wall at (6, 3.5), but the enemy Mage and Hunter.
    assert u.seen_directly[0].tolist() == [1, 1, 1, 1, 0, 1, 0, 1, 0, 0]
    # The Warrior sees the Priest and shares it; no one sees enemies 1, 3, 4.
    assert u.visible[0].tolist() == [1, 1, 1, 1, 1, 1, 0, 1, 0, 0]
    # Sources (paper: Source ally_k lines): which teammate sees which row.
    assert view.seen_by[0].astype(int).tolist() == [
        [1, 1, 1, 1, 0, 1, 0, 1, 0, 0],
        [1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
        [1, 1, 1, 1, 0, 1, 0, 1, 0, 0],
        [1, 1, 1, 1, 0, 1, 0, 1, 0, 0],
        [0, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    ]
    # Legal combat pairs: no_combat, ultimate (Burst), enemy_2_basic. The enemy Mage (distance
    # 3.40) is seen but out of the Basic's range 3; the enemy Hunter (2.76) is in range.
    assert [tuple(p) for p in np.argwhere(masks.pair[0])] == [(0, 0), (0, 1), (ENEMY + 2, 0)]
    assert masks.move[0].all()
    assert u.distance[0, 5] == pytest.approx(3.39915, abs=1e-4)
    # Previous accepted moves of the visible units, in the Mage's (left) frame: allies east,
    # east, east, southeast; the enemy Mage and Hunter west; unseen rows carry nothing.
    assert u.last_move[0].argmax(-1).tolist() == [3, 3, 3, 7, 0, 4, 0, 4, 0, 0]
    assert u.last_move[0][[6, 8, 9]].sum() == 0
    assert view.public.tick[0] == 12
    assert view.public.wave_countdown[0].tolist() == [2, 2]


def test_walls_block_sight_and_targeting_even_in_range(env47):
    # Map 47 wall at (8, 5), 0.5 x 1.5. The Mage at (6.8, 5) and an enemy at (9.2, 5): 2.4 apart,
    # inside the Basic's range 3, with the wall in between.
    blocked = author_state(map_id=47, units=[UnitSpec(slot=0, cls="M", x=6.8, y=5.0),
                                             UnitSpec(slot=5, cls="W", x=9.2, y=5.0)])  # fmt: skip
    view, masks = look(env47, blocked)
    assert view.units.visible[0, 5] == 0
    assert view.units.seen_directly[0, 5] == 0
    assert not masks.pair[0, ENEMY].any()
    assert not masks.pair[5, ENEMY].any()  # and the Warrior cannot Charge the Mage either
    # Above the wall's top (y = 5.75) the line is clear: seen and targetable at 2.83.
    clear = author_state(map_id=47, units=[UnitSpec(slot=0, cls="M", x=6.8, y=5.0),
                                           UnitSpec(slot=5, cls="W", x=9.0, y=7.0)])  # fmt: skip
    view, masks = look(env47, clear)
    assert view.units.seen_directly[0, 5] == 1
    assert masks.pair[0, ENEMY].tolist() == [True, False]
    assert masks.pair[5, ENEMY].tolist() == [False, True]  # Charge (range 5.75), not the Basic


def test_pillars_block_sight(env47):
    # Map 47 pillar (7.8, 2) r 0.5 between a Hunter at (6.3, 2) and an enemy 2.7 away at (9, 2),
    # within both the Basic's range 3.5 and the Trap's range 3.
    state = author_state(map_id=47, units=[UnitSpec(slot=0, cls="H", x=6.3, y=2.0),
                                           UnitSpec(slot=5, cls="R", x=9.0, y=2.0)])  # fmt: skip
    view, masks = look(env47, state)
    assert view.units.visible[0, 5] == 0
    assert not masks.pair[0, 1:].any()
    assert masks.pair[0, 0, 0]


def test_units_do_not_block_sight(env47):
    # A Mage, an ally and an enemy in a row on the open part of map 47: the ally in the middle
    # blocks neither sight nor the Basic.
    state = author_state(map_id=47, units=[UnitSpec(slot=0, cls="M", x=9.0, y=6.5),
                                           UnitSpec(slot=1, cls="W", x=10.4, y=6.5),
                                           UnitSpec(slot=5, cls="W", x=11.9, y=6.5)])  # fmt: skip
    view, masks = look(env47, state)
    assert view.units.seen_directly[0, 5] == 1
    assert masks.pair[0, ENEMY, 0]


@pytest.mark.parametrize(
    ("cls", "radius"), [("M", 6.0), ("W", 6.0), ("H", 6.5), ("R", 6.0), ("P", 6.0)]
)
def test_sight_radius_per_class_boundary_inclusive(env47, cls, radius):
    # Open map 0, three enemies: at exactly the radius, 0.01 beyond it, and well inside it.
    far = radius + 0.01
    state = author_state(
        map_id=0,
        units=[UnitSpec(slot=0, cls=cls, x=4.0, y=5.0),
               UnitSpec(slot=5, cls="W", x=4.0 + radius, y=5.0),
               UnitSpec(slot=6, cls="W", x=4.0 + far * float(np.cos(0.35)),
                        y=5.0 - far * float(np.sin(0.35))),
               UnitSpec(slot=7, cls="W", x=3.0 + radius, y=7.0)],
    )  # fmt: skip
    view, _ = look(env47, state)
    assert view.units.seen_directly[0, 5:8].tolist() == [1, 0, 1]
    assert view.units.visible[0, 6] == 0
    assert view.units.sight[0, 0] == pytest.approx(radius)


def shared_state(helper_alive: bool = True, helper_shield: int = 0):
    """Map 47: a Mage behind the wall at (8, 5) from an enemy 2.4 away; a Hunter sees the enemy."""
    return author_state(
        map_id=47,
        units=[UnitSpec(slot=0, cls="M", x=6.8, y=5.0),
               UnitSpec(slot=2, cls="H", x=9.0, y=7.0, alive=helper_alive,
                        health=None if helper_alive else 0.0, shield=helper_shield),
               UnitSpec(slot=5, cls="W", x=9.2, y=5.0)],
    )  # fmt: skip


def test_shared_sight_shows_but_never_permits_combat(env47):
    view, masks = look(env47, shared_state())
    u = view.units
    # The Hunter (own slot 2) sees the enemy; the Mage gets the row through shared sight.
    assert u.visible[0, 5] == 1
    assert u.seen_directly[0, 5] == 0
    assert u.health[0, 5] == pytest.approx(200.0)
    assert u.x[0, 5] == pytest.approx(9.2)
    assert u.y[0, 5] == pytest.approx(5.0)
    assert view.seen_by[0, 2, 5] == 1
    assert view.seen_by[0, 0, 5] == 0
    # In range (2.4 <= 3) and shown, but not in the Mage's own sight: not a legal target.
    assert u.distance[0, 5] == pytest.approx(2.4, abs=1e-5)
    assert not masks.pair[0, ENEMY].any()
    # The Hunter itself, 2.0 away with a clear line, may shoot (range 3.5).
    assert masks.pair[2, ENEMY, 0]


def test_shared_sight_never_permits_healing(env47):
    # The same place with a Priest where the Mage stood and an ally Warrior where the enemy stood.
    state = author_state(
        map_id=47,
        units=[UnitSpec(slot=0, cls="W", x=9.2, y=5.0, health=50.0),
               UnitSpec(slot=2, cls="H", x=9.0, y=7.0, health=50.0),
               UnitSpec(slot=4, cls="P", x=6.8, y=5.0),
               UnitSpec(slot=5, cls="W", x=19.5, y=9.5)],
    )  # fmt: skip
    view, masks = look(env47, state)
    assert view.units.visible[4, 0] == 1
    assert view.units.seen_directly[4, 0] == 0
    assert view.units.distance[4, 0] == pytest.approx(2.4, abs=1e-5)
    assert not masks.pair[4, 1].any()  # the Warrior (own slot 0): shown, in range, not healable
    assert masks.pair[4, 3].tolist() == [True, True]  # the Hunter (2.97 away): Heal, Salvation
    assert masks.pair[4, 5].tolist() == [True, True]  # itself


def test_dead_teammates_share_nothing(env47):
    view, _ = look(env47, shared_state(helper_alive=False))
    u = view.units
    assert u.visible[0, 5] == 0
    # A hidden row is all zeros, in every field.
    for name, leaf in vars(u).items():
        assert not np.any(np.asarray(leaf)[0, 5]), name
    assert not view.seen_by[0, 2].any()  # the dead Hunter is the source of nothing


def test_shielded_enemies_are_invisible_and_untargetable(env47):
    state = author_state(
        map_id=0,
        units=[UnitSpec(slot=0, cls="M", x=5.0, y=5.0), UnitSpec(slot=1, cls="P", x=5.0, y=7.0),
               UnitSpec(slot=2, cls="W", x=5.0, y=3.0, shield=2),
               UnitSpec(slot=5, cls="W", x=7.0, y=5.0, shield=3),
               UnitSpec(slot=6, cls="R", x=6.0, y=6.0)],
    )  # fmt: skip
    view, masks = look(env47, state)
    u = view.units
    assert u.visible[0].tolist()[5:7] == [0, 1]  # the shielded enemy is hidden, even adjacent
    assert not masks.pair[0, ENEMY].any()
    assert masks.pair[0, ENEMY + 1, 0]
    # Shielded allies stay visible to their team but cannot be healed; they cannot act.
    assert u.visible[1, 2] == 1
    assert u.shield[1, 2] == 2
    assert not masks.pair[1, 3].any()
    assert masks.pair[1, 1, 0]
    assert masks.pair[2].tolist() == [[True, False]] + [[False, False]] * 10
    # The same from the other side: B's Rogue (slot 6; its rows 5-9 are team A) does not see the
    # shielded A Warrior (row 7) but sees the A Mage (row 5).
    assert view.units.visible[6, 7] == 0
    assert view.units.visible[6, 5] == 1


def test_no_shared_sight_drops_teammates_sight(env47, env_no_share):
    state = shared_state()
    shared, _ = look(env47, state)
    own, masks = look(env_no_share, state)
    assert shared.units.visible[0, 5] == 1
    assert own.units.visible[0, 5] == 0
    for name, leaf in vars(own.units).items():
        assert not np.any(np.asarray(leaf)[0, 5]), name
    # Nothing of what teammates see reaches the agent, the source table included.
    assert not own.seen_by[0, :, 5].any()
    assert own.seen_by[0, 0].tolist() == own.units.seen_directly[0].tolist()
    # Rows it sees itself are unchanged.
    seen = own.units.seen_directly[0] == 1
    np.testing.assert_array_equal(own.units.x[0][seen], shared.units.x[0][seen])
    assert not masks.pair[0, ENEMY].any()


def test_no_shared_sight_on_the_s72_example(env_no_share):
    view, _ = look(env_no_share, s72_state())
    assert view.units.visible[0].tolist() == [1, 1, 1, 1, 0, 1, 0, 1, 0, 0]
    assert view.units.seen_directly[0].tolist() == [1, 1, 1, 1, 0, 1, 0, 1, 0, 0]
    assert not view.seen_by[0, :, 4].any()  # not even that the Warrior sees the Priest


def test_cached_sight_lines_always_match_the_positions(env47, played):
    # `state.clear` is a cache of the sight lines at the current positions, kept by `transition`,
    # the resets and authoring; a stale cache would show or hide units wrongly.
    recompute = jax.jit(jax.vmap(sight_lines))

    def check(state):
        want = np.asarray(recompute(state.units.pos, state.obstacles))
        np.testing.assert_array_equal(np.asarray(state.clear), want)

    _, state = env47.reset(jax.random.key(3))
    check(state)
    check(env47.start_games(np.zeros(env47.num_envs, int), np.zeros(env47.num_envs, int),
                            np.arange(env47.num_envs) % 2 == 1))  # fmt: skip
    key = jax.random.key(4)
    for batch in (state, *played):
        check(batch)
        for _ in range(3):
            key, k_act, k_reset = jax.random.split(key, 3)
            _, batch, _, _, _ = env47.step(key, batch, env47.sample_actions(k_act, batch))
            check(batch)
            _, batch = env47.reset_done(k_reset, batch)
            check(batch)


def test_refresh_sight_lines_after_editing_positions(env47):
    # Clear line above map 47's wall at (8, 5); moving the Warrior behind the wall by hand leaves
    # the cache stale until `refresh_sight_lines`, after which the Mage no longer sees it.
    state = author_state(map_id=47, units=[UnitSpec(slot=0, cls="M", x=6.8, y=5.0),
                                           UnitSpec(slot=5, cls="W", x=9.0, y=7.0)])  # fmt: skip
    assert bool(state.clear[0, 5])
    moved = state.replace(units=state.units.replace(pos=state.units.pos.at[5].set([9.2, 5.0])))
    assert bool(moved.clear[0, 5])  # stale
    fresh = marl_bgs.refresh_sight_lines(moved)
    assert not bool(fresh.clear[0, 5])
    assert not bool(fresh.clear[5, 0])
    view, _ = look(env47, fresh)
    assert view.units.visible[0, 5] == 0
