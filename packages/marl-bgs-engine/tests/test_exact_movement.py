"""Exact movement against independent references: `core.movement.move` on obstacle sets with
rotated walls and pillars, checked against a dense numerical search written here in numpy, and
the body rules (stop touching, the faster body behind stops, chains) on hand-made cases.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from marl_bgs.core.arena import (
    BODY_RADIUS,
    EPS,
    MAP_HEIGHT,
    MAP_WIDTH,
    MAX_OBSTACLES,
    MAX_STEP,
    MOVE_VECTORS,
    NEAR_OBSTACLES,
)
from marl_bgs.core.geometry import Obstacles, body_fits, make_obstacles, obstacle_distance
from marl_bgs.core.movement import move

# Pillars (x, y, r) and walls (x, y, width, height, theta) of a test arena with rotated walls.
PILLARS = [(4.0, 3.0, 0.6), (15.0, 7.0, 0.3), (10.0, 8.5, 0.5)]
WALLS = [
    (8.0, 5.0, 3.0, 0.4, math.pi / 4),
    (12.0, 3.0, 2.0, 0.01, 0.3),
    (6.0, 8.0, 1.5, 1.0, -1.1),
    (16.0, 3.5, 0.8, 2.5, 2.0),
]


def arena() -> Obstacles:
    k = MAX_OBSTACLES
    kind = np.zeros(k, np.int32)
    center = np.zeros((k, 2), np.float32)
    size = np.zeros((k, 2), np.float32)
    theta = np.zeros(k, np.float32)
    for i, (x, y, r) in enumerate(PILLARS):
        kind[i], center[i], size[i] = 1, (x, y), (r, r)
    for j, (x, y, w, h, t) in enumerate(WALLS, start=len(PILLARS)):
        kind[j], center[j], size[j], theta[j] = 2, (x, y), (w, h), t
    return make_obstacles(kind, center, size, theta)


def distances(points: np.ndarray) -> np.ndarray:
    """[..., K] distance from body centres to each obstacle's surface (float64, written here)."""
    out = []
    for x, y, r in PILLARS:
        out.append(np.hypot(points[..., 0] - x, points[..., 1] - y) - r)
    for x, y, w, h, t in WALLS:
        dx, dy = points[..., 0] - x, points[..., 1] - y
        u = np.abs(math.cos(t) * dx + math.sin(t) * dy) - w / 2
        v = np.abs(math.cos(t) * dy - math.sin(t) * dx) - h / 2
        outside = np.hypot(np.maximum(u, 0), np.maximum(v, 0))
        out.append(outside + np.minimum(np.maximum(u, v), 0))
    return np.stack(out, -1)


def reference_reach(start: np.ndarray, path: np.ndarray, samples: int = 4001) -> tuple[float, bool]:
    """Furthest fraction of a straight path before contact, by dense sampling then bisection.

    Same tolerance as the rules: an obstacle (or the border) blocks only if the path would overlap
    it by more than EPS, and then the body stops at exact contact with it. Returns (reach, clear):
    clear is False when some obstacle comes within 1e-5 of the tolerance (ambiguous, skipped).
    """
    t = np.linspace(0.0, 1.0, samples)
    pts = start + t[:, None] * path
    d = distances(pts)  # [S, K]
    r = BODY_RADIUS
    border = np.stack([pts[:, 0], MAP_WIDTH - pts[:, 0], pts[:, 1], MAP_HEIGHT - pts[:, 1]], -1)
    gaps = np.concatenate([d - r, border - r], axis=-1)  # [S, K + 4]: < 0 overlaps
    deepest = gaps.min(axis=0)
    clear = bool(np.all(np.abs(deepest + EPS) > 1e-5))
    reach = 1.0
    for k in np.flatnonzero(deepest < -EPS):
        first = int(np.argmax(gaps[:, k] < 0))  # first sample overlapping it at all
        lo, hi = (t[first - 1], t[first]) if first > 0 else (0.0, 0.0)

        def gap(f: float, k: int = k) -> float:
            p = start + f * path
            walls = [p[0] - r, MAP_WIDTH - p[0] - r, p[1] - r, MAP_HEIGHT - p[1] - r]
            g = np.concatenate([distances(p[None])[0] - r, walls])
            return float(g[k])

        for _ in range(50):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if gap(mid) >= 0 else (lo, mid)
        reach = min(reach, lo)
    return reach, clear


def reference_move(start: np.ndarray, step: np.ndarray) -> tuple[np.ndarray, bool]:
    """The rules' path choice (straight, else x or y alone; furthest along the step)."""
    paths = [step, np.array([step[0], 0.0]), np.array([0.0, step[1]])]
    best, best_progress, clear = np.zeros(2), -1.0, True
    for i, p in enumerate(paths):
        reach, ok = reference_reach(start, p)
        clear &= ok
        progress = reach * float(p @ step) + (2e-5, 1e-5, 0.0)[i]
        if progress > best_progress:
            best, best_progress = reach * p, progress
    return start + best, clear


@pytest.fixture(scope="module")
def move_one():
    """Jitted `move` of one mobile body (slot 0) among nine standing, non-solid ones."""
    obstacles = arena()

    def one(start, world_move, speed):
        pos = jnp.zeros((10, 2)).at[0].set(start).at[1:].set(jnp.asarray([1.0, 1.0]))
        mobile = jnp.zeros(10, bool).at[0].set(True)
        speeds = jnp.zeros(10).at[0].set(speed)
        moves = jnp.zeros(10, jnp.int32).at[0].set(world_move)
        return move(pos, moves, speeds, mobile, jnp.zeros(10, bool), obstacles)[0]

    return jax.jit(jax.vmap(one))


def test_obstacle_contact_matches_a_dense_reference(move_one):
    # Random fitting starts near the obstacles, every move, speeds up to the shield speed 2.
    rng = np.random.default_rng(0)
    obstacles = arena()
    pts = rng.uniform([0.5, 0.5], [19.5, 9.5], size=(6000, 2)).astype(np.float32)
    near = distances(pts.astype(np.float64)).min(-1) < 2.5
    fits = np.asarray(body_fits(jnp.asarray(pts), obstacles)) & near
    starts = pts[fits][:400]
    moves = rng.integers(1, 9, size=len(starts))
    speeds = rng.choice([0.2125, 0.85, 1.0, 1.3, 2.0], size=len(starts)).astype(np.float32)
    got = np.asarray(move_one(jnp.asarray(starts), jnp.asarray(moves), jnp.asarray(speeds)))
    checked = stopped = 0
    for s, m, v, g in zip(starts, moves, speeds, got, strict=True):
        want, clear = reference_move(s.astype(np.float64), MOVE_VECTORS[m] * float(v))
        if not clear:
            continue
        checked += 1
        stopped += not np.allclose(want, s + MOVE_VECTORS[m] * v, atol=1e-5)
        np.testing.assert_allclose(g, want, atol=2e-4, err_msg=f"start {s}, move {m}, speed {v}")
    assert checked >= 350  # most cases are unambiguous
    assert stopped >= 100  # and many are blocked


def test_a_blocked_body_ends_touching_the_obstacle(move_one):
    rng = np.random.default_rng(1)
    starts = np.array([[8.0 + 1.2 * math.cos(a), 5.0 + 1.2 * math.sin(a)]
                       for a in rng.uniform(0, 2 * math.pi, 200)], np.float32)  # fmt: skip
    starts = starts[np.asarray(body_fits(jnp.asarray(starts), arena()))]
    moves = rng.integers(1, 5, size=len(starts))  # straight moves: no slide can help
    got = np.asarray(move_one(jnp.asarray(starts), jnp.asarray(moves), jnp.full(len(starts), 1.0)))
    moved = np.linalg.norm(got - starts, axis=-1)
    short = moved < 1.0 - 1e-4
    gaps = distances(got.astype(np.float64)) - BODY_RADIUS  # [n, K]
    assert short.sum() >= 40
    # Every body whose move was cut short touches an obstacle: not short of it, not into it (a
    # path may graze another one by less than the tolerance EPS).
    assert np.all(np.abs(gaps[short]).min(axis=-1) <= 2e-5)
    assert np.all(gaps >= -EPS)


def test_sliding_along_a_rotated_wall_it_touches_is_free(move_one):
    # Wall 0 is rotated 45 degrees; a body touching its long face moves parallel to it (northeast
    # or southwest), whatever the rounding of cos and sin.
    c = math.sqrt(0.5)
    normal = np.array([-c, c])  # the face's outward normal (north-west side)
    along = np.array([c, c])
    starts = np.array([(8.0, 5.0) + normal * (0.2 + BODY_RADIUS) + along * s
                       for s in np.linspace(-1.0, 0.4, 15)], np.float32)  # fmt: skip
    for m, sign in ((5, 1.0), (8, -1.0)):
        got = np.asarray(move_one(jnp.asarray(starts), jnp.full(len(starts), m),
                                  jnp.full(len(starts), 1.0)))  # fmt: skip
        np.testing.assert_allclose(got, starts + sign * along, atol=1e-5)


# --- bodies ---------------------------------------------------------------------------------------
_jit_move = jax.jit(move)


def open_move(pos, moves, speeds, solid=None):
    """`move` on an empty arena; pos [n, 2] padded to ten slots (the rest far away, not solid)."""
    n = len(pos)
    full = np.zeros((10, 2), np.float32)
    full[:, 0], full[:, 1] = 19.0, np.linspace(0.5, 9.5, 10)
    full[:n] = pos
    mv = np.zeros(10, np.int32)
    mv[:n] = moves
    sp = np.zeros(10, np.float32)
    sp[:n] = speeds
    so = np.zeros(10, bool)
    so[:n] = True if solid is None else solid
    empty = arena().replace(active=jnp.zeros(MAX_OBSTACLES, bool))
    out = _jit_move(jnp.asarray(full), jnp.asarray(mv), jnp.asarray(sp), jnp.asarray(sp > 0),
                    jnp.asarray(so), empty)  # fmt: skip
    return np.asarray(out)[:n]


def test_a_faster_body_behind_stops_and_the_one_ahead_walks_on():
    # A Rogue (1.3) 1.2 behind a Warrior (1.0), both east: it catches up at t = 2/3 and stops there,
    # touching; the Warrior, walking away, is not held back.
    pos = open_move([(8.0, 5.0), (9.2, 5.0)], [3, 3], [1.3, 1.0])
    assert pos[1] == pytest.approx((10.2, 5.0), abs=1e-5)
    assert pos[0] == pytest.approx((8.0 + 1.3 * 2 / 3, 5.0), abs=1e-5)


def test_a_chain_stops_body_by_body():
    # C stands at 12; B walks east from 10.5 and touches C at 11 (t = 0.5); A walks east from 9
    # behind B and touches the stopped B at 10 (t = 1).
    pos = open_move([(9.0, 5.0), (10.5, 5.0), (12.0, 5.0)], [3, 3, 0], [1.0, 1.0, 0.0])
    assert pos[:, 0] == pytest.approx([10.0, 11.0, 12.0], abs=1e-5)
    # A 0.2 closer: at equal speeds A cannot catch B while B walks; it touches B, stopped at 11,
    # at t = 0.8.
    pos = open_move([(9.2, 5.0), (10.5, 5.0), (12.0, 5.0)], [3, 3, 0], [1.0, 1.0, 0.0])
    assert pos[:, 0] == pytest.approx([10.0, 11.0, 12.0], abs=1e-5)


def test_crossing_paths_stop_at_the_touch_and_mirror():
    # A walks north, B walks west; they would cross at (10, 5). Both move towards each other when
    # they touch, so both stop there, touching, and the mirror image does the same.
    pos = open_move([(10.0, 3.5), (11.5, 5.0)], [1, 4], [1.0, 1.0])
    assert np.linalg.norm(pos[0] - pos[1]) == pytest.approx(1.0, abs=1e-5)
    assert pos[0, 1] - 3.5 == pytest.approx(11.5 - pos[1, 0], abs=1e-6)  # equal shares
    mirrored = open_move([(10.0, 3.5), (8.5, 5.0)], [1, 3], [1.0, 1.0])
    assert mirrored[:, 0] == pytest.approx(20.0 - pos[:, 0], abs=1e-5)
    assert mirrored[:, 1] == pytest.approx(pos[:, 1], abs=1e-5)


def test_crowds_stop_touching_not_apart():
    # Random crowds in the open: every body whose move was cut short touched another body at the
    # moment it stopped (bodies move at constant speed during the tick; the other may walk on).
    rng = np.random.default_rng(5)
    short_total = 0
    for _ in range(30):
        pos = np.zeros((0, 2))
        while len(pos) < 10:  # ten bodies, none overlapping, in a 5 x 5 square
            p = rng.uniform([6.0, 2.5], [11.0, 7.5])
            if np.all(np.linalg.norm(pos - p, axis=-1) >= 1.02):
                pos = np.vstack([pos, p])
        moves = rng.integers(0, 9, size=10)
        speeds = rng.choice([1.0, 1.3, 0.5], size=10)
        out = open_move(pos, moves, speeds)
        gaps = np.linalg.norm(out[:, None] - out[None], axis=-1) + 9 * np.eye(10)
        assert gaps.min() >= 1.0 - 1e-4
        stopped_at = np.linalg.norm(out - pos, axis=-1) / np.where(moves > 0, speeds, 1.0)
        velocity = MOVE_VECTORS[moves] * speeds[:, None]
        for i in np.flatnonzero((moves > 0) & (stopped_at < 1.0 - 1e-4)):
            t = min(stopped_at[i], 1.0)
            others = pos + np.minimum(stopped_at, t)[:, None] * velocity  # everyone at time t
            d = np.linalg.norm(others - out[i], axis=-1)
            d[i] = np.inf
            assert d.min() == pytest.approx(1.0, abs=1e-4)
            short_total += 1
    assert short_total >= 20


def test_testing_only_the_near_obstacles_loses_nothing(monkeypatch):
    # The most crowded shipped map (12 obstacles within reach of one cell): moves in its crowded
    # parts, shielded speed 2, give the same positions whether movement tests the 12 obstacles
    # its cell table lists or all 32.
    import marl_bgs
    from marl_bgs.core import movement
    from marl_bgs.tdm.maps.checks import crowding

    crowd = {m: crowding(marl_bgs.maps.load(m)) for m in marl_bgs.maps.all_ids()}
    worst = max(crowd, key=lambda m: crowd[m][0])
    assert crowd[worst][0] == NEAR_OBSTACLES
    obstacles = marl_bgs.maps.load(worst).to_obstacles()
    rng = np.random.default_rng(worst)
    pts = rng.uniform([0.5, 0.5], [19.5, 9.5], size=(4000, 2)).astype(np.float32)
    near = np.sum(np.asarray(jax.vmap(lambda p: obstacle_distance(p, obstacles))(pts)) < 2.5, -1)
    pts = pts[np.asarray(body_fits(jnp.asarray(pts), obstacles)) & (near >= 6)][:300]
    assert len(pts) >= 100

    def run():
        def one(p, m):
            pos = jnp.zeros((10, 2)).at[0].set(p).at[1:].set(jnp.asarray([1.0, 1.0]))
            moves = jnp.zeros(10, jnp.int32).at[0].set(m)
            speeds = jnp.zeros(10).at[0].set(2.0)
            mobile = jnp.zeros(10, bool).at[0].set(True)
            return move(pos, moves, speeds, mobile, jnp.zeros(10, bool), obstacles)[0]

        moves = np.arange(len(pts)) % 8 + 1
        return np.asarray(jax.jit(jax.vmap(one))(jnp.asarray(pts), jnp.asarray(moves)))

    culled = run()

    def every_obstacle(x, y, obs, near):
        return jax.tree.map(lambda f: jnp.broadcast_to(jnp.asarray(f), x.shape + f.shape), obs)

    monkeypatch.setattr(movement, "near_obstacles", every_obstacle)
    # A missed obstacle would move a body by up to a step; the two programs' float rounding may
    # differ by an ulp where XLA vectorises a loop of 12 obstacles and one of 32 differently.
    np.testing.assert_allclose(run(), culled, rtol=0, atol=1e-5)
    assert np.mean(np.linalg.norm(culled - pts, axis=-1) < 2.0 - 1e-4) > 0.3  # many blocked


def test_the_cell_table_lists_every_obstacle_a_body_can_reach():
    # On every shipped map, for points all over the field, the obstacles listed for the point's
    # cell include every obstacle within one tick's reach (MAX_STEP + BODY_RADIUS) of it.
    import marl_bgs
    from marl_bgs.core.geometry import near_obstacles, near_table

    xs, ys = np.meshgrid(np.linspace(0.5, 19.5, 77), np.linspace(0.5, 9.5, 37))
    pts = jnp.asarray(np.stack([xs.ravel(), ys.ravel()], -1), jnp.float32)

    @jax.jit
    def missed(obs):
        # Any pytree of per-obstacle fields works: read back each listed obstacle's index.
        index = {"index": jnp.arange(MAX_OBSTACLES)}
        listed = near_obstacles(pts[:, 0], pts[:, 1], index, near_table(obs))["index"]  # [P, 12]
        found = jnp.any(listed[:, :, None] == jnp.arange(MAX_OBSTACLES), axis=1)  # [P, 32]
        reachable = obstacle_distance(pts, obs) < MAX_STEP + BODY_RADIUS
        return jnp.sum(reachable & ~found), jnp.sum(reachable)

    total = 0
    for m in marl_bgs.maps.all_ids():
        miss, reach = missed(jax.tree.map(jnp.asarray, marl_bgs.maps.load(m).to_obstacles()))
        assert int(miss) == 0, f"map {m}: {int(miss)} reachable obstacles not listed"
        total += int(reach)
    assert total > 100_000


def _time_stepped(pos: np.ndarray, velocity: np.ndarray, dt: float = 2e-4) -> np.ndarray:
    """Reference for body blocking, written here: every body advances dt at a time, all at once;
    a body stops for good when a step would bring it within contact of a body it moves towards."""
    p = pos.astype(np.float64).copy()
    active = np.linalg.norm(velocity, axis=-1) > 0
    for _ in range(round(1 / dt)):
        new = p + velocity * dt * active[:, None]
        rel = new[None, :, :] - new[:, None, :]  # [i, j]: from i to j
        close = np.linalg.norm(rel, axis=-1) < 1.0
        np.fill_diagonal(close, False)
        towards = np.einsum("id,ijd->ij", velocity, rel) > 0
        stopped = active & np.any(close & towards, axis=1)
        p = np.where((active & ~stopped)[:, None], new, p)
        active &= ~stopped
    return p


def test_bodies_match_a_fine_time_step_simulation():
    # Clusters of bodies walking about in the open (groups resolved in parallel, chains, catches
    # from behind, head-on meetings) against a dt = 2e-4 simulation of the same rule.
    rng = np.random.default_rng(11)
    compared = 0
    for _ in range(12):
        pos = np.zeros((0, 2))
        while len(pos) < 10:  # two clusters of five
            centre = (7.0, 5.0) if len(pos) < 5 else (13.0, 5.0)
            p = rng.uniform(np.subtract(centre, 1.8), np.add(centre, 1.8))
            if np.all(np.linalg.norm(pos - p, axis=-1) >= 1.02):
                pos = np.vstack([pos, p])
        moves = rng.integers(0, 9, size=10)
        speeds = rng.choice([1.0, 1.3, 0.85], size=10)
        want = _time_stepped(pos, MOVE_VECTORS[moves] * speeds[:, None])
        got = open_move(pos, moves, speeds)
        np.testing.assert_allclose(got, want, atol=1e-3)
        compared += int(np.sum(np.linalg.norm(want - pos, axis=-1) < speeds * (moves > 0) - 1e-3))
    assert compared >= 15  # many moves were cut short by bodies


def test_groups_that_meet_through_a_third_body_wait_for_each_other():
    # A crowded strip where a body's stop reaches another two contacts away: events are taken in
    # time order within whole groups (linked through any chain of bodies), as the reference does.
    pos = np.array([[15.413, 4.639], [8.589, 4.567], [5.923, 5.636], [5.584, 4.126],
                    [11.765, 5.964], [4.431, 4.509], [13.919, 5.791], [14.171, 4.71],
                    [9.614, 5.805], [10.449, 4.862]])  # fmt: skip
    moves = np.array([3, 4, 2, 2, 5, 1, 4, 0, 7, 4])
    speeds = np.array([1.0, 1.0, 1.3, 1.0, 1.0, 1.3, 1.0, 1.0, 1.0, 1.3])
    want = _time_stepped(pos, MOVE_VECTORS[moves] * speeds[:, None])
    np.testing.assert_allclose(open_move(pos, moves, speeds), want, atol=1e-3)
