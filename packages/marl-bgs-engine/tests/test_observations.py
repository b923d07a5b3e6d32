"""Observations: structured views and the flat vector hold only what each agent may know, in its
own frame (spawn on the left), role-relative (rows 0-4 own team, 5-9 enemies), with the last
actions of visible agents renamed into the agent's naming; public context; the critic's global
state; messages one tick late to teammates only.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs import UnitSpec, author_state, batch_states
from marl_bgs.tdm.views import agent_views, flat_views, flatten_view, view_field_names


def first(tree, game: int = 0):
    return jax.tree.map(lambda a: np.asarray(a[game]), tree)


def view_of(env, state):
    """Views of one game [10, ...] through the batched public API."""
    return first(env.views(batch_states([state] * env.num_envs)))


def blocks(message_dim: int = 0) -> dict[str, slice]:
    """Where each field sits in the flat vector."""
    out, start = {}, 0
    for name, width in view_field_names(message_dim):
        out[name] = slice(start, start + width)
        start += width
    return out


def unit_fields(units) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in vars(units).items()}


# --- only permitted information ------------------------------------------------------------------
def test_hidden_rows_are_all_zero(env47, played):
    checked = 0
    for state in played:
        v = env47.views(state)
        hidden = np.asarray(v.units.visible) == 0  # [B, 10 agents, 10 rows]
        for name, leaf in unit_fields(v.units).items():
            assert not np.any(leaf[hidden]), name
        # The source table says nothing about hidden rows either.
        seen_by = np.asarray(v.seen_by)  # [B, 10, 5, 10]
        assert not np.any(np.swapaxes(seen_by, -1, -2)[hidden])
        checked += int(hidden.sum())
    assert checked > 100  # plenty of hidden rows were checked


def test_flat_vector_is_the_flattened_view(env47, played):
    names = view_field_names(0)
    assert sum(w for _, w in names) == env47.obs_size
    assert env47.observation_space("a_0").shape == (env47.obs_size,)
    for state in played[::3]:
        flat = np.asarray(env47.observe(state))
        assert flat.shape == (env47.num_envs, 10, env47.obs_size)
        np.testing.assert_array_equal(flat, np.asarray(flatten_view(env47.views(state))))
        obs = env47.get_obs(state)
        assert list(obs) == list(env47.agents)
        for i, agent in enumerate(env47.agents):
            np.testing.assert_array_equal(np.asarray(obs[agent]), flat[:, i])


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("full", [False, True])
def test_fast_flat_path_is_the_flattened_structured_view(played, shared, full):
    # `flat_views` builds the vector from dense blocks; it must equal flattening the views.
    # Bit for bit, except that the distances (sqrt(dx^2 + dy^2)) may differ in the last bit:
    # the two programs fuse them differently, and a compiler may contract one sum into a fused
    # multiply-add (XLA's CPU loop emitters, which the test sessions use, do).
    fast = jax.jit(jax.vmap(lambda s: flat_views(s, shared, full)))
    slow = jax.jit(jax.vmap(lambda s: flatten_view(agent_views(s, shared, full))))
    offsets = np.cumsum([0] + [w for _, w in view_field_names(0)])
    at = [name for name, _ in view_field_names(0)].index("units.distance")
    distance = np.zeros(offsets[-1], bool)
    distance[offsets[at] : offsets[at + 1]] = True
    for state in played[1::4]:
        got, want = np.asarray(fast(state)), np.asarray(slow(state))
        np.testing.assert_array_equal(got[..., ~distance], want[..., ~distance])
        np.testing.assert_array_max_ulp(got[..., distance], want[..., distance], maxulp=1)


def test_flat_blocks_match_their_fields(env47, played):
    state = played[-1]
    flat = np.asarray(env47.observe(state))
    v = env47.views(state)
    b = blocks()
    for name in ("units.x", "units.health", "units.visible", "public.score", "seen_by"):
        obj = v
        for part in name.split("."):
            obj = getattr(obj, part)
        want = np.asarray(obj).reshape(env47.num_envs, 10, -1)
        np.testing.assert_array_equal(flat[..., b[name]], want, err_msg=name)


def test_observations_lie_in_the_observation_space(env47, played):
    for state in played:
        obs = env47.get_obs(state)
        for agent in env47.agents:
            space = env47.observation_space(agent)
            assert bool(space.contains(obs[agent])), agent
            assert obs[agent].dtype == jnp.float32


def test_views_never_name_teams(env47, played, tools):
    """Relabelling team A as team B (and mirroring, or swapping spawn ends) changes no view."""
    state = played[-1]
    for game in range(env47.num_envs):
        one = jax.tree.map(lambda a, g=game: a[g], state)
        for mirror in (False, True):
            other = tools.relabel(one, tools.TEAM_SWAP, mirror)
            v1, v2 = view_of(env47, one), view_of(env47, other)
            # Agent k of the relabelled game is agent TEAM_SWAP[k] of the original.
            for name, leaf in unit_fields(v1.units).items():
                np.testing.assert_allclose(
                    unit_fields(v2.units)[name], leaf[tools.TEAM_SWAP], atol=2e-5, err_msg=name
                )
            np.testing.assert_array_equal(v2.seen_by, v1.seen_by[tools.TEAM_SWAP])
            for name in ("score", "team_size", "wave_countdown", "roster_class", "roster_alive",
                         "spawn_pads", "self_slot", "tick"):  # fmt: skip
                np.testing.assert_array_equal(
                    getattr(v2.public, name), getattr(v1.public, name)[tools.TEAM_SWAP], name
                )


# --- frames and naming ---------------------------------------------------------------------------
def frame_state():
    # Open map 0. A's Mage (6, 5) and Warrior (6, 3); B's Warrior (12, 5) and Rogue (11, 3).
    return author_state(
        map_id=0,
        units=[
            UnitSpec(slot=0, cls="M", x=6.0, y=5.0, last_move=0, last_target=0, last_ult=1),
            UnitSpec(slot=1, cls="W", x=6.0, y=3.0, last_move=3, last_target=7),  # B's Rogue
            UnitSpec(slot=5, cls="W", x=12.0, y=5.0, last_move=4, last_target=6),  # A's Mage
            UnitSpec(slot=6, cls="R", x=11.0, y=3.0, last_move=5, last_target=7, last_ult=1),
        ],
    )


def test_positions_are_in_the_agents_own_frame(env47):
    v = view_of(env47, frame_state())
    u = v.units
    # Team A (left): the world frame. Rows 0-4 own slots, 5-9 enemy slots.
    assert u.x[0, [0, 1, 5, 6]].tolist() == pytest.approx([6.0, 6.0, 12.0, 11.0])
    assert u.dx[0, [1, 5, 6]].tolist() == pytest.approx([0.0, 6.0, 5.0])
    # Team B (right): x mirrored, so its own spawn is on the left and enemies lie east.
    assert u.x[5, [0, 1, 5, 6]].tolist() == pytest.approx([8.0, 9.0, 14.0, 14.0])
    assert u.y[5, [0, 1, 5, 6]].tolist() == pytest.approx([5.0, 3.0, 5.0, 3.0])
    assert u.dx[5, [1, 5, 6]].tolist() == pytest.approx([1.0, 6.0, 6.0])
    assert u.dy[5, [1, 5, 6]].tolist() == pytest.approx([-2.0, 0.0, -2.0])
    # Its enemy A Warrior (row 6), 6.32 away, is seen through its Rogue only.
    assert u.visible[5, 6] == 1
    assert u.seen_directly[5, 6] == 0
    assert u.distance[5, 6] == pytest.approx(np.hypot(6.0, 2.0))
    # The same state with team A on the right edge: A's views are mirrored the same way.
    swapped = author_state(
        map_id=0, swap=True,
        units=[UnitSpec(slot=0, cls="M", x=14.0, y=5.0), UnitSpec(slot=5, cls="W", x=8.0, y=5.0)],
    )  # fmt: skip
    w = view_of(env47, swapped).units
    assert w.x[0, [0, 5]].tolist() == pytest.approx([6.0, 12.0])
    assert w.x[5, [0, 5]].tolist() == pytest.approx([8.0, 14.0])


def test_rows_are_role_relative(env47):
    v = view_of(env47, frame_state())
    u = v.units
    # Rows 0-4 are the agent's own team (self flagged), 5-9 the enemies, for either team.
    assert u.is_self[0].tolist() == [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    assert u.is_self[6].tolist() == [0, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    assert u.is_ally[0, [0, 1, 5, 6]].tolist() == [1, 1, 0, 0]
    assert u.is_ally[5, [0, 1, 5, 6]].tolist() == [1, 1, 0, 0]
    classes = u.class_onehot.argmax(-1) + 1
    assert classes[0, [0, 1, 5, 6]].tolist() == [1, 2, 2, 4]  # M W | W R
    assert classes[5, [0, 1, 5, 6]].tolist() == [2, 4, 1, 2]  # W R | M W
    assert v.public.roster_class[5].tolist() == [2, 4, 0, 0, 0, 1, 2, 0, 0, 0]
    assert v.public.self_slot[6].tolist() == [0, 1, 0, 0, 0]


def test_last_actions_are_renamed_and_mirrored_into_the_agents_frame(env47):
    v = view_of(env47, frame_state())
    u = v.units
    target = u.last_target.argmax(-1)
    move = u.last_move.argmax(-1)
    # A's Mage (agent 0): B's Warrior (row 5) targeted it, i.e. own slot 0 -> index 1; B's Rogue
    # (row 6) targeted A's Warrior, own slot 1 -> index 2; A's Warrior targeted enemy slot 1 -> 7.
    assert target[0, [0, 1, 5, 6]].tolist() == [0, 7, 1, 2]
    assert move[0, [0, 1, 5, 6]].tolist() == [0, 3, 4, 5]  # world frame = A's frame
    assert u.last_ultimate[0, [0, 1, 5, 6]].tolist() == [1, 0, 0, 1]
    # A's Warrior (agent 1): the Warrior of B targeted its ally, own slot 0 -> index 1.
    assert target[1, 5] == 1
    # B's Warrior (agent 5), in its mirrored frame: it moved west in the world = east (3) for it,
    # and targeted enemy slot 0 -> 6; its Rogue moved northeast = northwest (6) for it and
    # targeted enemy slot 1 -> 7; A's Warrior (its row 6) moved east = west (4), targeting the
    # Rogue, own slot 1 -> index 2.
    assert target[5, [0, 1, 5, 6]].tolist() == [6, 7, 0, 2]
    assert move[5, [0, 1, 5, 6]].tolist() == [3, 6, 0, 4]
    # Rows the agent cannot see (the unused slots here) carry no last action.
    hidden = u.visible == 0
    assert not u.last_move[hidden].any()
    assert not u.last_target[hidden].any()


def test_last_actions_after_a_step_are_what_was_accepted(env47, step):
    state = frame_state()
    # A's Mage uses Burst and walks northeast; B's Warrior walks northeast (own frame); B's Rogue
    # asks for an illegal Basic on A's Mage (5.39 away): repaired to none.
    actions = np.zeros((10, 3), np.int32)
    actions[0] = (5, 0, 1)
    actions[5] = (5, 0, 0)
    actions[6] = (0, 6, 0)
    nxt, _, _ = step(state, jnp.asarray(actions))
    u = view_of(env47, nxt).units
    assert u.last_move[0, 0].argmax() == 5
    assert u.last_ultimate[0, 0] == 1
    assert u.last_move[0, 5].argmax() == 6  # B's northeast is A's northwest
    assert u.last_move[5, 0].argmax() == 5  # and its own northeast
    assert u.last_target[0, 6].argmax() == 0  # the repaired pair, not the request


# --- public context ------------------------------------------------------------------------------
def test_public_context_own_team_first(env47):
    state = author_state(
        map_id=9,  # four walls, two rotated +45 and two -45 degrees; 28 empty obstacle slots
        units=[UnitSpec(slot=0, cls="M", x=1.0, y=1.0), UnitSpec(slot=1, cls="W", x=1.0, y=3.0),
               UnitSpec(slot=3, cls="P", x=1.0, y=7.0), UnitSpec(slot=5, cls="R", x=19.0, y=1.0),
               UnitSpec(slot=7, cls="H", x=19.0, y=5.0)],
        score=(3, 7), tick=42, wave=(1, 3), winning_score=15, tick_limit=200, red_zone_depth=4.0,
        wave_period=6, shield_ticks=2,
    )  # fmt: skip
    p = view_of(env47, state).public
    for agent, own_first in ((0, True), (7, False)):
        assert p.tick[agent] == 42
        assert p.tick_limit[agent] == 200
        assert p.winning_score[agent] == 15
        assert p.red_zone_depth[agent] == 4.0
        assert p.wave_period[agent] == 6
        assert p.shield_ticks[agent] == 2
        order = slice(None) if own_first else slice(None, None, -1)
        assert p.score[agent].tolist() == [3, 7][order]
        assert p.team_size[agent].tolist() == [3, 2][order]
        assert p.wave_countdown[agent].tolist() == [1, 3][order]
        assert p.roster_alive[agent].sum() == 5
        pads = p.spawn_pads[agent]
        assert pads[:5].tolist() == [[0.5, 1.0], [0.5, 3.0], [0.5, 5.0], [0.5, 7.0], [0.5, 9.0]]
        assert pads[5:].tolist() == [
            [19.5, 1.0],
            [19.5, 3.0],
            [19.5, 5.0],
            [19.5, 7.0],
            [19.5, 9.0],
        ]
    assert p.roster_class[0].tolist() == [1, 2, 0, 5, 0, 4, 0, 3, 0, 0]
    assert p.roster_class[7].tolist() == [4, 0, 3, 0, 0, 1, 2, 0, 5, 0]


def test_obstacles_in_the_agents_own_frame(env47):
    spec = marl_bgs.maps.load(9)
    state = author_state(map_id=9, units=[UnitSpec(slot=0, cls="M", x=1.0, y=1.0),
                                          UnitSpec(slot=5, cls="R", x=19.0, y=1.0)])  # fmt: skip
    p = view_of(env47, state).public
    n = len(spec.obstacles)
    world_x = np.array([o["x"] for o in spec.obstacles])
    theta = np.array([o["theta"] for o in spec.obstacles])
    assert p.obstacle_kind[0, :n].tolist() == [2] * n
    assert not p.obstacle_kind[0, n:].any()
    np.testing.assert_allclose(p.obstacle_center[0, :n, 0], world_x, atol=1e-6)
    np.testing.assert_allclose(p.obstacle_center[5, :n, 0], 20.0 - world_x, atol=1e-6)
    np.testing.assert_allclose(p.obstacle_center[5, :, 1], p.obstacle_center[0, :, 1])
    np.testing.assert_allclose(p.obstacle_theta[0, :n], theta, atol=1e-6)
    np.testing.assert_allclose(p.obstacle_theta[5, :n], -theta, atol=1e-6)
    np.testing.assert_array_equal(p.obstacle_size[5], p.obstacle_size[0])
    for name in ("obstacle_center", "obstacle_size", "obstacle_theta"):
        assert not np.any(getattr(p, name)[:, n:]), name  # padded slots are zeros
    # Map 9 mirrors, so B sees the same set of obstacles as A (listed in another order).
    mine = {(round(float(x), 4), round(float(t), 4)) for x, t in
            zip(p.obstacle_center[0, :n, 0], p.obstacle_theta[0, :n], strict=True)}  # fmt: skip
    theirs = {(round(float(x), 4), round(float(t), 4)) for x, t in
              zip(p.obstacle_center[5, :n, 0], p.obstacle_theta[5, :n], strict=True)}  # fmt: skip
    assert mine == theirs


# --- the critic's global state -------------------------------------------------------------------
def test_global_state_shows_every_unit(env47):
    state = author_state(
        map_id=47,
        units=[UnitSpec(slot=0, cls="M", x=1.0, y=1.0),
               UnitSpec(slot=4, cls="P", x=3.0, y=9.0, alive=False, health=0.0),
               UnitSpec(slot=5, cls="R", x=18.5, y=5.0), UnitSpec(slot=6, cls="W", x=15.0, y=9.0)],
    )  # fmt: skip
    batch = batch_states([state] * env47.num_envs)
    g = np.asarray(env47.global_state(batch))[0]
    o = np.asarray(env47.observe(batch))[0]
    b = blocks()
    assert g.shape == o.shape == (10, env47.obs_size)
    assert g[0, b["units.visible"]].tolist() == [1, 0, 0, 0, 1, 1, 1, 0, 0, 0]
    assert o[0, b["units.visible"]].tolist() == [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    assert g[0, b["units.x"]][[5, 6]].tolist() == pytest.approx([18.5, 15.0])
    assert g[5, b["units.x"]][[0, 1, 5, 9]].tolist() == pytest.approx([1.5, 5.0, 19.0, 17.0])
    assert g[0, b["units.alive"]][[0, 4, 5]].tolist() == [1, 0, 1]
    assert g[0, b["units.health"]][[5, 6]].tolist() == [100.0, 200.0]


# --- messages ------------------------------------------------------------------------------------
def test_messages_reach_teammates_one_tick_late_and_never_enemies():
    env = marl_bgs.make("tdm", map_id=47, num_envs=4, message_dim=4)
    assert env.obs_size == sum(w for _, w in view_field_names(4))
    key = jax.random.key(0)
    units = [UnitSpec(slot=i, cls="MWHRP"[i % 5], x=0.5 if i < 5 else 19.5, y=1.0 + 2 * (i % 5))
             for i in range(10)]  # fmt: skip
    state = batch_states([author_state(map_id=47, units=units, message_dim=4)] * 4)
    assert not np.asarray(env.views(state).messages).any()
    sent = jnp.arange(4 * 10 * 4, dtype=jnp.float32).reshape(4, 10, 4) + 1.0
    actions = jnp.zeros((4, 10, 3), jnp.int32)
    obs, nxt, *_ = env.step(key, state, actions, messages=sent)
    got = np.asarray(env.views(nxt).messages)  # [4, 10 agents, 5 teammates, 4]
    for agent in range(10):
        team = slice(0, 5) if agent < 5 else slice(5, 10)
        np.testing.assert_array_equal(got[:, agent], np.asarray(sent)[:, team])
    # Enemies' messages appear nowhere in an agent's flat observation.
    flat = np.asarray(obs["a_0"])
    b = blocks(4)
    np.testing.assert_array_equal(flat[:, b["messages"]], np.asarray(sent)[:, :5].reshape(4, -1))
    enemy_values = set(np.asarray(sent)[:, 5:].ravel().tolist())
    assert not enemy_values & set(np.asarray(obs["a_0"])[:, b["messages"]].ravel().tolist())
    # Sent at t, read at t + 1 only: a tick without messages delivers none.
    _, later, *_ = env.step(key, nxt, actions)
    assert not np.asarray(env.views(later).messages).any()
    with pytest.raises(marl_bgs.ConfigError, match="messages"):
        env.step(key, nxt, actions, messages=jnp.zeros((4, 10, 3)))
