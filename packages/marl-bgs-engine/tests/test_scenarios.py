"""The endgame scenarios: their data against the paper's Table S5, the winning lines replayed
tick by tick against the live controller, the variants that lose or draw, the mirror image, the
public env, and how hard they are for random and scripted teams."""

from __future__ import annotations

from functools import cache

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs.core.team import random_policy
from marl_bgs.tdm.constants import A_WINS, B_WINS, DRAW, ONGOING
from marl_bgs.tdm.mode import TeamDeathmatch
from marl_bgs.tdm.scenarios import SKILLS, ScenarioError, ids, load, play, shipped
from marl_bgs.tdm.scenarios.env import REPLAY_BATCH, opponent_policy

# Table S5: challenge, living rosters A v B, ticks left, score, opponent, line lengths.
TABLE_S5 = {
    1: ("Turn a doomed fight", "HRP", "MRP", 5, (18, 17), "tdm-alpha", (3, 3)),
    2: ("Trust the healer", "WP", "MR", 5, (18, 19), "tdm-alpha", (4,)),
    3: ("Moving cover", "WH", "R", 10, (19, 19), "tdm-beta", (8,)),
    4: ("Finish before the stun", "WR", "MWP", 5, (18, 19), "tdm-alpha", (4,)),
    5: ("Protect the healer", "MWP", "MRP", 5, (17, 19), "tdm-beta", (5,)),
    6: ("Keep the trap", "MHP", "MWR", 5, (17, 19), "tdm-alpha", (5,)),
    7: ("Retreat, then turn", "MWP", "MHR", 5, (17, 19), "tdm-alpha", (4,)),
    8: ("Protect the bodyguard", "WRP", "RP", 5, (18, 19), "tdm-beta", (5,)),
}
# Table 2: how many of the ten skills each scenario tests.
SKILL_COUNTS = {1: 6, 2: 6, 3: 4, 4: 4, 5: 5, 6: 8, 7: 6, 8: 6}
OUTCOME = {"loss": B_WINS, "draw": DRAW}
SCENARIOS = ids()
# Lines and variants of a scenario, padded to this many games: the batch of the docs page's
# replays (test_scenario_docs.py), so both files share one program per controller.
PLANS = REPLAY_BATCH
RANDOM = random_policy(TeamDeathmatch())  # one policy object: one program per controller


@cache
def _replays(sid: int) -> tuple[dict, dict]:
    """Every line and variant of a scenario in one batch, from the snapshot and its mirror."""
    sc = load(sid)
    plans = [ln.actions() for ln in sc.lines] + [v.actions(sc.lines) for v in sc.variants]
    longest = max(len(p) for p in plans)
    batch = np.zeros((PLANS, longest, 5, 3), np.int32)  # one batch size: one program
    for k, p in enumerate(plans):
        batch[k, : len(p)] = p
    return play(sc, plans=batch), play(sc, plans=batch, mirrored=True)


def test_the_eight_scenarios_of_table_s5_are_shipped():
    assert ids() == sorted(TABLE_S5)


@pytest.mark.parametrize("sid", SCENARIOS)
def test_scenario_matches_table_s5(sid):
    sc = load(sid)
    challenge, team_a, team_b, ticks, score, opponent, lengths = TABLE_S5[sid]
    assert sc.challenge == challenge
    assert sc.rosters == (team_a, team_b)
    assert sc.ticks_left == ticks
    assert sc.score == score
    assert sc.opponent == opponent
    assert tuple(len(ln.ticks) for ln in sc.lines) == lengths
    assert len(sc.skills) == SKILL_COUNTS[sid]
    assert set(sc.skills) <= set(SKILLS)
    state = sc.state()
    assert int(state.tick) == 300 - ticks  # the game is drawn once tick 300 is resolved
    assert sc.arena.split == "custom"  # its own arena, none of the 52 maps
    # Every class slot that is not living starts dead and returns at the next wave.
    assert int(state.units.alive.sum()) == len(team_a) + len(team_b)


@pytest.mark.parametrize("sid", SCENARIOS)
def test_every_winning_line_wins_on_its_last_tick(sid):
    sc = load(sid)
    for replay in _replays(sid):
        for k, line in enumerate(sc.lines):
            outcome = replay["outcome"][:, k]
            n = len(line.ticks)
            assert (outcome[: n - 1] == ONGOING).all(), f"line {k} ended early: {outcome}"
            assert outcome[n - 1] == A_WINS, f"line {k} does not win: {outcome}"
            final = replay["score"][n - 1, k]
            assert final[0] >= 20 > final[1]


@pytest.mark.parametrize("sid", SCENARIOS)
def test_changing_one_key_move_loses_or_draws(sid):
    sc = load(sid)
    if sid in (3, 6, 7, 8):
        assert sc.variants, "scenarios 3, 6, 7 and 8 each need variants"
    for replay in _replays(sid):
        first = len(sc.lines)
        final = replay["outcome"][-1, first : first + len(sc.variants)]
        assert final.tolist() == [OUTCOME[v.outcome] for v in sc.variants]


@pytest.mark.parametrize("sid", SCENARIOS)
def test_the_public_env_plays_the_line_like_the_replay(sid, env47):
    sc = load(sid)
    line = sc.lines[0]
    # The engine suite's batch: the game's step, views and masks are env47's programs.
    n = env47.num_envs
    env = marl_bgs.make_scenario(sid, num_envs=n, spawn_swap="half")
    _, state = env.reset(jax.random.key(1))
    start = sc.state()
    assert np.array_equal(np.asarray(state.game.units.health[0]), np.asarray(start.units.health))
    assert np.asarray(state.game.swap).tolist() == [False, True] * (n // 2)
    done = None
    for t, actions in enumerate(line.actions()):
        batch = jnp.asarray(np.repeat(actions[None], n, 0))
        _, state, reward, done, _ = env.step(jax.random.key(t), state, batch)
    assert done is not None
    assert bool(done["__all__"].all())
    assert np.asarray(state.game.outcome).tolist() == [A_WINS] * n
    assert float(reward["a_0"][0]) == 1.0


def test_scenario_env_refuses_settings_the_scenario_fixes():
    with pytest.raises(ScenarioError, match="map_id: not a setting of a scenario env"):
        marl_bgs.make_scenario(SCENARIOS[0], map_id=3)
    with pytest.raises(ScenarioError, match="scenario: 99 is not a shipped scenario"):
        marl_bgs.make_scenario(99)
    with pytest.raises(ScenarioError, match="no shipped scenario is named"):
        marl_bgs.make_scenario("nope")


@pytest.mark.parametrize("mode", ["tdm", "tdm-v2"])
def test_make_with_a_scenario_names_make_scenario(mode):
    # `make` returns one mode's env; a scenario env (another type) has its own entry point.
    with pytest.raises(marl_bgs.ConfigError, match=r"^scenario: .*marl_bgs\.make_scenario\(6,"):
        marl_bgs.make(mode, scenario=6, num_envs=2)


@pytest.mark.parametrize("sid", SCENARIOS)
def test_random_play_rarely_wins(sid):
    res = play(sid, RANDOM, num_envs=64, key=jax.random.key(sid))
    final = res["outcome"][-1]
    assert (final != ONGOING).all()
    assert (final == A_WINS).mean() < 0.05


@pytest.mark.slow  # a program per scripted team and controller; docs/scenarios.md reports it too
@pytest.mark.parametrize("sid", SCENARIOS)
def test_no_scripted_team_solves_it(sid):
    sc = load(sid)
    for name in ("tdm-alpha", "tdm-beta", "tdm-gamma"):
        scripted = play(sc, opponent_policy(name), num_envs=1)
        assert scripted["outcome"][-1, 0] != A_WINS, name


def test_shipped_scenarios_are_read_once():
    assert shipped() is shipped()


def test_line_search_checks_the_designed_line_and_counts_first_ticks(monkeypatch, docs_pages):
    from marl_bgs.tdm.scenarios import search as line_search
    from marl_bgs.tdm.scenarios.search import search

    search_page = docs_pages("search_page").search_page

    # Chunks of the replays' batch: the 1,620 first-tick children take 68 calls of each program
    # (every chunk boundary is crossed), and the line's replays reuse the program that
    # `_replays` compiled for this controller (compiling dominates, running is quick).
    monkeypatch.setattr(line_search, "CHUNK", PLANS)
    line_search._programs.cache_clear()
    sc = load(2)  # two agents on team A: 1,620 first-tick joint actions
    try:
        report = search(sc, beam=4, depth=1)
    finally:
        line_search._programs.cache_clear()
    assert report.designed == len(sc.lines[0].ticks)
    assert report.designed_wins is True
    # Every first-tick joint action is stepped once (exact), and the designed first tick is one of
    # those after which the rest of the line still wins.
    assert report.expanded == report.first_tick_actions > 1
    assert report.first_tick_with_line is not None
    assert 1 <= report.first_tick_with_line < report.first_tick_actions
    assert "designed line" in report.summary()
    page = search_page([report], {2: sc.challenge})
    assert f"| 2 | {sc.challenge} | {len(sc.lines[0].ticks)} | wins | 4 | 1 |" in page


def test_line_search_holds_agents_that_respawn_still():
    from types import SimpleNamespace

    from marl_bgs.tdm.scenarios.search import _options

    move = np.ones((1, 5, 9), bool)
    pair = np.zeros((1, 5, 11, 2), bool)
    pair[..., 0, 0] = pair[..., 6, 0] = True
    masks = SimpleNamespace(move=move, pair=pair)
    searched = np.array([True, False, True, False, False])
    options = _options(masks, 0, searched)
    assert [len(o) for o in options] == [18, 1, 18, 1, 1]
    assert options[1] == [(0, 0, 0)]


# Table 2's totals row: how many scenarios test each skill (in SKILLS order).
SKILL_TOTALS = (8, 8, 1, 5, 5, 8, 1, 1, 1, 7)


def test_skill_totals_match_table_2():
    counts = [sum(skill in load(s).skills for s in SCENARIOS) for skill in SKILLS]
    assert tuple(counts) == SKILL_TOTALS
    # Teammate modeling, opponent modeling and tactical positioning are in every scenario.
    for skill in (SKILLS[0], SKILLS[1], SKILLS[5]):
        assert all(skill in load(s).skills for s in SCENARIOS)
