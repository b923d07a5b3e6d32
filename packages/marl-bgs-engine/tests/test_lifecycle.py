"""Deaths, points, respawn waves, spawn shields, the end of the game and rewards.

States are authored by hand; `step` (jitted) is shared by every test, and the `run` fixture runs
a subset both jitted and under `jax.disable_jit()`. One small environment (`num_envs=2`) checks
`reset_done`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs import GameState, UnitSpec, author_state, batch_states
from marl_bgs.tdm.perception import perceive
from marl_bgs.tdm.testing import relative_target, slot_actions, tick_with_reward

U = UnitSpec
STAY, NORTH, SOUTH, EAST, WEST = range(5)
ONGOING, A_WINS, B_WINS, DRAW = range(4)
Step = Callable[[GameState, jnp.ndarray], tuple[GameState, jnp.ndarray, Any]]

step = jax.jit(tick_with_reward)
sight = jax.jit(lambda s: perceive(s).own_sight)


def game(*units: UnitSpec, **kw: Any) -> GameState:
    return author_state(units=list(units), **kw)


rel = relative_target
acts = slot_actions


def pos(state: GameState, slot: int) -> list[float]:
    return np.asarray(state.units.pos[slot]).tolist()


def kill_game(victim: UnitSpec, **kw: Any) -> GameState:
    """`victim` (1 health) with an enemy Rogue 1.2 to its west (or east near the east edge)."""
    slot = 3 if victim.slot >= 5 else 8
    dx = -1.2 if victim.x > 2.0 else 1.2
    killer = U(slot=slot, cls="R", x=victim.x + dx, y=victim.y)
    return game(victim, killer, **kw)


def kill(state: GameState, victim: int) -> tuple[GameState, jnp.ndarray, Any]:
    killer = 3 if victim >= 5 else 8
    return step(state, acts(basic={killer: victim}))


# ------------------------------------------------------------------------------------ points


def test_a_death_gives_the_other_team_one_point(run: Step) -> None:
    s = kill_game(U(slot=7, cls="H", x=10.0, y=5.0, health=1.0))
    nxt, reward, f = run(s, acts(basic={3: 7}))
    assert bool(f.died[7])
    assert not bool(nxt.units.alive[7])
    assert np.asarray(f.death_points).tolist() == [0] * 7 + [1, 0, 0]
    assert np.asarray(f.points).tolist() == [1, 0]
    assert nxt.score.tolist() == [1, 0]
    assert np.asarray(reward).tolist() == [0.0] * 10  # not the last tick
    assert int(nxt.outcome) == ONGOING


@pytest.mark.parametrize(
    ("slot", "x", "points"),
    [
        (7, 15.0, 2),  # team B's Red Zone: x >= 15, boundary included
        (7, 14.9, 1),
        (7, 19.5, 2),
        (7, 10.0, 1),
        (2, 5.0, 2),  # team A's Red Zone: x <= 5
        (2, 5.1, 1),
        (2, 0.5, 2),
        (2, 15.0, 1),  # the enemy's Red Zone gives no bonus
        (7, 5.0, 1),
    ],
)
def test_a_death_in_ones_own_red_zone_gives_two(slot: int, x: float, points: int) -> None:
    s = kill_game(U(slot=slot, cls="H", x=x, y=5.0, health=1.0))
    nxt, _, f = kill(s, slot)
    assert bool(f.died[slot])
    assert int(f.death_points[slot]) == points
    scorer = 0 if slot >= 5 else 1
    assert int(nxt.score[scorer]) == points
    assert int(nxt.score[1 - scorer]) == 0


def test_red_zone_uses_the_position_at_the_start_of_the_tick() -> None:
    """The victim tries to step out of its Red Zone on the tick it dies: still 2 points; and an
    agent that dies trying to step in gives 1."""
    s = kill_game(U(slot=7, cls="H", x=15.2, y=5.0, health=1.0))
    nxt, _, f = step(s, acts(basic={3: 7}, move={7: EAST}))  # own frame: east = toward x = 0
    assert int(f.death_points[7]) == 2
    assert np.asarray(f.red_zone_death).tolist() == [False] * 7 + [True, False, False]
    assert np.asarray(f.in_red_zone).tolist() == [False] * 7 + [True, False, False]
    assert nxt.score.tolist() == [2, 0]
    assert pos(nxt, 7) == pytest.approx([15.2, 5.0])  # the dead do not move
    s = kill_game(U(slot=7, cls="H", x=14.5, y=5.0, health=1.0))
    nxt, _, f = step(s, acts(basic={3: 7}, move={7: WEST}))
    assert int(f.death_points[7]) == 1
    assert not np.asarray(f.red_zone_death).any()
    assert not np.asarray(f.in_red_zone).any()


@pytest.mark.parametrize(
    ("depth", "slot", "x", "points"),
    [
        (3.0, 7, 17.0, 2),
        (3.0, 7, 16.9, 1),
        (3.0, 2, 3.0, 2),
        (3.0, 2, 3.1, 1),
        (0.0, 7, 19.5, 1),  # depth 0 disables Red Zones
        (0.0, 2, 0.5, 1),
        (10.0, 7, 10.0, 2),
        (10.0, 2, 10.0, 2),
        (10.0, 2, 10.1, 1),
    ],
)
def test_red_zone_depth_is_configurable(depth: float, slot: int, x: float, points: int) -> None:
    s = kill_game(U(slot=slot, cls="H", x=x, y=5.0, health=1.0), red_zone_depth=depth)
    _, _, f = kill(s, slot)
    assert int(f.death_points[slot]) == points


@pytest.mark.parametrize(
    ("slot", "x", "points"),
    [(7, 5.0, 2), (7, 5.1, 1), (7, 15.0, 1), (2, 15.0, 2), (2, 14.9, 1), (2, 5.0, 1)],
)
def test_swapped_spawn_ends_mirror_the_red_zones(slot: int, x: float, points: int) -> None:
    s = kill_game(U(slot=slot, cls="H", x=x, y=5.0, health=1.0), swap=True)
    _, _, f = kill(s, slot)
    assert int(f.death_points[slot]) == points


def test_simultaneous_deaths_score_for_both_teams() -> None:
    s = game(
        U(slot=3, cls="R", x=10.0, y=5.0, health=5.0),
        U(slot=8, cls="R", x=11.2, y=5.0, health=5.0),
        U(slot=2, cls="H", x=2.0, y=2.0, health=1.0),
        U(slot=9, cls="M", x=4.0, y=2.0),
    )
    nxt, _, f = step(s, acts(basic={3: 8, 8: 3, 9: 2}))
    assert np.asarray(f.died).nonzero()[0].tolist() == [2, 3, 8]
    assert nxt.score.tolist() == [1, 1 + 2]


# ------------------------------------------------------------------------------- respawns


def dead_game(**kw: Any) -> GameState:
    return game(
        U(slot=0, cls="M", x=8.0, y=5.0),
        U(slot=1, cls="W", x=6.0, y=2.0, alive=False, cooldown=10),
        U(slot=3, cls="R", x=7.0, y=8.0, alive=False),
        U(slot=5, cls="M", x=12.0, y=5.0),
        U(slot=7, cls="H", x=13.0, y=8.0, alive=False),
        **kw,
    )


def test_respawn_waves_return_each_teams_dead_to_their_pads(run: Step) -> None:
    """Countdown 0: the wave comes at the end of this transition; then it restarts at 4."""
    s = dead_game(wave=(1, 0))
    s, _, f = run(s, acts())
    assert np.asarray(f.respawned).nonzero()[0].tolist() == [7]
    assert s.wave.tolist() == [0, 4]
    assert bool(s.units.alive[7])
    assert pos(s, 7) == [19.5, 5.0]
    assert float(s.units.health[7]) == 100.0
    assert int(s.units.shield[7]) == 3
    assert not bool(s.units.alive[1])
    assert not bool(s.units.alive[3])
    s, _, f = run(s, acts())
    assert np.asarray(f.respawned).nonzero()[0].tolist() == [1, 3]
    assert s.wave.tolist() == [4, 3]
    assert (pos(s, 1), pos(s, 3)) == ([0.5, 3.0], [0.5, 7.0])
    assert np.asarray(s.units.health)[[1, 3]].tolist() == [200.0, 100.0]
    assert np.asarray(s.units.shield)[[1, 3, 7]].tolist() == [3, 3, 2]
    assert not np.asarray(s.units.alive)[[2, 4, 6, 8, 9]].any()  # padded slots stay inert
    assert s.units.class_id.tolist() == [1, 2, 0, 4, 0, 1, 0, 3, 0, 0]


def test_swapped_teams_respawn_on_their_own_edge() -> None:
    s, _, _ = step(dead_game(wave=(0, 0), swap=True), acts())
    assert (pos(s, 1), pos(s, 3), pos(s, 7)) == ([19.5, 3.0], [19.5, 7.0], [0.5, 5.0])


def test_waves_come_every_five_ticks() -> None:
    s = kill_game(U(slot=7, cls="H", x=10.0, y=5.0, health=1.0))
    waves, alive, back = [], [], []
    for t in range(11):
        waves.append(s.wave.tolist())
        s, _, f = step(s, acts(basic={3: 7}) if t == 1 else acts())
        alive.append(bool(s.units.alive[7]))
        back.append(bool(f.respawned[7]))
    assert [w[0] for w in waves] == [4, 3, 2, 1, 0, 4, 3, 2, 1, 0, 4]
    assert [w[1] for w in waves] == [4, 3, 2, 1, 0, 4, 3, 2, 1, 0, 4]
    # Killed on tick 1, back at the end of tick 4 (the next wave), shielded for ticks 5-7.
    assert alive == [True, False, False, False] + [True] * 7
    assert back == [False] * 4 + [True] + [False] * 6
    assert np.asarray(s.units.shield)[7] == 0
    assert pos(s, 7) == [19.5, 5.0]


def test_an_agent_killed_on_a_wave_tick_returns_with_that_wave() -> None:
    """The wave returns every agent dead at the end of the transition, this tick's dead too."""
    s = kill_game(U(slot=7, cls="H", x=10.0, y=5.0, health=1.0), wave=(4, 0))
    nxt, _, f = kill(s, 7)
    assert bool(f.died[7])
    assert bool(f.respawned[7])
    assert nxt.score.tolist() == [1, 0]
    assert bool(nxt.units.alive[7])
    assert pos(nxt, 7) == [19.5, 5.0]
    assert (float(nxt.units.health[7]), int(nxt.units.shield[7])) == (100.0, 3)


def test_death_clears_statuses_and_cooldowns_keep_running() -> None:
    """Documented choice: cooldowns keep counting down while an agent waits for its wave."""
    s = kill_game(
        U(slot=7, cls="H", x=10.0, y=5.0, health=1.0, cooldown=20, slow_charge=4, antiheal=3,
          recovery=5),
    )  # fmt: skip
    s, _, _ = kill(s, 7)
    u = s.units
    assert (int(u.slow_charge[7]), int(u.antiheal[7]), int(u.recovery[7])) == (0, 0, 0)
    assert int(u.cooldown[7]) == 19
    for _ in range(4):  # the wave comes at the end of tick 4
        s, _, _ = step(s, acts())
    assert bool(s.units.alive[7])
    assert int(s.units.cooldown[7]) == 15
    assert (float(s.units.health[7]), int(s.units.shield[7])) == (100.0, 3)


def test_shield_ticks_are_configurable() -> None:
    s, _, _ = step(dead_game(wave=(0, 0), shield_ticks=5), acts())
    assert np.asarray(s.units.shield)[[1, 3, 7]].tolist() == [5, 5, 5]
    s, _, _ = step(dead_game(wave=(0, 0), shield_ticks=0), acts())
    assert np.asarray(s.units.shield)[[1, 3, 7]].tolist() == [0, 0, 0]


# --------------------------------------------------------------------------------- shields


def test_the_shield_lasts_three_ticks_against_abilities_both_ways() -> None:
    """Back at the end of tick 0: for ticks 1-3 it can neither act nor be targeted; on 4 both."""
    s = game(
        U(slot=0, cls="M", x=5.0, y=5.0, alive=False),
        U(slot=7, cls="H", x=3.0, y=1.0),
        wave=(0, 4),
    )
    s, _, _ = step(s, acts())
    assert pos(s, 0) == [0.5, 1.0]
    assert int(s.units.shield[0]) == 3
    log = []
    for _ in range(4):
        s, _, f = step(s, acts(basic={0: 7, 7: 0}))
        log.append((bool(f.combat_rejected[0]), bool(f.combat_rejected[7])))
    assert log == [(True, True)] * 3 + [(False, False)]
    assert float(f.damage_basic[0, 7]) == pytest.approx(13 * 1.15)
    assert float(f.damage_basic[7, 0]) == pytest.approx(6.0)


def shield_game(**kw: Any) -> GameState:
    return game(
        U(slot=0, cls="M", x=3.0, y=5.0, shield=2, health=40.0, recovery=5),
        U(slot=4, cls="P", x=3.0, y=7.0),
        U(slot=1, cls="W", x=3.0, y=3.0),
        U(slot=6, cls="R", x=4.2, y=5.0),
        U(slot=7, cls="H", x=6.0, y=6.0),
        **kw,
    )


def test_shielded_agents_are_hidden_from_enemies_only() -> None:
    seen = np.asarray(sight(shield_game()))
    assert not seen[6, 0]
    assert not seen[7, 0]
    assert seen[4, 0]
    assert seen[1, 0]
    assert seen[0, 6]


def test_shielded_agents_cannot_act_be_targeted_or_healed() -> None:
    s = shield_game()
    for a, actor in [
        (acts(basic={6: 0}), 6), (acts(ult={6: 0}), 6), (acts(basic={7: 0}), 7),
        (acts(basic={4: 0}), 4), (acts(ult={4: 0}), 4),
        (acts(basic={0: 6}), 0), (acts(ult={0: None}), 0),
    ]:  # fmt: skip
        nxt, _, f = step(s, a)
        assert bool(f.combat_rejected[actor]), actor
        assert float(np.sum(f.damage)) == 0.0
        assert float(np.sum(f.healing)) == 0.0
        assert float(nxt.units.health[0]) == 40.0


def test_no_auras_from_or_to_shielded_agents() -> None:
    s = game(
        U(slot=0, cls="M", x=3.0, y=5.0, shield=2),
        U(slot=1, cls="W", x=3.0, y=6.0, shield=2),
        U(slot=3, cls="R", x=4.0, y=5.5),
        U(slot=8, cls="R", x=5.2, y=5.5),
    )
    nxt, _, f = step(s, acts(basic={3: 8, 8: 3}))
    assert np.asarray(f.mage_auras)[[0, 1, 3]].tolist() == [0, 0, 0]
    assert np.asarray(f.warrior_auras)[[0, 1, 3]].tolist() == [0, 0, 0]
    assert np.asarray(nxt.units.health)[[3, 8]].tolist() == pytest.approx([88.0, 88.0])


@pytest.mark.parametrize(
    ("extra", "speed"),
    [({}, 2.0), ({"slow_charge": 3, "slow_hunter": 1}, 2.0), ({"shield_speed": 1.5}, 1.5)],
)
def test_shielded_agents_move_at_the_shield_speed(extra: dict[str, Any], speed: float) -> None:
    rules = {k: v for k, v in extra.items() if k == "shield_speed"}
    slows = {k: v for k, v in extra.items() if k != "shield_speed"}
    s = game(
        U(slot=0, cls="M", x=3.0, y=2.0, shield=2, **slows),
        U(slot=8, cls="R", x=15.0, y=5.0, shield=2),
        **rules,
    )
    nxt, _, f = step(s, acts(move={0: EAST, 8: EAST}))
    assert float(f.moved[0]) == pytest.approx(speed)
    assert float(f.moved[8]) == pytest.approx(speed)
    assert pos(nxt, 0) == pytest.approx([3.0 + speed, 2.0], abs=1e-5)
    assert pos(nxt, 8) == pytest.approx([15.0 - speed, 5.0], abs=1e-5)  # B's east is world west


def test_shielded_agents_pass_through_bodies(run: Step) -> None:
    """Through a body in its path, and may end a tick overlapping one while the shield lasts."""
    s = game(
        U(slot=0, cls="M", x=1.0, y=5.0, shield=3),
        U(slot=1, cls="W", x=2.0, y=5.0),
        U(slot=6, cls="W", x=3.3, y=5.0),
    )
    s, _, f = run(s, acts(move={0: EAST}))
    assert pos(s, 0) == pytest.approx([3.0, 5.0], abs=1e-5)
    assert not bool(f.shield_cleared[0])
    assert (pos(s, 1), pos(s, 6)) == ([2.0, 5.0], pytest.approx([3.3, 5.0]))


def test_a_shield_ending_leaves_the_agent_clear_of_bodies(run: Step) -> None:
    s = game(
        U(slot=0, cls="M", x=3.0, y=5.0, shield=1),
        U(slot=6, cls="W", x=3.3, y=5.0),
    )
    s, _, f = run(s, acts())
    assert bool(f.shield_cleared[0])
    assert int(s.units.shield[0]) == 0
    gap = np.hypot(*(np.asarray(s.units.pos[0]) - np.asarray(s.units.pos[6])))
    assert gap >= 1.0 - 1e-4
    assert pos(s, 6) == pytest.approx([3.3, 5.0])  # the solid body is not pushed
    # Now solid: the Mage cannot walk into the Warrior.
    x0 = pos(s, 0)
    direction = EAST if pos(s, 6)[0] > x0[0] else WEST
    s, _, _ = step(s, acts(move={0: direction}))
    assert np.hypot(*(np.asarray(s.units.pos[0]) - np.asarray(s.units.pos[6]))) >= 1.0 - 1e-4


# --------------------------------------------------------------------------- end and reward


REWARD_ROSTER = [
    U(slot=0, cls="M", x=8.0, y=8.0),
    U(slot=1, cls="W", x=6.0, y=2.0, alive=False),  # dead agents share the result
    U(slot=6, cls="M", x=13.0, y=8.0),
    U(slot=9, cls="P", x=13.0, y=2.0, alive=False),
]


def duel(score: tuple[int, int], **kw: Any) -> GameState:
    """A Rogue each, both at 1 health and in reach of each other, plus the reward roster."""
    return game(
        U(slot=3, cls="R", x=10.0, y=5.0, health=1.0),
        U(slot=8, cls="R", x=11.2, y=5.0, health=1.0),
        *REWARD_ROSTER,
        score=score,
        **kw,
    )


# Slots 0, 1 (dead), 3 of team A; 6, 8, 9 (dead) of team B; the rest padded.
A_SIDE = [1.0, 1.0, 0.0, 1.0, 0.0, 0.0, -1.0, 0.0, -1.0, -1.0]


@pytest.mark.parametrize(
    ("score", "a", "outcome", "final", "reward"),
    [
        ((19, 5), {3: 8}, A_WINS, [20, 5], A_SIDE),
        ((5, 19), {8: 3}, B_WINS, [5, 20], [-r for r in A_SIDE]),
        ((19, 19), {3: 8, 8: 3}, DRAW, [20, 20], [0.0] * 10),  # level at the threshold
        ((18, 19), {3: 8}, ONGOING, [19, 19], [0.0] * 10),
        ((17, 17), {3: 8, 8: 3}, ONGOING, [18, 18], [0.0] * 10),
    ],
)
def test_winning_score_and_rewards(
    score: tuple[int, int], a: dict[int, int], outcome: int, final: list[int], reward: list[float]
) -> None:
    """+1 to every agent of the winner, -1 to the loser, 0 on a draw; padded slots 0."""
    nxt, r, _ = step(duel(score), acts(basic=a))
    assert nxt.score.tolist() == final
    assert int(nxt.outcome) == outcome
    assert np.asarray(r).tolist() == reward


def test_more_points_win_when_both_reach_the_threshold() -> None:
    """19-19: A makes two kills and B one on the same tick: 21-20, A wins."""
    s = game(
        U(slot=3, cls="R", x=10.0, y=5.0, health=1.0),
        U(slot=8, cls="R", x=11.2, y=5.0, health=1.0),
        U(slot=0, cls="M", x=8.0, y=8.0),
        U(slot=6, cls="H", x=10.0, y=8.0, health=1.0),
        score=(19, 19),
    )
    nxt, r, _ = step(s, acts(basic={3: 8, 8: 3, 0: 6}))
    assert nxt.score.tolist() == [21, 20]
    assert int(nxt.outcome) == A_WINS
    assert np.asarray(r).tolist() == [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, -1.0, 0.0, -1.0, 0.0]


def test_a_red_zone_kill_can_level_the_score_at_the_threshold() -> None:
    s = game(
        U(slot=3, cls="R", x=10.0, y=5.0, health=1.0),
        U(slot=8, cls="R", x=11.2, y=5.0, health=1.0),
        U(slot=2, cls="H", x=4.0, y=8.0, health=1.0),  # in its own Red Zone
        U(slot=6, cls="M", x=6.0, y=8.0),
        score=(19, 18),
    )
    nxt, r, _ = step(s, acts(basic={3: 8, 6: 2}))
    assert nxt.score.tolist() == [20, 20]
    assert int(nxt.outcome) == DRAW
    assert not np.asarray(r).any()


def test_custom_winning_score() -> None:
    nxt, r, _ = step(duel((2, 0), winning_score=3), acts(basic={8: 3}))
    assert int(nxt.outcome) == ONGOING
    assert nxt.score.tolist() == [2, 1]
    nxt, r, _ = step(duel((2, 0), winning_score=3), acts(basic={3: 8}))
    assert int(nxt.outcome) == A_WINS
    assert np.asarray(r).tolist() == A_SIDE


@pytest.mark.parametrize(
    ("tick", "limit", "outcome"),
    [(299, 300, DRAW), (298, 300, ONGOING), (9, 10, DRAW), (0, 1, DRAW), (8, 10, ONGOING)],
)
def test_tick_limit_draw(tick: int, limit: int, outcome: int) -> None:
    """A game lasts at most `tick_limit` transitions."""
    nxt, r, _ = step(duel((3, 1), tick=tick, tick_limit=limit), acts())
    assert int(nxt.tick) == tick + 1
    assert int(nxt.outcome) == outcome
    assert not np.asarray(r).any()


def test_a_win_on_the_last_tick_beats_the_time_limit() -> None:
    nxt, r, _ = step(duel((19, 0), tick=299), acts(basic={3: 8}))
    assert int(nxt.outcome) == A_WINS
    assert np.asarray(r).tolist() == A_SIDE


def test_a_finished_game_does_not_change(run: Step) -> None:
    s, r, _ = run(duel((19, 5)), acts(basic={3: 8}))
    assert int(s.outcome) == A_WINS
    assert np.asarray(r).any()
    busy = acts(basic={0: 6, 6: 0}, ult={3: 8}, move={0: NORTH, 6: SOUTH, 3: EAST})
    for _ in range(2):
        nxt, r, f = run(s, busy)
        for old, new in zip(jax.tree.leaves(s), jax.tree.leaves(nxt), strict=True):
            assert np.array_equal(np.asarray(old), np.asarray(new))
        assert not np.asarray(r).any()
        assert all(not np.asarray(x).any() for x in jax.tree.leaves(f))
        s = nxt


# ------------------------------------------------------------------------------ reset_done


@pytest.fixture(scope="module")
def env() -> marl_bgs.TeamDeathmatch:
    return marl_bgs.make("tdm", num_envs=2)


def test_reset_done_restarts_only_finished_games(env: marl_bgs.TeamDeathmatch) -> None:
    finished, _, _ = step(duel((19, 5), tick=40), acts(basic={3: 8}))
    running, _, _ = step(duel((3, 5), tick=40), acts(basic={3: 8}))
    assert int(finished.outcome) == A_WINS
    assert int(running.outcome) == ONGOING
    batch = batch_states([finished, running])
    obs, nxt = env.reset_done(jax.random.key(1), batch)
    # Game 1 is untouched.
    for old, new in zip(jax.tree.leaves(batch), jax.tree.leaves(nxt), strict=True):
        assert np.array_equal(np.asarray(old)[1], np.asarray(new)[1])
    # Game 0 starts its next episode: tick 0, no score, the full roster on its pads.
    assert (int(nxt.tick[0]), int(nxt.outcome[0]), int(nxt.episode[0])) == (0, ONGOING, 1)
    assert nxt.score[0].tolist() == [0, 0]
    assert nxt.wave[0].tolist() == [4, 4]
    u = jax.tree.map(lambda a: np.asarray(a)[0], nxt.units)
    assert u.class_id.tolist() == [1, 2, 3, 4, 5] * 2
    assert u.alive.all()
    assert not u.shield.any()
    assert not u.cooldown.any()
    assert u.health.tolist() == [80.0, 200.0, 100.0, 100.0, 100.0] * 2
    # spawn_swap="half": game 0's episode 1 is swapped, so team A stands on the right edge.
    assert bool(nxt.swap[0]) is True
    assert u.pos[:5].tolist() == [[19.5, y] for y in (1.0, 3.0, 5.0, 7.0, 9.0)]
    assert u.pos[5:].tolist() == [[0.5, y] for y in (1.0, 3.0, 5.0, 7.0, 9.0)]
    assert set(obs) == set(env.agents)
    assert obs["a_0"].shape == (2, env.obs_size)
