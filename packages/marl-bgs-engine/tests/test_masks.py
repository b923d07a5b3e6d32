"""Action masks: exact (target, ultimate) pairs checked against an independent oracle and against
what `transition` accepts, per-head unions, the flat 198-way mask, stay-only agents, the Mage's
untargeted Ultimate, cooldowns, the flat index, the repair rule and the legal sampler.
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from marl_bgs import UnitSpec, author_state, batch_states
from marl_bgs.tdm.actions import flatten, unflatten

# The class table from the rules (index = class id; 0 unused), kept apart from the engine's.
SIGHT = np.array([0.0, 6.0, 6.0, 6.5, 6.0, 6.0])
BASIC_RANGE = np.array([0.0, 3.0, 1.5, 3.5, 1.5, 3.0])
ULT_RANGE = np.array([0.0, 0.0, 5.75, 3.0, 1.5, 5.75])  # Mage: untargeted Burst
MAGE, PRIEST = 1, 5
PAIRS = [(t, u) for t in range(11) for u in range(2)]


def np_tree(tree):
    return jax.tree.map(np.asarray, tree)


def signed_distance(points: np.ndarray, obs) -> np.ndarray:
    """Signed distance [..., K] from points [..., K, 2] to obstacle k each (inf: empty slot)."""
    d = points - obs.center
    cos, sin = np.cos(obs.theta), np.sin(obs.theta)
    lx = cos * d[..., 0] + sin * d[..., 1]
    ly = -sin * d[..., 0] + cos * d[..., 1]
    qx, qy = np.abs(lx) - obs.size[:, 0] / 2, np.abs(ly) - obs.size[:, 1] / 2
    wall = np.hypot(np.maximum(qx, 0), np.maximum(qy, 0)) + np.minimum(np.maximum(qx, qy), 0)
    pillar = np.hypot(d[..., 0], d[..., 1]) - obs.size[:, 0]
    return np.where(obs.kind == 1, pillar, np.where(obs.kind == 2, wall, np.inf))


def sight_margins(starts: np.ndarray, ends: np.ndarray, obs) -> np.ndarray:
    """Least signed distance to any obstacle along each segment [P] (negative: it passes through
    an obstacle). A convex shape's signed distance is convex along a line, so a ternary search
    per (segment, obstacle) finds the exact minimum."""
    k = len(obs.kind)
    a, e = starts[:, None, :], (ends - starts)[:, None, :]  # [P, 1, 2]
    lo, hi = np.zeros((len(starts), k)), np.ones((len(starts), k))

    def f(t: np.ndarray) -> np.ndarray:
        return signed_distance(a + t[..., None] * e, obs)

    for _ in range(60):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        right = f(m1) > f(m2)
        lo, hi = np.where(right, m1, lo), np.where(right, hi, m2)
    return f((lo + hi) / 2).min(-1)


def oracle_pairs(game) -> tuple[np.ndarray, np.ndarray]:
    """Legal (target, ultimate) pairs [10, 11, 2] of one game from the rules, and where the
    oracle cannot tell (within 1e-3 of a boundary)."""
    u, obs = game.units, game.obstacles
    pair = np.zeros((10, 11, 2), bool)
    unsure = np.zeros((10, 11, 2), bool)
    running = int(game.outcome) == 0
    pos = u.pos.astype(np.float64)
    dist = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    # Sight lines are only needed within the longest range (5.75).
    near_pairs = np.argwhere(dist <= ULT_RANGE.max() + 1e-3)
    margin = np.full((10, 10), np.inf)
    margin[tuple(near_pairs.T)] = sight_margins(pos[near_pairs[:, 0]], pos[near_pairs[:, 1]], obs)
    np.fill_diagonal(margin, np.inf)
    for i in range(10):
        pair[i, 0, 0] = True
        cls = int(u.class_id[i])
        actor = running and u.alive[i] and u.stun[i] == 0 and u.trap[i] == 0 and u.shield[i] == 0
        ready = actor and u.cooldown[i] == 0
        pair[i, 0, 1] = ready and cls == MAGE
        team = i // 5
        for t in range(1, 11):
            j = team * 5 + t - 1 if t <= 5 else (1 - team) * 5 + t - 6
            if not (actor and u.alive[j] and u.shield[j] == 0 and u.class_id[j] > 0):
                continue
            d, m = dist[i, j], margin[i, j]
            if d > ULT_RANGE.max() + 1e-3:
                continue  # beyond every range: illegal whatever the sight
            sees = d <= SIGHT[cls] and m > 0
            ally = j // 5 == team
            side = ally if cls == PRIEST else not ally
            pair[i, t, 0] = sees and side and d <= BASIC_RANGE[cls]
            pair[i, t, 1] = sees and side and ready and cls != MAGE and d <= ULT_RANGE[cls]
            close = abs(m) < 1e-3 or abs(d - SIGHT[cls]) < 1e-4
            unsure[i, t, 0] = close or abs(d - BASIC_RANGE[cls]) < 1e-4
            unsure[i, t, 1] = cls != MAGE and (close or abs(d - ULT_RANGE[cls]) < 1e-4)
    return pair, unsure


def game(batch, g):
    return jax.tree.map(lambda a: np.asarray(a[g]), batch)


def look(env, state):
    return game(env.action_masks(batch_states([state] * env.num_envs)), 0)


# --- exactness -----------------------------------------------------------------------------------
def test_pair_mask_matches_the_rules(env47, played):
    legal_targets = compared = unsure_count = 0
    for batch in played:
        masks = np_tree(env47.action_masks(batch))
        for g in range(env47.num_envs):
            want, unsure = oracle_pairs(game(batch, g))
            got = masks.pair[g]
            np.testing.assert_array_equal(got[~unsure], want[~unsure])
            legal_targets += int(want[:, 1:].sum())
            compared += int((~unsure).sum())
            unsure_count += int(unsure.sum())
    assert legal_targets > 150  # the states hold many legal Basics and Ultimates
    assert unsure_count < 0.002 * compared


def test_pair_mask_is_what_transition_accepts(env47, played):
    used = 0
    for batch in played[::2]:
        masks = np_tree(env47.action_masks(batch))
        for t, u in PAIRS:
            actions = (
                jnp.zeros((env47.num_envs, 10, 3), jnp.int32).at[..., 1].set(t).at[..., 2].set(u)
            )
            _, _, _, _, info = env47.step(jax.random.key(0), batch, actions)
            facts = np_tree(info["facts"])
            legal = masks.pair[:, :, t, u]
            np.testing.assert_array_equal(facts.combat_rejected, ~legal, err_msg=f"pair {(t, u)}")
            # An accepted pair is carried out as asked.
            np.testing.assert_array_equal(facts.accepted[..., 1], np.where(legal, t, 0))
            np.testing.assert_array_equal(facts.basic_used, legal & (t > 0) & (u == 0))
            np.testing.assert_array_equal(facts.ultimate_used, legal & (u == 1))
            used += int((legal & (t > 0)).sum())
    assert used > 50


def test_head_masks_are_unions_and_flat_mask_is_consistent(env47, played):
    for batch in played:
        m = np_tree(env47.action_masks(batch))
        np.testing.assert_array_equal(m.target, m.pair.any(-1))
        np.testing.assert_array_equal(m.ultimate, m.pair.any(-2))
        flat = np.asarray(env47.action_masks(batch).flat)
        assert flat.shape == (env47.num_envs, 10, 198)
        for move, t, u in itertools.product(range(9), range(11), range(2)):
            np.testing.assert_array_equal(
                flat[..., (move * 11 + t) * 2 + u], m.move[..., move] & m.pair[..., t, u]
            )
        avail = env47.get_avail_actions(batch)
        for i, agent in enumerate(env47.agents):
            np.testing.assert_array_equal(np.asarray(avail[agent]), flat[:, i])


def test_dead_stunned_trapped_and_finished_agents_may_only_stay(env47, played):
    stay_move = [True] + [False] * 8
    stay_pair = np.zeros((11, 2), bool)
    stay_pair[0, 0] = True
    seen = 0
    for batch in played:
        m = np_tree(env47.action_masks(batch))
        u = np_tree(batch.units)
        frozen = ~u.alive | (u.stun > 0) | (u.trap > 0)
        for g, i in zip(*np.nonzero(frozen), strict=True):
            assert m.move[g, i].tolist() == stay_move
            np.testing.assert_array_equal(m.pair[g, i], stay_pair)
            seen += 1
        # Everyone else may move anywhere (a blocked move is physics, not illegal).
        assert m.move[~frozen].all()
    assert seen > 20
    finished = played[-1].replace(outcome=jnp.full((4,), 1, jnp.int32))
    m = np_tree(env47.action_masks(finished))
    assert not m.move[..., 1:].any()
    assert m.move[..., 0].all()
    assert m.pair.sum() == 4 * 10
    assert m.pair[..., 0, 0].all()


def test_shielded_agents_may_move_but_not_act(env47):
    units = [UnitSpec(slot=0, cls="P", x=5.0, y=5.0, shield=3),
             UnitSpec(slot=1, cls="M", x=5.0, y=6.5, shield=1),
             UnitSpec(slot=5, cls="W", x=6.0, y=4.0)]  # fmt: skip
    m = look(env47, author_state(map_id=0, units=units))
    assert m.move[0].all()
    assert m.move[1].all()
    assert m.pair[0].sum() == 1
    assert m.pair[1].sum() == 1
    assert not m.pair[5, 6:8].any()  # nor may they be targeted


def test_mage_ultimate_is_untargeted_and_others_are_targeted(env47):
    units = [UnitSpec(slot=0, cls="M", x=5.0, y=5.0), UnitSpec(slot=1, cls="W", x=5.0, y=7.0),
             UnitSpec(slot=2, cls="P", x=5.0, y=3.0),
             UnitSpec(slot=5, cls="R", x=5.9, y=6.0)]  # fmt: skip
    m = look(env47, author_state(map_id=0, units=units))
    # Mage: Burst with no target; its Basic on the Rogue (1.35 away); nothing else.
    assert m.pair[0, 0].tolist() == [True, True]
    assert not m.pair[0, 1:, 1].any()
    assert m.pair[0, 6].tolist() == [True, False]
    assert m.ultimate[0].tolist() == [True, True]
    # Warrior: Charge needs a target (the Rogue, 1.35 away: Basic and Charge both legal).
    assert m.pair[1, 0].tolist() == [True, False]
    assert m.pair[1, 6].tolist() == [True, True]
    # Priest: heal (range 3) and Salvation (5.75) on allies and itself, never on enemies: the
    # Mage is 2 away, the Warrior 4.
    assert m.pair[2, 0].tolist() == [True, False]
    assert m.pair[2, 1:4].tolist() == [[True, True], [False, True], [True, True]]
    assert not m.pair[2, 6:].any()
    # Rogue: Basic and Poison on the Mage and the Warrior (1.35 away), not the Priest (3.13).
    assert m.pair[5, 6:9].tolist() == [[True, True], [True, True], [False, False]]


@pytest.mark.parametrize("cooldown", [1, 30])
def test_cooldown_blocks_the_ultimate_but_not_the_basic(env47, cooldown):
    units = [UnitSpec(slot=0, cls="M", x=5.0, y=5.0, cooldown=cooldown),
             UnitSpec(slot=1, cls="W", x=5.0, y=7.0, cooldown=cooldown),
             UnitSpec(slot=5, cls="R", x=5.9, y=6.0, cooldown=cooldown)]  # fmt: skip
    m = look(env47, author_state(map_id=0, units=units))
    for i in (0, 1, 5):
        assert not m.pair[i, :, 1].any()
        assert m.ultimate[i].tolist() == [True, False]
    assert m.pair[0, 6, 0]
    assert m.pair[1, 6, 0]
    assert m.pair[5, 6, 0]


@pytest.mark.parametrize("cls", "MWHRP")
def test_ranges_include_their_boundary(env47, cls):
    """Basic and Ultimate are legal at exactly their range and 1e-3 inside, not 1e-3 beyond.

    Units on one horizontal line at float32-exact x: the engine's distance is the range itself."""
    k = "_MWHRP".index(cls)
    slot, t = (1, 2) if k == PRIEST else (5, 6)  # the Priest acts on an ally
    for head, reach in ((0, BASIC_RANGE[k]), (1, ULT_RANGE[k])):
        if reach == 0.0:
            continue  # the Mage's Burst has no target
        for offset, legal in ((-1e-3, True), (0.0, True), (1e-3, False)):
            units = [UnitSpec(slot=0, cls=cls, x=5.0, y=5.0),
                     UnitSpec(slot=slot, cls="W", x=5.0 + reach + offset, y=5.0),
                     UnitSpec(slot=9, cls="W", x=18.0, y=9.0)]  # fmt: skip
            m = look(env47, author_state(map_id=0, units=units))
            assert bool(m.pair[0, t, head]) is legal, (head, reach, offset)


# --- the flat index, repair, sampling ------------------------------------------------------------
def test_flatten_and_unflatten_round_trip():
    heads = np.array(list(itertools.product(range(9), range(11), range(2))), np.int32)
    flat = np.asarray(flatten(jnp.asarray(heads)))
    np.testing.assert_array_equal(flat, (heads[:, 0] * 11 + heads[:, 1]) * 2 + heads[:, 2])
    np.testing.assert_array_equal(np.sort(flat), np.arange(198))
    np.testing.assert_array_equal(np.asarray(unflatten(jnp.asarray(flat))), heads)
    np.testing.assert_array_equal(np.asarray(flatten(unflatten(jnp.arange(198)))), np.arange(198))
    assert np.asarray(unflatten(jnp.asarray(197))).tolist() == [8, 10, 1]


def test_flat_actions_step_like_heads(env47, played):
    batch = played[-1]
    heads = jnp.stack([env47.sample_actions(jax.random.key(3), batch)[a] for a in env47.agents], 1)
    key = jax.random.key(0)
    _, s1, _r1, _, i1 = env47.step(key, batch, heads)
    _, s2, _r2, _, i2 = env47.step(key, batch, env47.flatten_actions(heads))
    chex_equal(s1, s2)
    chex_equal(i1["facts"], i2["facts"])


def chex_equal(a, b):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def repair_state():
    return author_state(map_id=0, units=[
        UnitSpec(slot=0, cls="W", x=5.0, y=5.0, stun=1),  # stunned, next to an enemy
        UnitSpec(slot=1, cls="M", x=5.0, y=7.0, cooldown=4),
        UnitSpec(slot=2, cls="H", x=5.0, y=2.0),
        UnitSpec(slot=5, cls="R", x=6.0, y=5.0)])  # fmt: skip


@pytest.mark.parametrize(
    ("slot", "requested", "accepted"),
    [
        (0, (3, 6, 0), (0, 0, 0)),  # stunned: the move and the Basic both repaired
        (1, (5, 0, 1), (5, 0, 0)),  # Burst on cooldown: the pair becomes (none, no), move kept
        (1, (4, 6, 1), (4, 0, 0)),  # a Mage's targeted Ultimate does not exist
        (1, (4, 6, 0), (4, 6, 0)),  # its Basic on the Rogue (2.24 away) is legal and kept
        (2, (7, 6, 1), (7, 0, 0)),  # Trap out of range (3.16 > 3): the whole pair, not just ult
        (2, (7, 6, 0), (7, 6, 0)),  # but the Basic reaches (3.5)
        (2, (1, 3, 0), (1, 0, 0)),  # a Hunter's Basic on an ally
        (2, (9, 6, 0), (0, 6, 0)),  # out-of-range move index -> stay, legal pair kept
        (2, (-1, 11, 2), (0, 0, 0)),  # out-of-range indices
        (5, (3, 6, 1), (3, 6, 1)),  # the Rogue's Poison on the stunned Warrior, 1.0 away
    ],
)
def test_repair_rule(step, slot, requested, accepted):
    actions = np.zeros((10, 3), np.int32)
    actions[slot] = requested
    _, _, facts = step(repair_state(), jnp.asarray(actions))
    assert np.asarray(facts.accepted[slot]).tolist() == list(accepted)
    assert np.asarray(facts.requested[slot]).tolist() == list(requested)
    assert bool(facts.move_rejected[slot]) == (requested[0] != accepted[0])
    assert bool(facts.combat_rejected[slot]) == (requested[1:] != accepted[1:])


def test_sampled_actions_are_always_legal(env47, played):
    key = jax.random.key(42)
    moves, pairs = set(), set()
    for batch in played[::2]:
        m = np_tree(env47.action_masks(batch))
        for _ in range(5):
            key, k = jax.random.split(key)
            sample = env47.sample_actions(k, batch)
            a = np.stack([np.asarray(sample[agent]) for agent in env47.agents], 1)
            g, i = np.indices(a.shape[:2])
            assert m.move[g, i, a[..., 0]].all()
            assert m.pair[g, i, a[..., 1], a[..., 2]].all()
            moves.update(a[..., 0].ravel().tolist())
            pairs.update(map(tuple, a[..., 1:].reshape(-1, 2).tolist()))
    assert moves == set(range(9))
    assert len(pairs) > 10  # abilities get sampled, not only (none, no)
    # Same key, same actions.
    a1 = env47.sample_actions(jax.random.key(1), played[-1])
    a2 = env47.sample_actions(jax.random.key(1), played[-1])
    chex_equal(a1, a2)


def test_sampled_actions_are_uniform_over_the_legal_choices(env47, played):
    # Chi-square over every agent with several legal choices: the move, and the (target,
    # ultimate) pair, each uniform over its legal set and drawn independently of the other.
    batch = played[-1]
    masks = np_tree(env47.action_masks(batch))
    draws = 400
    keys = jax.random.split(jax.random.key(7), draws)
    sample = jax.jit(jax.vmap(lambda k: env47.stack(env47.sample_actions(k, batch))))
    a = np.asarray(sample(keys))  # [draws, B, 10, 3]
    pair_index = a[..., 1] * 2 + a[..., 2]
    legal_pairs = masks.pair.reshape(*masks.pair.shape[:2], -1)
    checked = 0
    for legal, chosen in ((masks.move, a[..., 0]), (legal_pairs, pair_index)):
        statistic, dof = 0.0, 0
        for g, i in zip(*np.nonzero(legal.sum(-1) >= 3), strict=True):
            options = np.flatnonzero(legal[g, i])
            counts = np.array([(chosen[:, g, i] == o).sum() for o in options])
            assert counts.sum() == draws  # never an illegal choice
            expected = draws / len(options)
            statistic += float(((counts - expected) ** 2 / expected).sum())
            dof += len(options) - 1
            checked += 1
        assert stats.chi2.sf(statistic, dof) > 1e-4, (statistic, dof)
    assert checked > 20
    # Independent heads: a move and a pair drawn together are not correlated.
    g, i = np.argwhere((masks.move.sum(-1) == 9) & (legal_pairs.sum(-1) >= 2))[0]
    table = np.zeros((9, legal_pairs.shape[-1]))
    np.add.at(table, (a[:, g, i, 0], pair_index[:, g, i]), 1)
    table = table[:, table.sum(0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-4
