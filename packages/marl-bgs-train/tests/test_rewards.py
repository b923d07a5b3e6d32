"""The combat reward (Table S9) and the shapers, checked against a numpy reference.

Every position is authored by hand and played one tick through the env's own compiled step
(`marl_bgs.make(..., reward_fn=combat_reward())`, two games, compiled once for the module), so the
env's reward is checked too. The reference below recomputes every term from the facts arrays with
plain loops; the scenarios also pin hand-counted values.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs import ConfigError, UnitSpec, author_state, batch_states
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.constants import A_WINS, B_WINS, ONGOING
from marl_bgs.tdm.testing import slot_actions
from marl_bgs_train.tdm.rewards import (
    OWN_TERMS,
    SHARED_TERMS,
    CombatRewardWeights,
    approach_potential,
    combat_reward,
    health_potential,
    potential_shaping,
    reward_terms,
    score_shaping,
    shaped,
)

KEY = jax.random.key(0)
# Distinct amounts per field: a term that read the wrong field would show.
ODD_WEIGHTS = CombatRewardWeights(
    kill_credit=0.3,
    red_zone_kill=0.7,
    damage=0.011,
    useful_healing=0.013,
    teammate_death=-0.17,
    red_zone_death=-0.19,
    healing_range=0.023,
    own_red_zone=-0.029,
)
WEIGHTS = [CombatRewardWeights(), ODD_WEIGHTS]
side = np.arange(10) // 5  # each slot's team: 0 A, 1 B


@functools.cache
def shared_env() -> marl_bgs.BatchedEnv:
    """Two games of the open arena with the combat reward: one compiled step for the module."""
    return marl_bgs.make("tdm", map_id=0, num_envs=2, reward_fn=combat_reward())


def tick(state, actions=None):
    """One tick of an authored game through the env's step: (next state, facts, env reward [10])."""
    env = shared_env()
    acts = slot_actions() if actions is None else actions
    _, nxt, reward, _, info = env.step(KEY, batch_states([state, state]), jnp.stack([acts, acts]))
    first = lambda tree: jax.tree.map(lambda x: x[0], tree)  # noqa: E731
    return (
        first(nxt),
        first(info["facts"]),
        np.stack([np.asarray(reward[a])[0] for a in env.agents]),
    )


# --- the numpy reference --------------------------------------------------------------------------


def reference_terms(state, facts, w: CombatRewardWeights) -> dict[str, np.ndarray]:
    """Every term per slot, by loops over the facts arrays (Table S9)."""
    cls = np.asarray(state.units.class_id)
    alive = np.asarray(state.units.alive)
    pos = np.asarray(state.units.pos, np.float64)
    health = np.asarray(state.units.health, np.float64)
    dmg = np.asarray(facts.damage, np.float64)
    heal = np.asarray(facts.useful_healing, np.float64)
    died = np.asarray(facts.died)
    rz_death = np.asarray(facts.red_zone_death)
    in_rz = np.asarray(facts.in_red_zone)
    out = {k: np.zeros(10) for k in (*OWN_TERMS, *SHARED_TERMS)}
    mates = lambda t: [j for j in range(10) if side[j] == t and cls[j] > 0]  # noqa: E731

    for v in range(10):
        attackers = [i for i in range(10) if side[i] != side[v] and dmg[i, v] > 0]
        total = sum(dmg[i, v] for i in attackers)
        for i in attackers:  # overkill does not pay: at most the victim's health, pro rata
            out["damage"][i] += w.damage * dmg[i, v] / total * min(total, health[v])
        if not died[v]:
            continue
        healers = [h for h in range(10) for a in attackers if side[h] == side[a] and heal[h, a] > 0]
        for i in set(attackers) | set(healers):
            out["kill_credit"][i] += w.kill_credit
            out["red_zone_kill"][i] += w.red_zone_kill if rz_death[v] else 0.0
        for j in mates(side[v]):
            out["teammate_death"][j] += w.teammate_death
            out["red_zone_death"][j] += w.red_zone_death if rz_death[v] else 0.0

    for i in range(10):
        out["useful_healing"][i] = w.useful_healing * sum(
            heal[i, r] for r in range(10) if side[r] == side[i]
        )
        out["own_red_zone"][i] = w.own_red_zone if in_rz[i] else 0.0
        if cls[i] != C.PRIEST or not alive[i] or in_rz[i]:
            continue
        for j in mates(side[i]):
            near = math.dist(pos[i], pos[j]) <= C.BASIC_RANGE[C.PRIEST]
            if j != i and alive[j] and not in_rz[j] and near:
                for k in mates(side[i]):
                    out["healing_range"][k] += w.healing_range
    return out


def reference_result(state, nxt) -> np.ndarray:
    cls = np.asarray(state.units.class_id)
    ends = int(state.outcome) == ONGOING and int(nxt.outcome) != ONGOING
    won = {A_WINS: 0, B_WINS: 1}.get(int(nxt.outcome))
    if not ends or won is None:
        return np.zeros(10)
    return np.where(cls > 0, np.where(side == won, 1.0, -1.0), 0.0)


def reference_reward(state, nxt, facts, w, form: str, result: bool = True) -> np.ndarray:
    terms = reference_terms(state, facts, w)
    own = sum(terms[k] for k in OWN_TERMS)
    shared = sum(terms[k] for k in SHARED_TERMS)
    if form == "team":
        roster = np.asarray(state.units.class_id) > 0
        own = np.array([sum(own[j] for j in range(10) if side[j] == side[i]) for i in range(10)])
        own = own * roster
    return own + shared + (reference_result(state, nxt) if result else 0.0)


def check_against_reference(state, nxt, facts) -> None:
    for w in WEIGHTS:
        got = {k: np.asarray(v) for k, v in reward_terms(state, nxt, facts, w).items()}
        want = reference_terms(state, facts, w)
        assert set(got) == set(want)
        for k in want:
            assert got[k].dtype == np.float32
            assert got[k].shape == (10,)
            np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-7, err_msg=k)
        for form in ("agent", "team"):
            for result in (True, False):
                fn = combat_reward(form, w, result)
                np.testing.assert_allclose(
                    np.asarray(fn(state, nxt, facts)),
                    reference_reward(state, nxt, facts, w, form, result),
                    rtol=1e-5,
                    atol=1e-6,
                    err_msg=f"{form} {result}",
                )


# --- the scenarios --------------------------------------------------------------------------------


def kill_scenario():
    """Mage (0) and Hunter (1) kill the Rogue (5, 10 health: overkill); Priest 4 heals the Mage;
    Priest 3 heals the Warrior (2), who hits Hunter 6 (no death); B's Priest 9 heals Hunter 6 and
    has the Rogue and Hunter 6 in its Basic range."""
    state = author_state(
        map_id=0,
        units=[
            UnitSpec(slot=0, cls="M", x=8.0, y=5.0, health=50),
            UnitSpec(slot=1, cls="H", x=8.5, y=7.5),
            UnitSpec(slot=2, cls="W", x=9.0, y=1.5, health=150),
            UnitSpec(slot=3, cls="P", x=7.0, y=1.0),
            UnitSpec(slot=4, cls="P", x=6.0, y=5.0),
            UnitSpec(slot=5, cls="R", x=10.5, y=5.0, health=10),
            UnitSpec(slot=6, cls="H", x=10.2, y=1.5, health=90),
            UnitSpec(slot=9, cls="P", x=12.0, y=3.0),
        ],
    )
    actions = slot_actions(basic={0: 5, 1: 5, 2: 6, 3: 2, 4: 0, 9: 6})
    return (state, *tick(state, actions))


def red_zone_scenario():
    """Rogue 0 kills Mage 5 standing in B's own Red Zone; 18 + 2 points win the game for A.
    Warrior 6 stands in B's Red Zone, Hunter 1 in A's."""
    state = author_state(
        map_id=0,
        units=[
            UnitSpec(slot=0, cls="R", x=14.0, y=5.0),
            UnitSpec(slot=1, cls="H", x=4.0, y=8.0),
            UnitSpec(slot=5, cls="M", x=15.2, y=5.0, health=5),
            UnitSpec(slot=6, cls="W", x=18.0, y=2.0),
        ],
        score=(18, 0),
    )
    return (state, *tick(state, slot_actions(basic={0: 5})))


@functools.cache
def scenarios():
    return {"kill": kill_scenario(), "red_zone": red_zone_scenario()}


def test_env_reward_is_the_reward_fn() -> None:
    for state, nxt, facts, env_reward in scenarios().values():
        want = reference_reward(state, nxt, facts, CombatRewardWeights(), "agent")
        np.testing.assert_allclose(env_reward, want, rtol=1e-5, atol=1e-6)


def test_kill_credit_to_attackers_and_their_healer() -> None:
    state, nxt, facts, _ = scenarios()["kill"]
    f = {k: np.asarray(getattr(facts, k)) for k in ("damage", "useful_healing", "died")}
    assert f["died"].tolist() == [i == 5 for i in range(10)]
    assert (f["damage"][[0, 1, 2], [5, 5, 6]] > 0).all()
    assert (f["useful_healing"][[4, 3, 9], [0, 2, 6]] > 0).all()
    terms = {k: np.asarray(v) for k, v in reward_terms(state, nxt, facts).items()}
    np.testing.assert_allclose(terms["kill_credit"], [0.05, 0.05, 0, 0, 0.05, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(terms["red_zone_kill"], 0.0)
    # Shared: one death in team B, paid to its three agents (padded slots 7 and 8 get nothing).
    np.testing.assert_allclose(terms["teammate_death"], [0] * 5 + [-0.05, -0.05, 0, 0, -0.05])
    # Healing range at the start of the tick: A's pairs (4, 0) and (3, 2); B's (9, 5), though 5
    # dies on the tick, and (9, 6).
    np.testing.assert_allclose(
        terms["healing_range"], 0.002 * (np.asarray(state.units.class_id) > 0)
    )
    check_against_reference(state, nxt, facts)


def test_overkill_damage_is_capped_at_the_victims_health() -> None:
    state, nxt, facts, _ = scenarios()["kill"]
    dmg = np.asarray(facts.damage)
    assert dmg[:, 5].sum() > float(state.units.health[5])  # the Rogue was overkilled
    terms = np.asarray(reward_terms(state, nxt, facts)["damage"])
    # The two attackers share 0.001 per point of the Rogue's 10 health, pro rata.
    np.testing.assert_allclose(terms[0] + terms[1], 0.001 * 10, rtol=1e-5)
    np.testing.assert_allclose(terms[0] / terms[1], dmg[0, 5] / dmg[1, 5], rtol=1e-5)
    np.testing.assert_allclose(terms[2], 0.001 * dmg[2, 6], rtol=1e-6)  # not capped
    np.testing.assert_allclose(terms[5:], 0.0)


def test_red_zone_kill_death_and_result_on_the_winning_tick() -> None:
    state, nxt, facts, _ = scenarios()["red_zone"]
    assert bool(facts.died[5])
    assert bool(facts.red_zone_death[5])
    assert int(nxt.outcome) == A_WINS
    terms = {k: np.asarray(v) for k, v in reward_terms(state, nxt, facts).items()}
    roster_a, roster_b = [1, 1, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1, 1, 0, 0, 0]
    np.testing.assert_allclose(terms["kill_credit"], 0.05 * np.eye(10)[0])
    np.testing.assert_allclose(terms["red_zone_kill"], 0.10 * np.eye(10)[0])
    np.testing.assert_allclose(terms["teammate_death"], -0.05 * np.array(roster_b))
    np.testing.assert_allclose(terms["red_zone_death"], -0.10 * np.array(roster_b))
    # Own Red Zone: Hunter 1, Mage 5 and Warrior 6 start the tick in their own Red Zones.
    np.testing.assert_allclose(terms["own_red_zone"], -0.002 * np.isin(np.arange(10), [1, 5, 6]))
    result = np.array(roster_a) - np.array(roster_b)
    with_result = np.asarray(combat_reward()(state, nxt, facts))
    without = np.asarray(combat_reward(result=False)(state, nxt, facts))
    np.testing.assert_allclose(with_result - without, result, atol=1e-6)
    check_against_reference(state, nxt, facts)


@pytest.mark.parametrize("swap", [False, True])
def test_healing_range_and_own_red_zone(swap: bool) -> None:
    """A's Priest 4 has Warrior 0 in range, Hunter 1 out of range, Rogue 2 in range but in its
    own Red Zone and a dead Mage 3 in range: one pair. B's Priest 8 has Warrior 5 in range: one
    pair; B's Priest 9 stands in its own Red Zone with Warrior 5 at exactly its range: no pair.
    With `swap` the teams' ends swap and every position is mirrored."""
    x = (lambda v: 20.0 - v) if swap else (lambda v: v)
    state = author_state(
        map_id=0,
        swap=swap,
        units=[
            UnitSpec(slot=0, cls="W", x=x(9.0), y=5.0),
            UnitSpec(slot=1, cls="H", x=x(7.0), y=8.5),
            UnitSpec(slot=2, cls="R", x=x(4.5), y=5.0),
            UnitSpec(slot=3, cls="M", x=x(7.0), y=3.0, alive=False),
            UnitSpec(slot=4, cls="P", x=x(7.0), y=5.0),
            UnitSpec(slot=5, cls="W", x=x(13.0), y=5.0),
            UnitSpec(slot=8, cls="P", x=x(12.0), y=7.0),
            UnitSpec(slot=9, cls="P", x=x(16.0), y=5.0),
        ],
    )
    nxt, facts, _ = tick(state)
    assert np.asarray(facts.in_red_zone).tolist() == [i in (2, 9) for i in range(10)]
    terms = {k: np.asarray(v) for k, v in reward_terms(state, nxt, facts).items()}
    roster = np.asarray(state.units.class_id) > 0
    np.testing.assert_allclose(terms["healing_range"], 0.001 * roster)
    np.testing.assert_allclose(terms["own_red_zone"], -0.002 * np.isin(np.arange(10), [2, 9]))
    check_against_reference(state, nxt, facts)


def test_team_form_pays_each_agent_its_teams_own_total() -> None:
    state, nxt, facts, _ = scenarios()["kill"]
    terms = {k: np.asarray(v) for k, v in reward_terms(state, nxt, facts).items()}
    shared = sum(terms[k] for k in SHARED_TERMS)
    agent = np.asarray(combat_reward("agent", result=False)(state, nxt, facts))
    team = np.asarray(combat_reward("team", result=False)(state, nxt, facts))
    roster = np.asarray(state.units.class_id) > 0
    for t in (0, 1):
        mine = (side == t) & roster
        own_total = (agent - shared)[side == t].sum()
        np.testing.assert_allclose((team - shared)[mine], own_total, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(team[~roster], 0.0)
    assert not np.allclose(agent, team)  # the scenario separates the forms


def test_score_shaping() -> None:
    for name, points in (("kill", [1, 0]), ("red_zone", [2, 0])):
        state, nxt, facts, _ = scenarios()[name]
        assert np.asarray(facts.points).tolist() == points
        roster = np.asarray(state.units.class_id) > 0
        diff = np.where(side == 0, points[0] - points[1], points[1] - points[0])
        got = np.asarray(score_shaping(0.25)(state, nxt, facts))
        np.testing.assert_allclose(got, 0.25 * diff * roster)


def reference_health_phi(state, scale: float) -> np.ndarray:
    cls = np.asarray(state.units.class_id)
    health = np.where(np.asarray(state.units.alive), np.asarray(state.units.health), 0.0)
    frac = [
        health[(side == t) & (cls > 0)].sum() / C.MAX_HEALTH[cls[(side == t) & (cls > 0)]].sum()
        for t in (0, 1)
    ]
    return np.where(cls > 0, scale * np.where(side == 0, frac[0] - frac[1], frac[1] - frac[0]), 0)


def test_potential_shaping_and_its_terminal_case() -> None:
    shaper = potential_shaping(health_potential(2.0), 0.9)
    state, nxt, facts, _ = scenarios()["kill"]  # the game goes on
    assert int(nxt.outcome) == ONGOING
    want = 0.9 * reference_health_phi(nxt, 2.0) - reference_health_phi(state, 2.0)
    assert np.abs(want).max() > 0.01
    np.testing.assert_allclose(np.asarray(shaper(state, nxt, facts)), want, rtol=1e-5, atol=1e-6)
    state, nxt, facts, _ = scenarios()["red_zone"]  # the game ends: phi(next) counts as 0
    assert int(nxt.outcome) != ONGOING
    want = -reference_health_phi(state, 2.0)
    assert np.abs(want).max() > 0.01
    np.testing.assert_allclose(np.asarray(shaper(state, nxt, facts)), want, rtol=1e-5, atol=1e-6)


def test_approach_potential_is_the_distance_to_the_nearest_living_enemy() -> None:
    for name in ("kill", "red_zone"):
        state = scenarios()[name][0]
        pos = np.asarray(state.units.pos, np.float64)
        cls = np.asarray(state.units.class_id)
        alive = np.asarray(state.units.alive) & (cls > 0)
        want = np.zeros(10)
        for i in np.flatnonzero(cls > 0):  # a slot at a time, by hand
            enemies = [j for j in range(10) if side[j] != side[i] and alive[j]]
            gaps = [math.dist(pos[i], pos[j]) for j in enemies]
            want[i] = -0.5 * min(gaps, default=0.0) / math.hypot(20.0, 10.0)
        assert np.abs(want).max() > 0.01
        got = np.asarray(approach_potential(0.5)(state))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    state = scenarios()["kill"][0]  # no living enemy: 0 for that team
    units = dataclasses.replace(state.units, alive=state.units.alive.at[5:].set(False))
    got = np.asarray(approach_potential(0.5)(dataclasses.replace(state, units=units)))
    np.testing.assert_allclose(got[:5], 0.0)
    assert np.all(got[5:][np.asarray(state.units.class_id)[5:] > 0] < 0)


def test_shaped_sums_and_runs_under_jit_and_vmap() -> None:
    fn = shaped(
        combat_reward("team"),
        score_shaping(0.1),
        potential_shaping(health_potential(1.0), 0.99),
    )
    games = list(scenarios().values())
    batched = [batch_states([g[i] for g in games]) for i in range(3)]
    got = np.asarray(jax.jit(jax.vmap(fn))(*batched))
    for k, (state, nxt, facts, _) in enumerate(games):
        want = sum(
            np.asarray(part(state, nxt, facts))
            for part in (
                combat_reward("team"),
                score_shaping(0.1),
                potential_shaping(health_potential(1.0), 0.99),
            )
        )
        np.testing.assert_allclose(got[k], want, rtol=1e-5, atol=1e-6)


def test_equal_arguments_give_equal_reward_functions() -> None:
    assert combat_reward() == combat_reward("agent", CombatRewardWeights(), True)
    assert hash(combat_reward("team")) == hash(combat_reward(form="team"))
    assert combat_reward("team") != combat_reward("agent")
    assert combat_reward(weights=ODD_WEIGHTS) != combat_reward()
    phi = health_potential(1.0)
    assert shaped(combat_reward(), score_shaping(0.1), potential_shaping(phi, 0.9)) == shaped(
        combat_reward(), score_shaping(0.1), potential_shaping(health_potential(1.0), 0.9)
    )
    assert dataclasses.replace(ODD_WEIGHTS, damage=0.001) != ODD_WEIGHTS


def test_bad_settings_raise_config_error_naming_the_field() -> None:
    with pytest.raises(ConfigError, match=r"^form: .*'agent'.*'team'"):
        combat_reward("both")  # pyright: ignore[reportArgumentType]
    with pytest.raises(ConfigError, match=r"^weights\.damage: "):
        CombatRewardWeights(damage=math.nan)
    with pytest.raises(ConfigError, match=r"^gamma: "):
        potential_shaping(health_potential(1.0), 1.5)


def test_env_steps_under_jit_with_finite_rewards() -> None:
    """Random in-range actions (the engine repairs illegal ones) from the env's own start."""
    env = shared_env()
    _, state = env.reset(jax.random.key(1))
    rng = np.random.default_rng(0)
    nvec = np.asarray(env.action_space(env.agents[0]).nvec)
    for t in range(4):
        actions = rng.integers(0, nvec, size=(2, len(env.agents), len(nvec)), dtype=np.int32)
        _, state, reward, _, _ = env.step(jax.random.key(t), state, actions)
        assert all(reward[a].shape == (2,) and np.isfinite(reward[a]).all() for a in env.agents)


def test_reward_norm_scales_what_the_learner_trains_on() -> None:
    """With `reward_norm`, the rollout's rewards are the env's divided by the running standard
    deviation of the discounted returns (folded in tick by tick, a finished game's return
    restarting); the logged reward per tick stays the env's own. The same first rollout without
    it keeps the env's rewards unchanged."""
    from marl_bgs_train.learners import make_train
    from marl_bgs_train.losses import RewardScale
    from marl_bgs_train.testing import tiny_config

    key = jax.random.PRNGKey(7)
    out = {}
    for norm in (False, True):
        trainer = make_train(tiny_config("ippo-ff", reward_norm=norm, rollout=8))
        _, traj, _, _ = jax.jit(trainer._rollout)(trainer.init(key), trainer.hyper())
        out[norm] = traj
    plain, normed = out[False], out[True]
    np.testing.assert_array_equal(plain.paid, normed.paid)
    np.testing.assert_allclose(
        plain.paid, np.sum(np.asarray(plain.reward) * np.asarray(plain.weight), -1), rtol=1e-6
    )
    raw = np.asarray(plain.reward)
    assert np.abs(raw).sum() > 0  # the combat terms paid something in these 8 ticks
    gamma = trainer.config.gamma
    scale = RewardScale.create(raw.shape[1:])
    for t in range(raw.shape[0]):
        scale = scale.update(jnp.asarray(raw[t]), jnp.asarray(plain.done[t])[:, None], gamma)
        np.testing.assert_allclose(normed.reward[t], scale.scale(jnp.asarray(raw[t])), rtol=1e-5)
    assert not np.allclose(normed.reward, raw)
