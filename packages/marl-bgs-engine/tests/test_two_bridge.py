"""Two-Bridge (`two-bridge-v1`): the field, the per-episode starts, masks, fire, movement over the
cliff, outcomes, the shaped team reward, the observation, and batched play against the single-game
rules. The generic conformance suite (tests/test_conformance.py) is not repeated here.

Single games are authored as `BridgeState`s (`game(...)`) and advanced by one jitted
`rules.transition`; a few small envs (shared per module) check what only the env does.
"""

from __future__ import annotations

from collections import Counter
from functools import cache, partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs.core.env import game_tick
from marl_bgs.two_bridge import layout as lay
from marl_bgs.two_bridge import rules, views
from marl_bgs.two_bridge.mode import TwoBridge
from marl_bgs.two_bridge.reward import team_reward
from marl_bgs.two_bridge.state import BridgeState

N_E = 5  # V2
MODE = TwoBridge(num_enemies=N_E, fog=False)
FOG_MODE = TwoBridge(num_enemies=N_E, fog=True)
RUNNING, NAV_WIN, COMBAT_WIN, COMBAT_LOSS, TIMEOUT = range(5)
NOOP, SOUTH, NORTH, WEST, EAST, SE, SW, NE, NW = range(9)  # y grows "north"
ATTACK = lay.NUM_BASE_ACTIONS  # ATTACK + j attacks enemy slot j
DIAG = 1.125 / np.sqrt(2.0)

STEP = jax.jit(rules.transition, static_argnums=2)
MASKS = jax.jit(rules.action_masks, static_argnums=1)
MINIMAP = jax.jit(views.minimap, static_argnums=1)
REWARD = jax.jit(team_reward)
OBSERVE = jax.jit(lambda s: MODE.observe(s))
GLOBAL = jax.jit(lambda s: MODE.observe(s, full=True))

# Parking spots far from everything (friends top-left, enemies far right, beacon far away).
PARK_F = [(2.0, 62.0 - 4.0 * i) for i in range(5)]
PARK_E = [(62.0, 2.0 + 3.0 * i) for i in range(8)]
BEACON_FAR = (62.0, 50.0)


def game(
    friends: dict | None = None,
    enemies: dict | None = None,
    *,
    fh: dict | None = None,
    eh: dict | None = None,
    beacon: tuple = BEACON_FAR,
    tick: int = 5,
    tick_limit: int = 600,
    outcome: int = RUNNING,
    n_e: int = N_E,
) -> BridgeState:
    """One authored game: unnamed units parked far away at full health; dicts slot -> value."""
    fp, ep = np.array(PARK_F, np.float32), np.array(PARK_E[:n_e], np.float32)
    fhv, ehv = np.full(5, 45.0, np.float32), np.full(n_e, 45.0, np.float32)
    for arr, changes in ((fp, friends), (ep, enemies), (fhv, fh), (ehv, eh)):
        for k, v in (changes or {}).items():
            arr[k] = v
    return BridgeState(
        friend_pos=jnp.asarray(fp),
        friend_health=jnp.asarray(fhv),
        enemy_pos=jnp.asarray(ep),
        enemy_health=jnp.asarray(ehv),
        beacon=jnp.asarray(beacon, jnp.float32),
        regions=jnp.zeros(3, jnp.int32),
        layout=jnp.int32(0),
        mirrored=jnp.bool_(False),
        tick_limit=jnp.int32(tick_limit),
        tick=jnp.int32(tick),
        outcome=jnp.int32(outcome),
        episode=jnp.int32(0),
    )


def step(state: BridgeState, acts: dict | None = None, fog: bool = False):
    """One transition with friend slot -> action (others no-op): (next state, facts)."""
    a = np.zeros((5, 1), np.int32)
    for k, v in (acts or {}).items():
        a[k, 0] = v
    return STEP(state, jnp.asarray(a), fog)


def np_(x: Any) -> np.ndarray:
    return np.asarray(x)


def assert_trees_equal(a: Any, b: Any) -> None:
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(np_(x), np_(y))


def assert_trees_close(a: Any, b: Any) -> None:
    """Integers and booleans equal, floats equal up to float32 rounding (two compiled programs
    may fuse the same arithmetic differently)."""
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        if np.issubdtype(np_(x).dtype, np.floating):
            np.testing.assert_allclose(np_(x), np_(y), rtol=0, atol=1e-5)
        else:
            np.testing.assert_array_equal(np_(x), np_(y))


# ------------------------------------------------------------------------------------ layout


@pytest.mark.parametrize(
    ("units", "n_e", "status", "actions"), [("V1", 3, 18, 12), ("V2", 5, 22, 14), ("V3", 8, 28, 17)]
)
def test_sizes_of_each_unit_count(units: str, n_e: int, status: int, actions: int) -> None:
    """Observation 2048 + 18/22/28, 12/14/17 actions, and a global state that adds every
    unit's (x, y), the beacon's (x, y) and one distance; the arrays have those sizes."""
    env = marl_bgs.make("two-bridge", variant=f"{units}_Base", num_envs=1)
    assert env.obs_size == 2 * 32 * 32 + status
    assert env.spec.action_heads == (actions,)
    assert env.spec.state_size == env.obs_size + 2 * (5 + n_e) + 2 + 1
    assert env.mode.num_enemies == n_e
    s = game(n_e=n_e)
    mode = TwoBridge(num_enemies=n_e)
    assert mode.observe(s).shape == (5, env.obs_size)
    assert mode.observe(s, full=True).shape == (5, env.spec.state_size)
    assert mode.masks(s).flat.shape == (5, actions)


def test_cliff_is_unpathable_except_on_the_bridges() -> None:
    """Columns 15-16 (x in [30, 34)) are cliff, except rows 7-9 and 22-24 (the bridges at
    y in [14, 20) and [44, 50)); every other cell is pathable."""
    expected = np.ones((32, 32), bool)
    bridge_rows = [7, 8, 9, 22, 23, 24]
    for row in range(32):
        if row not in bridge_rows:
            expected[row, 15:17] = False
    np.testing.assert_array_equal(lay.PATHABLE, expected)
    pts = [(31.0, 10.0), (33.9, 30.0), (31.0, 13.9), (31.0, 14.0), (33.0, 19.9), (31.0, 20.0)]
    pts += [(29.9, 10.0), (34.0, 10.0), (-0.01, 10.0), (64.0, 10.0), (10.0, 64.0), (0.0, 0.0)]
    got = np_(rules.pathable(jnp.asarray(pts, jnp.float32))).tolist()
    assert got == [False, False, False, True, True, False, True, True, False, False, False, True]


def test_spawn_regions_lie_off_the_cliff_on_their_side() -> None:
    """R1-R3 lie left of the cliff, R4-R6 right of it, inside the field, on pathable cells."""
    for r, (x0, x1, y0, y1) in enumerate(lay.REGIONS):
        assert 0 <= x0 < x1 <= lay.FIELD
        assert 0 <= y0 < y1 <= lay.FIELD
        if r in lay.LEFT:
            assert x1 <= lay.CLIFF_X[0]
        else:
            assert x0 >= lay.CLIFF_X[1]
        rows = slice(int(y0 // 2), int(np.ceil(y1 / 2)))
        cols = slice(int(x0 // 2), int(np.ceil(x1 / 2)))
        assert lay.PATHABLE[rows, cols].all()
    assert set(lay.LEFT) | set(lay.RIGHT) == set(range(6))


# ------------------------------------------------------------------------------------ starts

STARTS_N = 300
LONE = {"Base": 0, "Combat": 2, "Navigate": 1}  # entity (friends, enemies, beacon) on the left


@cache
def starts(layout: str, spawn_swap: str = "none", num_envs: int = STARTS_N) -> BridgeState:
    env = marl_bgs.make(
        "two-bridge", variant=f"V2_{layout}", num_envs=num_envs, spawn_swap=spawn_swap
    )
    _, state = env.reset(jax.random.key(7))
    return jax.tree.map(np.asarray, state)


def inside(points: np.ndarray, regions: np.ndarray) -> np.ndarray:
    """points [n, k, 2] inside REGIONS[regions [n]]."""
    box = lay.REGIONS[regions][:, None, :]
    x, y = points[..., 0], points[..., 1]
    return (x >= box[..., 0]) & (x <= box[..., 1]) & (y >= box[..., 2]) & (y <= box[..., 3])


@pytest.mark.parametrize("layout", ["Base", "Combat", "Navigate"])
def test_starts_follow_the_layout(layout: str) -> None:
    """The lone entity takes a left region, the other two two different right regions, and
    every unit and the beacon stand inside their region's rectangle at full health."""
    s = starts(layout)
    lone = LONE[layout]
    others = [e for e in range(3) if e != lone]
    assert np.isin(s.regions[:, lone], lay.LEFT).all()
    assert np.isin(s.regions[:, others], lay.RIGHT).all()
    assert (s.regions[:, others[0]] != s.regions[:, others[1]]).all()
    assert inside(s.friend_pos, s.regions[:, 0]).all()
    assert inside(s.enemy_pos, s.regions[:, 1]).all()
    assert inside(s.beacon[:, None], s.regions[:, 2]).all()
    assert (s.layout == list(lay.LAYOUTS).index(layout)).all()
    assert (s.friend_health == 45.0).all()
    assert (s.enemy_health == 45.0).all()
    assert (s.tick == 0).all()
    assert (s.outcome == RUNNING).all()
    assert not s.mirrored.any()


@pytest.mark.parametrize("layout", ["Base", "Combat", "Navigate"])
def test_every_region_choice_appears_about_uniformly(layout: str) -> None:
    """Over 300 draws each left region holds the lone entity ~1/3 of the time, each ordered
    pair of right regions ~1/6, and spawn points spread uniformly over their region."""
    s = starts(layout)
    lone = LONE[layout]
    others = [e for e in range(3) if e != lone]
    counts = Counter(s.regions[:, lone].tolist())
    assert set(counts) == set(lay.LEFT)
    assert all(55 <= c <= 145 for c in counts.values()), counts
    pairs = Counter(map(tuple, s.regions[:, others].tolist()))
    assert len(pairs) == 6, pairs
    assert all(20 <= c <= 85 for c in pairs.values()), pairs
    box = lay.REGIONS[s.regions[:, 0]][:, None, :]
    u = (s.friend_pos[..., 0] - box[..., 0]) / (box[..., 1] - box[..., 0])
    v = (s.friend_pos[..., 1] - box[..., 2]) / (box[..., 3] - box[..., 2])
    for w in (u, v):
        assert abs(w.mean() - 0.5) < 0.05
        assert w.min() < 0.03
        assert w.max() > 0.97
    assert len({tuple(p) for p in s.friend_pos.reshape(-1, 2).tolist()}) == 5 * STARTS_N


def test_spawn_swap_all_mirrors_the_same_draw() -> None:
    """spawn_swap="all" plays the same draw mirrored: x -> 64 - x, y kept, R1<->R4 etc."""
    plain, mirrored = starts("Combat"), starts("Combat", "all")
    assert mirrored.mirrored.all()
    np.testing.assert_array_equal(mirrored.regions, (plain.regions + 3) % 6)
    for name in ("friend_pos", "enemy_pos", "beacon"):
        a, b = getattr(plain, name), getattr(mirrored, name)
        np.testing.assert_allclose(b[..., 0], lay.FIELD - a[..., 0], atol=1e-5)
        np.testing.assert_array_equal(b[..., 1], a[..., 1])
    # the mirrored layout still puts every unit inside its (swapped) region
    assert np.isin(mirrored.regions[:, 2], lay.RIGHT).all()  # Combat: beacon alone, now right
    assert inside(mirrored.friend_pos, mirrored.regions[:, 0]).all()
    assert inside(mirrored.enemy_pos, mirrored.regions[:, 1]).all()
    assert inside(mirrored.beacon[:, None], mirrored.regions[:, 2]).all()


def test_a_games_start_does_not_depend_on_the_batch_size() -> None:
    """Game g's start from a key is the same in a batch of 7 and in a batch of 300."""
    small, large = starts("Base", num_envs=7), starts("Base")
    assert_trees_close(small, jax.tree.map(lambda a: a[:7], large))


# ------------------------------------------------------------------------------------ masks


def test_masks_noop_always_moves_iff_alive_attack_within_range() -> None:
    """No-op always; moves iff alive; attack j iff the friend and enemy j live and the distance
    is <= 6.0 (5.99 in, 6.01 out); with fog the masks are the same."""
    s = game(
        {0: (10.0, 10.0), 1: (10.0, 12.0), 2: (20.0, 40.0)},
        {0: (15.99, 10.0), 1: (10.0, 16.01), 2: (12.0, 10.0), 3: (20.0, 45.0)},
        fh={1: 0.0},
        eh={2: 0.0},
    )
    m = np_(MASKS(s, False))
    assert m.shape == (5, 9 + N_E)
    assert m[:, 0].all()
    assert m[:, 1:9].tolist() == [[alive] * 8 for alive in (True, False, True, True, True)]
    assert m[0, 9:].tolist() == [True, False, False, False, False]  # 5.99 / 6.01 / dead / far
    assert not m[1, 9:].any()  # dead friend: enemies 0, 1 are within 6 of it
    assert m[2, 9:].tolist() == [False, False, False, True, False]  # distance exactly 5.0
    assert not m[3:, 9:].any()
    np.testing.assert_array_equal(np_(MASKS(s, True)), m)


def test_fog_masks_match_full_masks_on_random_states() -> None:
    """Attack range (6) < sight (9), so fog never changes a mask."""
    rng = np.random.default_rng(0)
    states = [
        game(
            dict(enumerate(rng.uniform(20, 35, (5, 2)))),
            dict(enumerate(rng.uniform(20, 35, (5, 2)))),
            fh=dict(enumerate(rng.choice([0.0, 10.0], 5))),
            eh=dict(enumerate(rng.choice([0.0, 10.0], 5))),
        )
        for _ in range(40)
    ]
    batch = marl_bgs.batch_states(states)
    both = jax.jit(jax.vmap(lambda s: (rules.action_masks(s, False), rules.action_masks(s, True))))
    full, fog = both(batch)
    np.testing.assert_array_equal(np_(full), np_(fog))
    assert np_(full)[:, :, 9:].any()  # some attacks were legal


@pytest.mark.parametrize(("gap", "seen"), [(8.99, True), (9.01, False)])
def test_fog_hides_enemies_and_the_beacon_beyond_sight(gap: float, seen: bool) -> None:
    """With fog an enemy (and the beacon) appears on the minimap only within 9.0 of a living
    friend (a dead friend next to it reveals nothing); without fog it always appears."""
    s = game(
        {0: (10.0, 30.0), 1: (40.0, 31.0)},
        {0: (10.0 + gap, 30.0), 1: (41.0, 31.0)},
        fh={1: 0.0},
        beacon=(10.0, 30.0 - gap),
    )
    fog, full = np_(MINIMAP(s, True))[1], np_(MINIMAP(s, False))[1]
    enemy_cell, beacon_cell = (15, int((10.0 + gap) // 2)), (int((30.0 - gap) // 2), 5)
    enemy1_cell = (15, 20)
    assert full[enemy_cell] == 3.0
    assert full[beacon_cell] == 2.0
    assert full[enemy1_cell] == 3.0
    assert fog[enemy_cell] == (3.0 if seen else 0.0)
    assert fog[beacon_cell] == (2.0 if seen else 0.0)
    assert fog[enemy1_cell] == 0.0  # only a dead friend stands beside enemy 1
    assert fog[15, 5] == 1.0  # the friend itself


# ------------------------------------------------------------------------------------ combat


def test_an_ordered_attack_deals_3_5_to_its_target_not_the_nearest() -> None:
    """Attack j hits enemy j (3.5), even with a nearer enemy in range."""
    s = game({0: (10.0, 10.0)}, {0: (15.0, 10.0), 1: (13.0, 10.0)})
    nxt, f = step(s, {0: ATTACK + 0})
    assert np_(nxt.enemy_health)[:2].tolist() == [41.5, 45.0]
    assert np_(f.friend_target)[0] == 0
    assert np_(f.enemy_damage)[0] == 3.5
    assert not np_(f.rejected).any()


def test_two_friends_on_one_enemy_deal_7() -> None:
    s = game({0: (10.0, 10.0), 1: (10.0, 14.0)}, {0: (14.0, 12.0)})
    nxt, f = step(s, {0: ATTACK, 1: ATTACK})
    assert float(nxt.enemy_health[0]) == 45.0 - 7.0
    assert np_(f.enemy_damage).tolist() == [7.0, 0, 0, 0, 0]


def test_an_idle_friend_fires_at_the_nearest_enemy_in_range_and_a_mover_does_not() -> None:
    """No-op: auto-fire at the nearest living enemy in range; a move: no shot at all."""
    s = game(
        {0: (10.0, 10.0), 1: (10.0, 40.0)},
        {0: (15.0, 10.0), 1: (13.0, 10.0), 2: (11.0, 10.0), 3: (14.0, 40.0)},
        eh={2: 0.0},
    )
    nxt, f = step(s, {0: NOOP, 1: WEST})
    assert np_(f.friend_target)[:2].tolist() == [1, -1]
    assert np_(nxt.enemy_health)[:4].tolist() == [45.0, 41.5, 0.0, 45.0]
    assert float(nxt.friend_pos[1, 0]) == 10.0 - 1.125


def test_enemies_fire_at_the_nearest_living_friend_in_range_and_never_move() -> None:
    """Enemy 0 shoots the nearest living friend (a dead one is nearer); enemy 2 shoots a friend
    5.99 away; enemy 1, with its nearest friend 6.01 away, holds its fire; over steps of
    movement no enemy moves."""
    s = game(
        {0: (15.0, 10.0), 1: (17.0, 10.0), 2: (19.0, 10.0), 3: (40.0, 25.99), 4: (46.01, 40.0)},
        {0: (20.0, 10.0), 1: (40.0, 40.0), 2: (40.0, 20.0)},
        fh={2: 0.0},
    )
    nxt, f = step(s, {0: SOUTH, 1: SOUTH, 3: NORTH, 4: EAST})
    assert np_(f.enemy_target).tolist() == [1, -1, 3, -1, -1]
    assert np_(nxt.friend_health).tolist() == [45.0, 41.5, 0.0, 41.5, 45.0]
    assert np_(f.enemy_damage).sum() == 0.0  # every living friend moved
    for _ in range(4):
        nxt, _ = step(nxt, {0: EAST, 1: NE, 3: SE, 4: NORTH})
    np.testing.assert_array_equal(np_(nxt.enemy_pos), np_(s.enemy_pos))


def test_damage_is_simultaneous() -> None:
    """A friend killed this step still fires this step (and so does its killer); a friend
    killed while moving does not move."""
    s = game(
        {0: (10.0, 10.0), 1: (10.0, 30.0)},
        {0: (14.0, 10.0), 1: (10.0, 34.0)},
        fh={0: 3.5, 1: 3.5},
        eh={0: 3.5},
    )
    nxt, f = step(s, {0: ATTACK + 0, 1: SOUTH})
    assert np_(nxt.friend_health)[:2].tolist() == [0.0, 0.0]
    assert np_(nxt.enemy_health)[:2].tolist() == [0.0, 45.0]
    assert np_(f.friend_target)[:2].tolist() == [0, -1]
    assert np_(nxt.friend_pos)[1].tolist() == [10.0, 30.0]
    assert not bool(f.moved[1])


def test_an_illegal_request_becomes_a_noop() -> None:
    """An out-of-range attack, an attack on a dead enemy, a dead friend's move and an index
    past the action list are rejected and carried out as no-ops (an idle friend still
    auto-fires)."""
    s = game(
        {0: (10.0, 10.0), 1: (10.0, 20.0), 2: (10.0, 33.0), 3: (10.0, 50.0)},
        {0: (14.0, 10.0), 1: (17.01, 10.0), 2: (10.0, 30.0)},
        fh={1: 0.0},
        eh={2: 0.0},
    )
    nxt, f = step(s, {0: ATTACK + 1, 1: NORTH, 2: ATTACK + 2, 3: 9 + N_E, 4: EAST})
    assert np_(f.rejected).tolist() == [True, True, True, True, False]
    assert np_(f.accepted).tolist() == [0, 0, 0, 0, EAST]
    assert np_(f.requested).tolist() == [ATTACK + 1, NORTH, ATTACK + 2, 9 + N_E, EAST]
    assert np_(f.friend_target)[0] == 0  # the no-op friend fires at enemy 0 instead
    assert np_(nxt.enemy_health)[:3].tolist() == [41.5, 45.0, 0.0]
    np.testing.assert_array_equal(np_(nxt.friend_pos)[:4], np_(s.friend_pos)[:4])


# ------------------------------------------------------------------------------------ movement

DIRECTIONS = {
    SOUTH: (0.0, -1.0),
    NORTH: (0.0, 1.0),
    WEST: (-1.0, 0.0),
    EAST: (1.0, 0.0),
    SE: (DIAG / 1.125, -DIAG / 1.125),
    SW: (-DIAG / 1.125, -DIAG / 1.125),
    NE: (DIAG / 1.125, DIAG / 1.125),
    NW: (-DIAG / 1.125, DIAG / 1.125),
}


@pytest.mark.parametrize("action", range(1, 9))
def test_a_move_covers_1_125_along_the_direction_table(action: int) -> None:
    s = game({0: (10.0, 30.0)})
    nxt, f = step(s, {0: action})
    expected = np.array([10.0, 30.0]) + 1.125 * np.array(DIRECTIONS[action])
    np.testing.assert_allclose(np_(nxt.friend_pos)[0], expected, atol=1e-5)
    assert bool(f.moved[0])
    assert not bool(f.blocked[0])
    np.testing.assert_array_equal(np_(nxt.friend_pos)[1:], np_(s.friend_pos)[1:])


def walk(pos: tuple, action: int, steps: int) -> np.ndarray:
    """Friend 0's positions [steps + 1, 2] while it repeats `action`."""
    s, out = game({0: pos}), [pos]
    for _ in range(steps):
        s, _ = step(s, {0: action})
        out.append(tuple(np_(s.friend_pos)[0].tolist()))
    return np.array(out)


@pytest.mark.parametrize(("start", "action"), [((25.0, 10.0), EAST), ((39.0, 13.9), WEST)])
def test_the_cliff_stops_a_walk_off_the_bridges(start: tuple, action: int) -> None:
    """Walking straight at the cliff (y = 10, or y = 13.9 just below a bridge) never enters
    x in [30, 34) and never crosses; the friend stops at the last pathable step."""
    track = walk(start, action, 12)
    x = track[:, 0]
    assert not ((x >= 30.0) & (x < 34.0)).any()
    if action == EAST:
        assert (x < 30.0).all()
        assert x[-1] == pytest.approx(25.0 + 4 * 1.125)
    else:
        assert (x >= 34.0).all()
        assert x[-1] == pytest.approx(39.0 - 4 * 1.125)
    np.testing.assert_allclose(track[:, 1], start[1], atol=1e-5)


@pytest.mark.parametrize("y", [17.0, 14.0, 47.0])
def test_a_bridge_lets_a_friend_cross(y: float) -> None:
    """On a bridge (y in [14, 20) or [44, 50)) a friend walks from x = 25 past the cliff in
    (34 - 25) / 1.125 + 1 = 9 steps, every step pathable."""
    track = walk((25.0, y), EAST, 12)
    assert track[9, 0] == pytest.approx(25.0 + 9 * 1.125)
    assert track[9, 0] > 34.0
    assert track[-1, 0] == pytest.approx(25.0 + 12 * 1.125)
    assert np_(rules.pathable(jnp.asarray(track, jnp.float32))).all()


@pytest.mark.parametrize(("action", "dy"), [(NE, DIAG), (SE, -DIAG)])
def test_a_diagonal_move_into_the_cliff_slides_along_it(action: int, dy: float) -> None:
    s = game({0: (29.5, 30.0)})
    nxt, f = step(s, {0: action})
    np.testing.assert_allclose(np_(nxt.friend_pos)[0], [29.5, 30.0 + dy], atol=1e-5)
    assert bool(f.moved[0])
    assert not bool(f.blocked[0])


def test_the_field_edge_stops_a_friend() -> None:
    """Walking west from x = 3 stops at 0.75 (the next step would leave the field); walking
    north stops below 64; sliding along the west edge keeps x."""
    track = walk((3.0, 10.0), WEST, 6)
    assert (track[:, 0] >= 0.0).all()
    assert track[-1, 0] == pytest.approx(0.75)
    track = walk((10.0, 61.0), NORTH, 6)
    assert (track[:, 1] < 64.0).all()
    assert track[-1, 1] == pytest.approx(63.25)
    s, f = step(game({0: (0.75, 10.0)}), {0: NW})
    np.testing.assert_allclose(np_(s.friend_pos)[0], [0.75, 10.0 + DIAG], atol=1e-5)
    s, f = step(s, {0: WEST})
    assert bool(f.blocked[0])
    assert not bool(f.moved[0])


# ------------------------------------------------------------------------------------ outcomes

BEACON = (20.0, 40.0)


@pytest.mark.parametrize(("gap", "outcome"), [(4.99, NAV_WIN), (5.01, RUNNING)])
def test_navigation_win_within_the_beacon_radius(gap: float, outcome: int) -> None:
    s = game({0: (20.0 + gap, 40.0)}, beacon=BEACON)
    nxt, _ = step(s)
    assert int(nxt.outcome) == outcome
    nxt, _ = step(game({0: (26.0, 40.0)}, beacon=BEACON), {0: WEST})  # arrives this step
    assert int(nxt.outcome) == NAV_WIN


def test_a_dead_friend_on_the_beacon_does_not_win() -> None:
    """Dead on the beacon, or killed on it this step: no navigation win."""
    nxt, _ = step(game({0: BEACON}, fh={0: 0.0}, beacon=BEACON))
    assert int(nxt.outcome) == RUNNING
    nxt, _ = step(game({0: BEACON}, {0: (24.0, 40.0)}, fh={0: 3.5}, beacon=BEACON))
    assert float(nxt.friend_health[0]) == 0.0
    assert int(nxt.outcome) == RUNNING


LAST_ENEMY = {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0}
LAST_FRIEND = {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0}


@pytest.mark.parametrize(
    ("fh", "eh", "beacon", "outcome"),
    [
        ({}, {0: 3.5, **LAST_ENEMY}, BEACON_FAR, COMBAT_WIN),  # the last enemy dies
        ({0: 3.5, **LAST_FRIEND}, {}, BEACON_FAR, COMBAT_LOSS),  # the last friend dies
        ({0: 3.5, **LAST_FRIEND}, {0: 3.5, **LAST_ENEMY}, BEACON_FAR, COMBAT_LOSS),  # both
        ({}, {0: 3.5, **LAST_ENEMY}, (12.0, 12.0), NAV_WIN),  # on the beacon as well
        ({}, {0: 10.0, **LAST_ENEMY}, BEACON_FAR, RUNNING),
    ],
)
def test_combat_outcomes(fh: dict, eh: dict, beacon: tuple, outcome: int) -> None:
    """Friend 0 attacks enemy 0 (4 apart) and takes its fire: combat win, combat loss, a
    simultaneous wipe (a loss), navigation beating a combat win in the same step."""
    s = game({0: (10.0, 10.0)}, {0: (14.0, 10.0)}, fh=fh, eh=eh, beacon=beacon)
    nxt, _ = step(s, {0: ATTACK})
    assert int(nxt.outcome) == outcome


def test_timeout_at_the_tick_limit_and_after_the_other_outcomes() -> None:
    """The game times out on reaching tick_limit, unless it was won on that step; only a
    timeout is truncated."""
    nxt, _ = step(game(tick=8, tick_limit=10))
    assert int(nxt.tick) == 9
    assert int(nxt.outcome) == RUNNING
    nxt, _ = step(nxt)
    assert int(nxt.tick) == 10
    assert int(nxt.outcome) == TIMEOUT
    nxt, _ = step(game({0: (22.0, 40.0)}, beacon=BEACON, tick=9, tick_limit=10))
    assert int(nxt.outcome) == NAV_WIN
    s = game({0: (10.0, 10.0)}, {0: (14.0, 10.0)}, eh={0: 3.5, **LAST_ENEMY}, tick=9)
    nxt, _ = step(s.replace(tick_limit=jnp.int32(10)), {0: ATTACK})
    assert int(nxt.outcome) == COMBAT_WIN
    truncated = [bool(MODE.truncated(game(outcome=k))) for k in range(5)]
    assert truncated == [False, False, False, False, True]


@pytest.mark.parametrize("outcome", [NAV_WIN, COMBAT_WIN, COMBAT_LOSS, TIMEOUT])
def test_a_finished_game_does_not_change(outcome: int) -> None:
    s = game({0: (10.0, 10.0), 1: (10.0, 12.0)}, {0: (14.0, 10.0)}, outcome=outcome)
    nxt, f = step(s, {0: ATTACK, 1: EAST, 2: 99})
    assert_trees_equal(nxt, s)
    assert not np_(f.rejected).any()
    assert (np_(f.friend_target) == -1).all()
    assert (np_(f.enemy_target) == -1).all()
    assert np_(f.enemy_damage).sum() == 0
    assert np_(REWARD(s, nxt)).tolist() == [0.0] * 5


# ------------------------------------------------------------------------------------ reward


def test_the_first_step_pays_no_shaping() -> None:
    """At tick 0 movement, damage and kills pay nothing; the same step at tick 1 does."""
    s = game({0: (10.0, 10.0), 1: (20.0, 40.0)}, {0: (14.0, 10.0)}, fh={0: 10.0}, tick=0)
    s = s.replace(beacon=jnp.asarray([40.0, 40.0]))
    nxt, _ = step(s, {0: ATTACK, 1: EAST})
    assert np_(REWARD(s, nxt)).tolist() == [0.0] * 5
    s1 = s.replace(tick=jnp.int32(1))
    nxt1, _ = step(s1, {0: ATTACK, 1: EAST})
    assert float(REWARD(s1, nxt1)[0]) > 0.2


@pytest.mark.parametrize(
    ("fh", "eh", "pos", "limit", "value"),
    [
        ({}, {0: 10.0}, (26.0, 40.0), 600, 25.0),  # arrives at the beacon
        ({}, {0: 3.5, **LAST_ENEMY}, (10.0, 10.0), 600, 10.0),  # kills the last enemy
        ({0: 3.5, **LAST_FRIEND}, {}, (10.0, 10.0), 600, -10.0),  # loses the last friend
        ({}, {}, (10.0, 20.0), 1, -15.0),  # the clock runs out
    ],
)
def test_terminal_rewards(fh: dict, eh: dict, pos: tuple, limit: int, value: float) -> None:
    """+25 / +10 / -10 / -15, alone on a first step (tick 0 pays no shaping)."""
    s = game({0: pos}, {0: (14.0, 10.0)}, fh=fh, eh=eh, beacon=BEACON, tick=0, tick_limit=limit)
    nxt, _ = step(s, {0: WEST if pos == (26.0, 40.0) else ATTACK})
    assert int(nxt.outcome) != RUNNING
    assert np_(REWARD(s, nxt)).tolist() == [value] * 5


def test_a_shaped_step_matches_the_hand_computed_reward() -> None:
    """Mean beacon approach and mean approach to the living enemies' centroid (over friends
    alive after the step), 0.05 x (enemy health lost - friendly health lost), +1 per kill.

    The killed enemy stands at the centroid of the living ones (a long-dead enemy elsewhere),
    so the centroid is the same before and after the kill and the check does not depend on
    how a kill moves the centroid."""
    beacon = np.array([40.0, 30.0])
    s = game(
        {0: (10.0, 10.0), 1: (20.0, 10.0), 2: (24.0, 31.0), 3: (5.0, 40.0), 4: (12.0, 40.0)},
        {0: (24.0, 10.0), 1: (9.0, 2.0), 2: (39.0, 2.0), 3: (24.0, 26.0), 4: (60.0, 60.0)},
        fh={2: 3.5, 3: 0.0},
        eh={0: 2.0, 4: 0.0},
        beacon=tuple(beacon),
        tick=3,
    )
    nxt, f = step(s, {0: NE, 1: ATTACK + 0, 4: EAST})
    before = np_(s.friend_pos).astype(np.float64)
    after = before.copy()
    after[0] += [DIAG, DIAG]
    after[4] += [1.125, 0.0]
    np.testing.assert_allclose(np_(nxt.friend_pos), after, atol=1e-5)
    assert np_(nxt.friend_health).tolist() == [45.0, 41.5, 0.0, 0.0, 45.0]
    assert np_(nxt.enemy_health).tolist() == [0.0, 45.0, 45.0, 41.5, 0.0]
    alive = [0, 1, 4]  # friend 2 died this step, friend 3 was dead
    centre = np.array([24.0, 10.0])  # of enemies 0-3, and of enemies 1-3

    def gap(p: np.ndarray, q: np.ndarray) -> np.ndarray:
        return np.linalg.norm(p[alive] - q, axis=1)

    approach = np.mean(gap(before, beacon) - gap(after, beacon))
    centroid = np.mean(gap(before, centre) - gap(after, centre))
    health = 0.05 * ((2.0 + 3.5) - (3.5 + 3.5))
    expected = approach + centroid + health + 1.0
    got = np_(REWARD(s, nxt))
    np.testing.assert_allclose(got, [expected] * 5, atol=1e-5)
    np.testing.assert_array_equal(np_(MODE.reward(s, nxt, f)), got)


def test_no_centroid_term_once_every_enemy_is_dead() -> None:
    """Killing the last enemy pays the kill and health terms and no centroid approach."""
    s = game({0: (10.0, 10.0), 1: (10.0, 30.0)}, {0: (14.0, 10.0)}, eh={0: 3.5, **LAST_ENEMY})
    nxt, _ = step(s, {0: ATTACK, 1: WEST})  # friend 1 walks away from the beacon (62, 50)
    b = np.array(BEACON_FAR)
    p1 = np.array([10.0, 30.0])
    approach = (np.linalg.norm(p1 - b) - np.linalg.norm(p1 - [1.125, 0.0] - b)) / 5
    expected = approach + 0.05 * (3.5 - 3.5) + 1.0 + 10.0
    assert int(nxt.outcome) == COMBAT_WIN
    np.testing.assert_allclose(np_(REWARD(s, nxt)), [expected] * 5, atol=1e-5)


# ------------------------------------------------------------------------------------ observation


def test_the_status_vector() -> None:
    """Per friend then per enemy slot (health / 45, alive), elapsed / limit, living enemies / N_E;
    every friend sees the same vector."""
    s = game(fh={1: 22.5, 2: 0.0, 3: 9.0}, eh={1: 0.0, 2: 4.5, 3: 0.0}, tick=30, tick_limit=120)
    obs = np_(OBSERVE(s))
    assert obs.shape == (5, 2048 + 22)
    assert (obs == obs[0]).all()
    expected = [1, 1, 0.5, 1, 0, 0, 0.2, 1, 1, 1, 1, 1, 0, 0, 0.1, 1, 0, 0, 1, 1, 0.25, 0.6]
    np.testing.assert_allclose(obs[0, 2048:], expected, atol=1e-6)


def test_the_minimap_channels() -> None:
    """Channel 0 is the pathability grid; channel 1 shows ally 1, beacon 2, enemy 3 at their
    cells (the larger code on a shared cell) and nothing for the dead."""
    s = game(
        {0: (10.5, 20.5), 1: (40.2, 40.2), 2: (51.0, 11.0), 3: (20.5, 50.5), 4: (3.0, 3.0)},
        {0: (41.9, 41.9), 1: (44.5, 50.5), 2: (60.5, 0.5), 3: (60.5, 62.9), 4: (0.2, 63.9)},
        fh={3: 0.0},
        eh={1: 0.0},
        beacon=(50.1, 10.1),
    )
    obs = np_(OBSERVE(s))[0, :2048].reshape(2, 32, 32)
    np.testing.assert_array_equal(obs[0], lay.PATHABLE.astype(np.float32))
    expected = np.zeros((32, 32), np.float32)
    expected[10, 5] = expected[1, 1] = 1.0  # friends 0 and 4
    expected[20, 20] = 3.0  # friend 1 and enemy 0 share a cell
    expected[5, 25] = 2.0  # friend 2 and the beacon share a cell
    expected[0, 30] = expected[31, 30] = expected[31, 0] = 3.0  # enemies 2-4
    np.testing.assert_array_equal(obs[1], expected)


def test_the_actor_observation_has_no_coordinates_but_the_global_state_does() -> None:
    """Moving a friend within its minimap cell leaves every actor observation unchanged; the
    global state changes and holds the positions / 64 and the nearest beacon distance."""
    s = game({0: (10.2, 20.3)}, {0: (14.0, 20.0)}, beacon=(30.0, 20.0), fh={1: 0.0})
    t = s.replace(friend_pos=s.friend_pos.at[0].set(jnp.asarray([11.7, 21.6])))
    np.testing.assert_array_equal(np_(OBSERVE(s)), np_(OBSERVE(t)))
    gs, gt = np_(GLOBAL(s)), np_(GLOBAL(t))
    assert not np.array_equal(gs, gt)
    obs_size = 2048 + 22
    np.testing.assert_array_equal(gs[0, :obs_size], np_(OBSERVE(s))[0])
    np.testing.assert_allclose(gs[0, obs_size : obs_size + 10], np_(s.friend_pos).ravel() / 64)
    np.testing.assert_allclose(gs[0, obs_size + 10 : obs_size + 20], np_(s.enemy_pos).ravel() / 64)
    np.testing.assert_allclose(gs[0, obs_size + 20 : obs_size + 22], [30 / 64, 20 / 64])
    nearest = np.linalg.norm(np.array([10.2, 20.3]) - [30.0, 20.0])
    assert gs[0, -1] == pytest.approx(nearest / (64 * np.sqrt(2)), abs=1e-6)


# ------------------------------------------------------------------------------------ batched


@pytest.fixture(scope="module")
def env8():
    return marl_bgs.make("two-bridge", variant="V2_Base", num_envs=8)


@pytest.fixture(scope="module")
def skirmish(env8) -> BridgeState:
    """Eight reset games one step in, each friend 4.5 west of an enemy, enemies at 10 health."""
    _, s = env8.reset(jax.random.key(3))
    offset = jnp.stack([jnp.full(5, -4.5), jnp.linspace(-1.0, 1.0, 5)], -1)
    return s.replace(
        friend_pos=s.enemy_pos + offset,
        enemy_health=jnp.full((8, N_E), 10.0),
        tick=jnp.ones(8, jnp.int32),  # past the first step, so the reward is shaped
    )


def random_actions(seed: int, ticks: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 9 + N_E, (ticks, 8, 5, 1)).astype(np.int32)


def test_env_step_equals_vmapped_transition(env8, skirmish) -> None:
    acts = random_actions(1, 1)[0]
    _, nxt, reward, _done, info = env8.step(jax.random.key(0), skirmish, jnp.asarray(acts))
    want, facts = jax.jit(jax.vmap(MODE.transition))(skirmish, jnp.asarray(acts))
    assert_trees_close(nxt, want)
    assert_trees_close(info["facts"], facts)
    rewards = np.stack([np_(reward[a]) for a in env8.agents], 1)
    np.testing.assert_allclose(rewards, np_(jax.vmap(team_reward)(skirmish, want)), atol=1e-5)
    assert (rewards == rewards[:, :1]).all()  # one team reward
    assert np_(info["facts"].enemy_damage).sum() > 0  # the games did fight
    assert (rewards != 0).any()


def test_a_scan_of_20_steps_equals_20_env_steps(env8, skirmish) -> None:
    acts = jnp.asarray(random_actions(2, 20))

    @jax.jit
    def rollout(state, acts):
        def body(s, a):
            nxt, reward, _, truncated = jax.vmap(partial(game_tick, MODE, None))(s, a, None)
            return nxt, (reward, truncated)

        return jax.lax.scan(body, state, acts)

    final, (rewards, truncated) = rollout(skirmish, acts)
    s = skirmish
    for t in range(20):
        _, s, reward, _, info = env8.step(jax.random.key(t), s, acts[t])
        got = np.stack([np_(reward[a]) for a in env8.agents], 1)
        np.testing.assert_allclose(got, np_(rewards[t]), atol=1e-5)
        np.testing.assert_array_equal(np_(info["truncated"]), np_(truncated[t]))
    assert_trees_close(s, final)
    assert (np_(final.outcome) != RUNNING).any()  # some game ended and then stayed put


def test_env_timeout_is_truncated_and_pays_minus_15(env8) -> None:
    """Idle from a Base start (nothing within reach) with tick_limit 3: done and truncated
    exactly on the third step, reward -15, then nothing more."""
    _, s = env8.reset(jax.random.key(4))
    s = s.replace(tick_limit=jnp.full(8, 3, jnp.int32))
    noop = jnp.zeros((8, 5, 1), jnp.int32)
    for t in range(4):
        _, s, reward, done, info = env8.step(jax.random.key(0), s, noop)
        last = t == 2
        assert (np_(info["truncated"]) == (t >= 2)).all()
        assert (np_(done["__all__"]) == (t >= 2)).all()
        assert (np_(reward[env8.agents[0]]) == (-15.0 if last else 0.0)).all()
    assert (np_(s.outcome) == TIMEOUT).all()
    assert (np_(s.tick) == 3).all()


def test_the_mode_needs_no_team_deathmatch_code() -> None:
    """Two-Bridge is written against the mode layer alone: no module of it imports marl_bgs.tdm."""
    import re
    from pathlib import Path

    folder = Path(marl_bgs.two_bridge.__file__).parent
    for module in folder.glob("*.py"):
        imports = re.findall(r"^\s*(?:from|import)\s+(\S+)", module.read_text(), re.M)
        assert not [m for m in imports if m.startswith("marl_bgs.tdm")], module.name
