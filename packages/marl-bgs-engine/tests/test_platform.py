"""The engine as a platform: the mode registry and protocol, start-state pools (weights, authored
snapshots, curriculum stages, obstacles switched off), reward functions, truncation, the team
contract (team inputs, policies, the two-team step) and the opponent-folded env."""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import marl_bgs
from marl_bgs import ConfigError, UnitSpec, author_state, batch_states
from marl_bgs.core import env as env_module
from marl_bgs.core import pool as pools
from marl_bgs.core.mode import Mode
from marl_bgs.core.registry import ALIASES, MODES, register
from marl_bgs.core.team import act_teams, team_inputs
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.perception import perceive
from marl_bgs.tdm.start import with_active_obstacles
from marl_bgs.tdm.testing import slot_actions
from marl_bgs.tdm.transition import transition

U = UnitSpec


# --- registry and protocol ------------------------------------------------------------------------
def test_every_registered_mode_meets_the_protocol():
    assert ALIASES["tdm"] in MODES
    for mode_id, build in MODES.items():
        env = build(num_envs=2)
        assert isinstance(env.mode, Mode)
        assert env.spec.id == mode_id
        assert env.agents == env.spec.agents
        assert sorted(s for team in env.spec.teams for s in team) == list(range(env.num_agents))
        assert hash(env.mode) == hash(build(num_envs=3).mode)  # static settings: one program


def test_registering_another_builder_under_a_taken_id_is_refused():
    with pytest.raises(ConfigError, match=r"^mode: 'tdm-v2' is already registered"):
        register("tdm-v2", lambda **kw: None)  # type: ignore[arg-type,return-value]


def test_tdm_spec():
    spec = marl_bgs.make("tdm").spec
    assert (spec.id, spec.num_agents, spec.team_size) == ("tdm-v2", 10, 5)
    assert spec.action_heads == (9, 11, 2)
    assert spec.num_actions == 198
    assert spec.obs_size == spec.state_size == 859
    assert marl_bgs.make("tdm", message_dim=3).spec.obs_size == 859 + 5 * 3


# --- pools ----------------------------------------------------------------------------------------
def _map_counts(env, pool, draws: int) -> np.ndarray:
    games = jnp.arange(draws)
    draw = jax.jit(jax.vmap(lambda g: pools.draw(jax.random.key(3), pool, g, jnp.int32(0), "none")))
    ids = np.asarray(draw(games).map_id)
    return np.array([np.sum(ids == m.id) for m in env.maps])


def test_weighted_pools_draw_by_weight():
    env = marl_bgs.make("tdm", map_id=[47, 48, 49], num_envs=2, weights=[0.6, 0.3, 0.1])
    counts = _map_counts(env, env.pool, 4000)
    assert stats.chisquare(counts, 4000 * np.array([0.6, 0.3, 0.1])).pvalue > 1e-3
    never = marl_bgs.make("tdm", map_id=[47, 48], num_envs=2, weights=[1.0, 0.0])
    assert _map_counts(never, never.pool, 500).tolist() == [500, 0]


@pytest.mark.parametrize("weights", [[1.0], [1.0, -1.0], [0.0, 0.0], [1.0, float("nan")], "x"])
def test_bad_weights_name_the_field(weights):
    with pytest.raises(ConfigError, match=r"^weights: expected 2 finite non-negative weights"):
        marl_bgs.make("tdm", map_id=[47, 48], weights=weights)


def _snapshot(x: float, score: tuple[int, int]) -> marl_bgs.GameState:
    units = [U(slot=0, cls="W", x=x, y=5.0), U(slot=5, cls="R", x=x + 1.5, y=5.0, health=30)]
    return author_state(map_id=47, units=units, score=score)


PROGRAMS = ("_step", "_observe", "_masks", "_sample", "_reset", "_reset_done")


def test_a_pool_of_authored_snapshots_without_a_new_program(env47):
    """The step never depends on the pool; resets compile once per pool size (a shape)."""
    key = jax.random.key(0)
    first = marl_bgs.make_pool(batch_states([_snapshot(4.6, (1, 1)), _snapshot(5.4, (2, 0))]))
    _, state = env47.reset(key, pool=first)
    env47.step(key, state, env47.sample_actions(key, state))
    env47.reset_done(key, state, pool=first)
    before = {n: getattr(env_module, n)._cache_size() for n in PROGRAMS}
    snaps = [_snapshot(5.0, (3, 4)), _snapshot(9.0, (0, 0))]
    pool = marl_bgs.make_pool(batch_states(snaps), weights=[1.0, 3.0])
    _, state = env47.reset(jax.random.key(1), pool=pool)
    xs = np.asarray(state.units.pos[:, 0, 0])
    assert set(xs.tolist()) <= {5.0, 9.0}
    scores = {5.0: [3, 4], 9.0: [0, 0]}
    for g in range(env47.num_envs):
        assert np.asarray(state.score[g]).tolist() == scores[float(xs[g])]
    finished = state.replace(outcome=jnp.full_like(state.outcome, 3))
    _, again = env47.reset_done(jax.random.key(2), finished, pool=pool)
    assert np.asarray(again.episode).tolist() == [1] * env47.num_envs
    _, nxt, _, _, _ = env47.step(key, again, env47.sample_actions(key, again))
    env47.reset_done(key, nxt, pool=pool)
    assert {n: getattr(env_module, n)._cache_size() for n in before} == before


def test_curriculum_stages_concatenate_with_their_own_rules():
    easy = marl_bgs.make("tdm", map_id=47, rosters=("MW", "MW"), winning_score=3)
    hard = marl_bgs.make("tdm", map_id=48, winning_score=20)
    stages = marl_bgs.concat_pools([easy.pool, hard.pool], weights=[0.25, 0.75])
    assert stages.size == 2
    np.testing.assert_allclose(np.asarray(stages.weights), [0.25, 0.75])
    env = marl_bgs.BatchedEnv(easy.mode, stages, num_envs=64)
    _, state = env.reset(jax.random.key(0))
    scores = np.asarray(state.rules.winning_score)
    sizes = np.asarray((state.units.class_id[:, :5] > 0).sum(1))
    assert set(zip(scores.tolist(), sizes.tolist(), strict=True)) == {(3, 2), (20, 5)}


def test_inactive_obstacles_block_neither_sight_nor_bodies():
    # Wall 14 of map 47 (x 7.75 to 8.25, y 4.25 to 5.75) stands between the two units.
    state = author_state(
        map_id=47, units=[U(slot=0, cls="H", x=6.6, y=5.0), U(slot=5, cls="H", x=9.4, y=5.0)]
    )
    assert not bool(perceive(state).clear[0, 5])
    active = np.asarray(state.obstacles.active).copy()
    active[14] = False
    opened = with_active_obstacles(state, active)
    assert bool(perceive(opened).clear[0, 5])
    assert not bool(opened.obstacles.active[14])
    assert bool(opened.obstacles.active[15])
    assert int(marl_bgs.make("tdm").mode.views(opened).public.obstacle_kind[0, 14]) == 0
    walk = jnp.zeros((10, 3), jnp.int32).at[0, 0].set(3)  # east, into the wall's place
    mode = marl_bgs.make("tdm").mode
    blocked, _ = mode.transition(state, walk, None)
    free, _ = mode.transition(opened, walk, None)
    assert float(blocked.units.pos[0, 0]) <= 7.25 + 1e-3
    assert float(free.units.pos[0, 0]) == pytest.approx(7.6)


# --- rewards and truncation -----------------------------------------------------------------------
def damage_reward(state, next_state, facts):
    """Shaped: damage dealt minus damage taken, per agent."""
    del state, next_state
    return jnp.sum(facts.damage, -1) - jnp.sum(facts.damage, -2)


def test_a_reward_function_shapes_rewards_and_nothing_else(env47, played):
    shaped = marl_bgs.make("tdm", map_id=47, num_envs=env47.num_envs, reward_fn=damage_reward)
    key = jax.random.key(4)
    for batch in played[::3]:
        actions = env47.sample_actions(key, batch)
        _, a, _ra, _, _ia = env47.step(key, batch, actions)
        _, b, rb, _, ib = shaped.step(key, batch, actions)
        jax.tree.map(np.testing.assert_array_equal, a, b)
        expected = damage_reward(None, None, ib["facts"])
        got = np.stack([np.asarray(rb[x]) for x in shaped.agents], 1)
        running = np.asarray(batch.outcome == 0)[:, None]
        np.testing.assert_allclose(got, np.where(running, expected, 0.0), rtol=1e-6, atol=1e-5)


def test_truncation_is_reported_apart_from_termination(step):
    env = marl_bgs.make("tdm", map_id=47, num_envs=2, tick_limit=2)
    key = jax.random.key(0)
    _, state = env.reset(key)
    for _t in range(2):
        _, state, _, done, info = env.step(key, state, jnp.zeros((2, 10, 3), jnp.int32))
    assert np.asarray(done["__all__"]).all()
    assert np.asarray(info["truncated"]).all()
    # A kill at 19 : 0 ends the game by the winning score: done, not truncated.
    units = [U(slot=3, cls="R", x=5.0, y=5.0), U(slot=7, cls="R", x=6.0, y=5.0, health=1.0)]
    won = author_state(map_id=47, units=units, score=(19, 0))
    kill = jnp.zeros((10, 3), jnp.int32).at[3, 1].set(8)
    nxt, _, _ = step(won, kill)
    assert int(nxt.outcome) == 1
    assert not bool(env.mode.truncated(nxt))


# --- the team contract ----------------------------------------------------------------------------
def test_team_inputs_are_the_team_slices(env47, played):
    state = played[5]
    a, b = team_inputs(env47, state)
    obs = env47.observe(state)
    np.testing.assert_array_equal(a.obs, obs[:, :5])
    np.testing.assert_array_equal(b.obs, obs[:, 5:])
    np.testing.assert_array_equal(b.masks.pair, env47.action_masks(state).pair[:, 5:])
    np.testing.assert_array_equal(a.views.public.tick, env47.views(state).public.tick[:, :5])


def counting_policy(mode):
    """Idle, but remembers how many ticks it has acted (memory per game)."""
    idle = marl_bgs.idle_policy(mode)

    def act(keys, memory, inputs):
        actions, _ = idle.act(keys, (), inputs)
        return actions, memory + 1

    return marl_bgs.Policy(name="counter", act=act, init=lambda key: jnp.int32(0))


def test_two_team_step_under_scan_equals_explicit_steps(env47):
    policies = [marl_bgs.random_policy(env47.mode), counting_policy(env47.mode)]
    step = marl_bgs.team_step(env47, policies)
    n = env47.num_envs

    def keys(t):
        base = jax.random.fold_in(jax.random.key(8), t)
        return [jax.random.split(jax.random.fold_in(base, team), n) for team in (0, 1)]

    _, start = env47.reset(jax.random.key(7))
    memories = (jnp.zeros((n,)), jnp.zeros((n,), jnp.int32))

    @jax.jit
    def rollout(state, memories):
        def body(carry, t):
            out = step(carry[0], carry[1], keys(t))
            return (out.state, out.memories), out.actions

        return jax.lax.scan(body, (state, memories), jnp.arange(5))

    (final, (_, count)), actions = rollout(start, memories)
    assert np.asarray(count).tolist() == [5] * n
    assert np.all(np.asarray(actions[:, :, 5:]) == 0)  # the idle team
    state, mems = start, memories
    for t in range(5):
        inputs = team_inputs(env47, state)
        acts, mems = act_teams(env47.spec, policies, keys(t), mems, inputs)
        np.testing.assert_array_equal(acts, actions[t])
        _, state, _, _, _ = env47.step(None, state, acts)
    jax.tree.map(np.testing.assert_array_equal, state, final)


def test_a_policy_with_wrong_action_shapes_is_named(env47):
    bad = marl_bgs.Policy(name="bad", act=lambda k, m, i: (jnp.zeros((2, 5, 3)), m))
    step = marl_bgs.team_step(env47, [bad, marl_bgs.idle_policy(env47.mode)])
    _, state = env47.reset(jax.random.key(0))
    keys = [jax.random.split(jax.random.key(0), env47.num_envs)] * 2
    with pytest.raises(ConfigError, match=r"^policy 'bad': actions must have shape \(4, 5, 3\)"):
        step(state, ((), ()), keys)


# --- the opponent-folded env ----------------------------------------------------------------------
def test_opponent_env_plays_the_other_team_and_carries_its_memory(env47):
    env = marl_bgs.OpponentEnv(env47, counting_policy(env47.mode), team=0)
    assert env.agents == ("a_0", "a_1", "a_2", "a_3", "a_4")
    obs, state = env.reset(jax.random.key(0))
    assert set(obs) == set(env.agents)
    assert obs["a_0"].shape == (4, 859)
    step = jax.jit(env.step)
    for t in range(3):
        key = jax.random.key(t)
        actions = env.sample_actions(key, state)
        obs, state, reward, done, info = step(key, state, actions)
        assert set(reward) == set(env.agents)
        assert "__all__" in done
        assert np.all(np.asarray(info["facts"].requested[:, 5:]) == 0)  # the idle opponent
        mine = np.stack([np.asarray(actions[a]) for a in env.agents], 1)
        np.testing.assert_array_equal(np.asarray(info["facts"].requested[:, :5]), mine)
    assert np.asarray(state.memory).tolist() == [3] * 4
    ended = state.replace(game=state.game.replace(outcome=state.game.outcome.at[1].set(3)))
    _, restarted = env.reset_done(jax.random.key(9), ended)
    assert np.asarray(restarted.memory).tolist() == [3, 0, 3, 3]


def test_opponent_env_for_team_b():
    base = marl_bgs.make("tdm", map_id=47, num_envs=2)
    env = marl_bgs.OpponentEnv(base, marl_bgs.random_policy(base.mode), team=1)
    assert env.agents == ("b_0", "b_1", "b_2", "b_3", "b_4")
    _, state = env.reset(jax.random.key(0))
    zeros = {a: jnp.zeros((2, 3), jnp.int32) for a in env.agents}
    _, _, _, _, info = env.step(jax.random.key(1), state, zeros)
    assert np.all(np.asarray(info["facts"].requested[:, 5:]) == 0)
    with pytest.raises(ConfigError, match=r"^actions: .*missing agent\(s\) \['b_4'\]"):
        env.step(jax.random.key(1), state, {a: zeros[a] for a in env.agents[:4]})


@dataclass  # compared by value, so unhashable: the env compiles the opponent's act on its own
class _StandStill:
    name: str = "stand-still"

    def act(self, keys, memory, inputs):
        return jnp.zeros((*inputs.obs.shape[:2], 3), jnp.int32), memory

    def init(self, key):
        return ()


def test_an_unhashable_opponent_policy_plays_too():
    base = marl_bgs.make("tdm", map_id=47, num_envs=2)
    env = marl_bgs.OpponentEnv(base, _StandStill(), team=1)
    _, state = env.reset(jax.random.key(0))
    moves = {a: jnp.ones((2, 3), jnp.int32).at[:, 1:].set(0) for a in env.agents}  # north
    for t in range(2):
        _, state, _, _, info = env.step(jax.random.key(t), state, moves)
        assert np.all(np.asarray(info["facts"].requested[:, :5]) == 0)  # the opponent stood
        assert np.all(np.asarray(info["facts"].requested[:, 5:, 0]) == 1)


# --- one owner per fact ---------------------------------------------------------------------------
def test_red_zone_deaths_are_the_two_point_deaths(env47, played):
    key = jax.random.key(12)
    seen = 0
    for batch in played:
        _, _, _, _, info = env47.step(key, batch, env47.sample_actions(key, batch))
        f = info["facts"]
        np.testing.assert_array_equal(f.red_zone_death, f.died & (f.death_points == 2))
        seen += int(np.asarray(f.died).sum())
    assert seen > 0


def test_charge_and_poison_stun_for_their_own_durations(monkeypatch):
    """Each stun reads its own duration from the class table (both are 1 tick in the paper)."""
    monkeypatch.setattr(C, "CHARGE_STUN_TICKS", 2)
    monkeypatch.setattr(C, "POISON_STUN_TICKS", 3)
    units = [
        U(slot=1, cls="W", x=5.0, y=8.0), U(slot=3, cls="R", x=5.0, y=3.0),
        U(slot=7, cls="H", x=6.2, y=3.0), U(slot=8, cls="H", x=9.0, y=8.0),
    ]  # fmt: skip
    state = author_state(map_id=0, units=units)
    with jax.disable_jit():
        nxt, facts = transition(state, slot_actions(ult={1: 8, 3: 7}))
    assert bool(facts.ultimate_used[1])
    assert bool(facts.ultimate_used[3])
    assert int(nxt.units.stun[8]) == 2  # charged
    assert int(nxt.units.stun[7]) == 3  # poisoned


# --- bad input ------------------------------------------------------------------------------------
def test_pools_of_another_shape_are_refused(env47):
    wide = marl_bgs.make("tdm", map_id=47, message_dim=2)  # its states carry messages [10, 2]
    with pytest.raises(ConfigError, match=r"^pool: its start states do not match this env's"):
        env47.reset(jax.random.key(0), pool=wide.pool)
    with pytest.raises(ConfigError, match=r"^pool: expected a StartPool, got dict"):
        env47.reset(jax.random.key(0), pool={})
    with pytest.raises(ConfigError, match=r"^pools\[1\]: its start states do not match"):
        marl_bgs.concat_pools([env47.pool, wide.pool])
    snaps = batch_states([_snapshot(5.0, (0, 0)), _snapshot(9.0, (0, 0))])
    with pytest.raises(ConfigError, match=r"^swapped: expected the same structure"):
        marl_bgs.make_pool(snaps, swapped=jax.tree.map(lambda a: a[:1], snaps))
    with pytest.raises(ConfigError, match=r"^states: expected start states stacked"):
        marl_bgs.make_pool(_snapshot(5.0, (0, 0)).tick)  # one game, no entry axis


def test_a_reward_function_of_the_wrong_shape_is_named():
    env = marl_bgs.make("tdm", map_id=47, num_envs=2, reward_fn=lambda s, n, f: jnp.zeros(3))
    _, state = env.reset(jax.random.key(0))
    with pytest.raises(
        ConfigError, match=r"^reward_fn: expected one reward per agent, shape \(10,\)"
    ):
        env.step(None, state, jnp.zeros((2, 10, 3), jnp.int32))
    with pytest.raises(ConfigError, match=r"^reward_fn: expected a callable, got int"):
        marl_bgs.make("tdm", reward_fn=3)


def test_an_opponent_that_is_not_a_policy_is_named(env47):
    with pytest.raises(ConfigError, match=r"^opponent: expected a team policy with act"):
        marl_bgs.OpponentEnv(env47, lambda keys, memory, inputs: None)  # type: ignore[arg-type]


def test_team_rollout_restarts_games_with_fresh_memories():
    # Games end at the tick limit of 3; the counting team's memory restarts with each game.
    env = marl_bgs.make("tdm", map_id=47, num_envs=4, tick_limit=3)
    policies = [marl_bgs.random_policy(env.mode), counting_policy(env.mode)]

    def summarize(out):
        return out.memories[1], out.done, out.state.tick

    play = jax.jit(marl_bgs.team_rollout(env, policies, 7, summarize))
    counts, done, ticks = (np.asarray(a) for a in play(jax.random.key(3)))
    assert counts.shape == (7, 4)
    np.testing.assert_array_equal(counts[:, 0], [1, 2, 3, 1, 2, 3, 1])
    np.testing.assert_array_equal(done[:, 0], [False, False, True] * 2 + [False])
    np.testing.assert_array_equal(ticks[:, 0], [1, 2, 3, 1, 2, 3, 1])


def test_restart_finished_restarts_exactly_the_ended_games_and_their_memories(env47):
    # The one rule after a game's end (every loop over many games uses it): ended games get their
    # next episode and fresh memories; running games keep both, untouched.
    _, state = env47.reset(jax.random.key(0))
    ended = jnp.asarray([False, True, False, True])
    state = state.replace(outcome=jnp.where(ended, 3, 0).astype(state.outcome.dtype))
    memories = {"count": jnp.arange(1, 5), "seen": jnp.ones((4, 2), bool)}
    fresh = {"count": jnp.zeros(4, jnp.int32), "seen": jnp.zeros((4, 2), bool)}
    key = jax.random.key(7)
    nxt, kept = marl_bgs.restart_finished(env47, key, state, memories, fresh)
    np.testing.assert_array_equal(kept["count"], [1, 0, 3, 0])
    np.testing.assert_array_equal(kept["seen"], [[True] * 2, [False] * 2] * 2)
    want = env47.reset_done(key, state)[1]
    leaves = (jax.tree.leaves(t) for t in (nxt, want, state))
    for a, b, old in zip(*leaves, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.asarray(a)[[0, 2]], np.asarray(old)[[0, 2]])
    assert (np.asarray(nxt.outcome) == 0).all()
