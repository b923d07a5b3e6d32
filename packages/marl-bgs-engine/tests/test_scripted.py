"""The scripted teams (TDM-Alpha, TDM-Beta, TDM-Gamma, rush): they read only their own team's
inputs, act legally and deterministically, play every map and roster, and beat random play."""

from __future__ import annotations

from functools import partial

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs import team_inputs
from marl_bgs.core.geometry import body_fits
from marl_bgs.tdm.perception import refresh_sight_lines
from marl_bgs.tdm.scripted import SHARED, scripted_act, scripted_init, scripted_numbers
from marl_bgs.tdm.scripted.styles import STYLES

NAMES = sorted(STYLES)
POLICIES = {name: marl_bgs.scripted_policy(name) for name in NAMES}


def _inputs_a(env, state):
    return team_inputs(env, state)[0]


def _as_data(numbers) -> marl_bgs.Policy:
    """The scripted team of a style given as (possibly traced) numbers."""
    return marl_bgs.Policy(
        "scripted", partial(scripted_act, numbers), partial(scripted_init, numbers)
    )


def _act(name, inputs, memory=None, seed=0):
    """Team A's actions and memory: one program for every style but rush, which has its own
    (`test_the_numbers_as_data_play_as_the_constants` ties them to `scripted_policy`)."""
    n = inputs.obs.shape[0]
    keys = jax.random.split(jax.random.key(seed), n)
    if name not in SHARED:
        policy = POLICIES[name]
        memory = jax.vmap(policy.init)(keys) if memory is None else memory
        return jax.jit(policy.act)(keys, memory, inputs)
    numbers = scripted_numbers(name)
    memory = jax.vmap(partial(scripted_init, numbers))(keys) if memory is None else memory
    return _SHARED_ACT(numbers, keys, memory, inputs)


_SHARED_ACT = jax.jit(scripted_act)


def test_the_numbers_as_data_play_as_the_constants(env47, played):
    # `scripted_act` with a style's numbers as data, compiled once for TDM-Alpha, -Beta and
    # -Gamma, acts and remembers bit for bit as `scripted_policy`, whose numbers are constants.
    assert SHARED == ("tdm-alpha", "tdm-beta", "tdm-gamma")
    once = jax.jit(chex.assert_max_traces(scripted_act, n=1))
    for name in SHARED:
        numbers, policy = scripted_numbers(name), POLICIES[name]
        keys = jax.random.split(jax.random.key(0), env47.num_envs)
        memory = jax.vmap(policy.init)(keys)
        jax.tree.map(
            np.testing.assert_array_equal, memory, jax.vmap(partial(scripted_init, numbers))(keys)
        )
        for state in played:
            inputs = _inputs_a(env47, state)
            want = jax.jit(policy.act)(keys, memory, inputs)
            got = once(numbers, keys, memory, inputs)
            jax.tree.map(np.testing.assert_array_equal, got, want)
            memory = want[1]
    with pytest.raises(marl_bgs.ConfigError, match=r"^name: 'rush' plays by its own rules"):
        scripted_numbers("rush")
    with pytest.raises(marl_bgs.ConfigError, match=r"^name: unknown scripted team 'tdm-delta'"):
        scripted_numbers("tdm-delta")


def test_unknown_names_are_refused():
    allowed = r"allowed: \['rush', 'tdm-alpha', 'tdm-beta', 'tdm-gamma'\]"
    with pytest.raises(marl_bgs.ConfigError, match=r"name: unknown scripted team 'tdm-delta' "
                       r"\(did you mean 'tdm-beta'\?\); " + allowed):  # fmt: skip
        marl_bgs.scripted_policy("tdm-delta")


def _hide_more(state, env, rng):
    """The state with everything team A cannot see about team B changed: hidden enemies get
    other health, statuses, cooldowns, last actions and (where they stay hidden) positions."""
    views = env.views(state)
    hidden = ~np.any(np.asarray(views.units.visible[:, :5, 5:]) > 0.5, axis=1)  # [n, 5]
    u = state.units
    n = hidden.shape[0]
    slots = np.zeros((n, 10), bool)
    slots[:, 5:] = hidden
    mask = jnp.asarray(slots)

    def swap(field, values):
        return jnp.where(mask, jnp.asarray(values, field.dtype), field)

    health = np.asarray(u.health) * rng.uniform(0.3, 1.0, (n, 10))
    units = u.replace(
        health=swap(u.health, np.maximum(health, 1.0)),
        cooldown=swap(u.cooldown, rng.integers(0, 31, (n, 10))),
        stun=swap(u.stun, rng.integers(0, 2, (n, 10))),
        slow_poison=swap(u.slow_poison, rng.integers(0, 6, (n, 10))),
        burst=swap(u.burst, rng.integers(0, 6, (n, 10))),
        last_move=swap(u.last_move, rng.integers(0, 9, (n, 10))),
        last_target=swap(u.last_target, rng.integers(0, 11, (n, 10))),
        last_ult=swap(u.last_ult, rng.integers(0, 2, (n, 10))),
    )
    changed = refresh_sight_lines_batch(state.replace(units=units))
    # Move each hidden enemy a little where it stays hidden and fits.
    pos = np.asarray(changed.units.pos).copy()
    for g, s in zip(*np.nonzero(slots), strict=True):
        for _ in range(20):
            trial = pos.copy()
            trial[g, s] += rng.uniform(-0.6, 0.6, 2)
            if not bool(body_fits(jnp.asarray(trial[g, s]), _game(state.obstacles, g))):
                continue
            others = np.delete(trial[g], s, axis=0)
            if np.min(np.linalg.norm(others - trial[g, s], axis=-1)) < 1.0:
                continue
            moved = refresh_sight_lines_batch(
                changed.replace(units=changed.units.replace(pos=jnp.asarray(trial)))
            )
            seen = np.asarray(env.views(moved).units.visible[g, :5, s]) > 0.5
            if not seen.any():
                pos, changed = trial, moved
                break
    return changed, slots


def _game(tree, g):
    return jax.tree.map(lambda a: a[g], tree)


refresh_sight_lines_batch = jax.jit(jax.vmap(refresh_sight_lines))


@pytest.mark.parametrize("name", NAMES)
def test_what_a_team_cannot_see_does_not_change_its_actions(name, env47, played):
    rng = np.random.default_rng(5)
    compared = 0
    for state in played[::2]:
        other, slots = _hide_more(state, env47, rng)
        if not slots.any():
            continue
        mine, theirs = _inputs_a(env47, state), _inputs_a(env47, other)
        # Team B's own inputs changed: the edit is real.
        changed_b = team_inputs(env47, other)[1].obs != team_inputs(env47, state)[1].obs
        assert bool(jnp.any(changed_b))
        acts, memory = _act(name, mine)
        acts2, memory2 = _act(name, theirs)
        np.testing.assert_array_equal(acts, acts2)
        jax.tree.map(np.testing.assert_array_equal, memory, memory2)
        compared += int(slots.sum())
    assert compared >= 10


@pytest.mark.parametrize("name", NAMES)
def test_actions_are_legal_deterministic_and_ignore_keys(name, env47, played):
    for state in played[::3]:
        inputs = _inputs_a(env47, state)
        acts, _ = _act(name, inputs, seed=0)
        again, _ = _act(name, inputs, seed=1)
        np.testing.assert_array_equal(acts, again)
        a = np.asarray(acts)
        masks = inputs.masks
        n = a.shape[0]
        g, k = np.meshgrid(np.arange(n), np.arange(5), indexing="ij")
        assert np.all(np.asarray(masks.move)[g, k, a[..., 0]])
        assert np.all(np.asarray(masks.pair)[g, k, a[..., 1], a[..., 2]])


# --- against random play and against a team that stands still: one program for the styles ---
# 14 games from fixed starts, full rosters: games 0-7 on test maps 48 and 50 (each map from each
# spawn end twice) against uniformly random legal play; games 8-13 on maps 14, 44 and 46 (where
# TDM-Alpha, TDM-Beta or TDM-Gamma once sat at its rally point for 300 ticks) from both spawn
# ends against a team that stands still.
FIELD_MAPS = [48, 50, 14, 44, 46]
FIELD_MAP = np.array([0, 1] * 4 + [2, 3, 4] * 2)
FIELD_SWAP = np.array([0, 0, 1, 1] * 2 + [0] * 3 + [1] * 3, bool)
STILL = np.arange(14) >= 8


def _standing_still_in(games: np.ndarray, policy):
    """`policy`, except that in `games` its agents stand still (choice 0 of every head, as
    `idle_policy` plays)."""
    still = jnp.asarray(games)

    def act(keys, memory, inputs):
        actions, memory = policy.act(keys, memory, inputs)
        return jnp.where(still[:, None, None], 0, actions), memory

    return marl_bgs.Policy(name=f"{policy.name}, still in some games", act=act, init=policy.init)


@pytest.fixture(scope="module")
def field():
    """`field(name)`: (outcome, team A's score), int [300 ticks, 14 games], of the style `name`
    as team A in the 14 games above, played once per style (finished games restart)."""
    env = marl_bgs.make("tdm", map_id=FIELD_MAPS, num_envs=len(STILL))
    start = env.start_games(FIELD_MAP, np.zeros(len(STILL), int), FIELD_SWAP)
    opponent = _standing_still_in(STILL, marl_bgs.random_policy(env.mode))
    played = {}

    def rollout(policy):
        return marl_bgs.team_rollout(
            env, [policy, opponent], 300, lambda out: (out.state.outcome, out.state.score[:, 0])
        )

    # One program for every style but rush (their numbers as data), one for rush.
    shared = jax.jit(lambda numbers, *args: rollout(_as_data(numbers))(*args))
    rush = jax.jit(rollout(POLICIES["rush"]))

    def play(name):
        if name not in played:
            args = (jax.random.key(0), start)
            run = rush(*args) if name not in SHARED else shared(scripted_numbers(name), *args)
            played[name] = tuple(np.asarray(x) for x in run)
        return played[name]

    return play


@pytest.mark.parametrize("name", NAMES)
def test_every_scripted_team_beats_random_play(name, field):
    # Games 0-7 (maps 48 and 50, both spawn ends); the full record (200 games per team on maps
    # 47-51) is in docs/opponents.md. Each game's first outcome (1: team A won).
    outcomes = field(name)[0][:, ~STILL]
    first = outcomes[np.argmax(outcomes != 0, axis=0), np.arange(outcomes.shape[1])]
    assert np.sum(first == 1) >= 7, first


# --- the kit: each rule of how the scripted teams use their classes ------------------------------
U = marl_bgs.UnitSpec
FAR_ENEMIES = [U(5, "W", 19.0, 1.0), U(6, "M", 19.0, 3.0)]  # out of everyone's sight


def _decide(env, units, name="tdm-alpha", memory=None, **kw):
    """Team A's actions [5, 3] for one authored game on the open map 0 (and its memory). The
    game is batched `env.num_envs` times: the batch size every other test of a style compiled."""
    game = marl_bgs.author_state(map_id=0, units=units, **kw)
    state = marl_bgs.batch_states([game] * env.num_envs)
    acts, memory = _act(name, _inputs_a(env, state), memory)
    acts = np.asarray(acts)
    assert (acts == acts[:1]).all()  # copies of one game, one decision
    return acts[0], memory


@pytest.mark.parametrize("name", ["tdm-alpha", "tdm-beta", "tdm-gamma"])
def test_the_priest_heals_the_most_hurt_ally_in_reach(name, env47):
    units = [U(4, "P", 5.0, 5.0), U(1, "W", 6.0, 5.0, health=120), U(0, "M", 5.0, 7.0, health=40),
             *FAR_ENEMIES]  # fmt: skip
    acts, _ = _decide(env47, units, name)
    assert acts[4, 1:].tolist() == [
        1,
        0,
    ]  # Lesser Heal on own slot 0 (the Mage at 50%, the Warrior at 60%)


def test_salvation_saves_a_dying_ally(env47):
    units = [U(4, "P", 5.0, 5.0), U(1, "W", 8.0, 5.0, health=40), *FAR_ENEMIES]
    acts, _ = _decide(env47, units)
    assert acts[4, 1:].tolist() == [2, 1]  # Salvation on own slot 1
    cooling = [U(4, "P", 5.0, 5.0, cooldown=3), U(1, "W", 7.0, 5.0, health=40), *FAR_ENEMIES]
    acts, _ = _decide(env47, cooling)
    assert acts[4, 1:].tolist() == [2, 0]  # no Salvation ready: Lesser Heal instead


def test_a_trapped_enemy_is_left_alone_unless_it_can_be_finished(env47):
    units = [U(0, "M", 5.0, 5.0, cooldown=5), U(5, "W", 7.5, 5.0, trap=3), U(6, "R", 7.0, 7.0)]
    acts, _ = _decide(env47, units)
    assert acts[0, 1:].tolist() == [7, 0]  # the Rogue (enemy slot 1), not the trapped Warrior
    alone = [U(0, "M", 5.0, 5.0, cooldown=5), U(5, "W", 7.5, 5.0, trap=3)]
    assert _decide(env47, alone)[0][0, 1:].tolist() == [0, 0]
    finish = [U(0, "M", 5.0, 5.0, cooldown=5), U(5, "W", 7.5, 5.0, trap=3, health=10)]
    assert _decide(env47, finish)[0][0, 1:].tolist() == [6, 0]


def test_the_mage_bursts_with_enemies_in_reach(env47):
    near = [U(0, "M", 5.0, 5.0), U(5, "W", 8.5, 5.0)]
    assert _decide(env47, near)[0][0, 1:].tolist() == [0, 1]
    far = [U(0, "M", 5.0, 5.0), U(5, "W", 10.0, 5.0)]
    assert _decide(env47, far)[0][0, 2] == 0


def test_the_warrior_charges_the_backline(env47):
    units = [U(1, "W", 5.0, 5.0), U(5, "W", 6.2, 5.0), U(9, "P", 9.5, 5.5)]
    acts, _ = _decide(env47, units)
    assert acts[1, 1:].tolist() == [10, 1]  # Charge onto the Priest (enemy slot 4)


def test_the_rogue_poisons_the_healed_target(env47):
    def units(health):
        return [U(3, "R", 5.0, 5.0), U(5, "W", 6.0, 5.6, health=150),
                U(6, "H", 6.0, 4.4, health=health)]  # fmt: skip

    _, memory = _decide(env47, units(50.0))
    acts, _ = _decide(env47, units(58.0), memory=memory)
    assert acts[3, 1:].tolist() == [7, 1]  # Poison on the Hunter, healed since last tick


def test_agents_keep_out_of_their_own_red_zone_with_enemies_near(env47):
    # The Priest would stand behind its patient, inside its own Red Zone (x < 5); with an enemy
    # in sight it keeps out.
    units = [U(4, "P", 5.6, 5.0), U(1, "W", 6.0, 7.0, health=100), U(5, "R", 10.0, 5.0)]
    acts, _ = _decide(env47, units)
    move = acts[4, 0]
    assert 5.6 + float(marl_bgs.core.arena.MOVE_VECTORS[move][0]) >= 5.0


@pytest.fixture(scope="module")
def every_map():
    """All 52 maps, game g on map g: full and unequal rosters (1-5 a side, repeated classes)
    in turn, team A's spawn end swapped in odd games. (env, start states)."""
    rosters = [("MWHRP", "MWHRP"), ("MW", "HRPWM"), ("P", "RRR"), ("WWHH", "M")]
    env = marl_bgs.make("tdm", map_id=list(range(52)), num_envs=52, rosters=rosters)
    games = np.arange(52)
    return env, env.start_games(games, games % len(rosters), games % 2 == 1)


def test_every_scripted_team_plays_every_map_roster_and_spawn_end(every_map):
    # All 52 maps, full and unequal rosters (1 to 5 a side, on both sides), both spawn ends:
    # 40 ticks of two matches that field every style once, every action legal, positions on
    # the field.
    env, start = every_map

    def summarize(out):
        facts = out.info["facts"]
        pos = out.state.units.pos
        inside = (pos >= 0.0) & (pos <= jnp.asarray([20.0, 10.0]))
        return jnp.any(facts.move_rejected | facts.combat_rejected), jnp.all(inside)

    assert len(NAMES) % 2 == 0
    for k in range(0, len(NAMES), 2):
        pair = NAMES[k : k + 2]
        play = jax.jit(marl_bgs.team_rollout(env, [POLICIES[n] for n in pair], 40, summarize))
        rejected, inside = play(jax.random.key(k), start)
        assert not bool(jnp.any(rejected)), pair
        assert bool(jnp.all(inside)), pair


def test_move_ends_equal_a_plain_test_against_every_obstacle():
    # `steering.move_ends` (games on the last axis, the 12 obstacles listed for each agent's
    # cell, one at a time) against a plain per-game test of every path sample against all 32
    # obstacles: on the most crowded maps, standing points drawn where a body fits, any speed.
    from marl_bgs.core.arena import MOVE_VECTORS
    from marl_bgs.tdm.scripted.steering import PATH_SAMPLES, move_ends

    maps = [39, 45, 47, 12]
    env = marl_bgs.make("tdm", map_id=maps, num_envs=64)
    state = env.start_games(np.arange(64) % len(maps), np.zeros(64, int), np.zeros(64, bool))
    rng = np.random.default_rng(5)
    trial = rng.uniform([0.5, 0.5], [19.5, 9.5], (64, 400, 2)).astype(np.float32)
    fits = np.asarray(jax.vmap(body_fits)(jnp.asarray(trial), state.obstacles))  # [64, 400]
    me = np.stack([trial[g][fits[g]][:5] for g in range(64)])  # [64, 5, 2]
    speed = rng.choice([0.0, 0.7, 1.0, 1.3, 2.0], (64, 5)).astype(np.float32)
    ends = np.asarray(jax.jit(move_ends)(jnp.asarray(me), jnp.asarray(speed), state.obstacles,
                                         state.near))  # fmt: skip
    step = MOVE_VECTORS[None, None] * speed[..., None, None]  # [64, 5, 9, 2]
    samples = me[:, :, None, None] + step[:, :, :, None] * np.asarray(PATH_SAMPLES)[:, None]
    ok = np.asarray(jax.vmap(body_fits)(jnp.asarray(samples), state.obstacles))  # [64, 5, 9, S]
    run = np.cumprod(ok, axis=-1).astype(bool)
    covered = np.max(np.where(run, np.asarray(PATH_SAMPLES), 0.0), axis=-1)
    expected = me[:, :, None] + step * covered[..., None]
    np.testing.assert_allclose(ends, expected, atol=1e-6)
    assert 0.05 < np.mean(covered < 1.0) < 0.95  # both free and blocked moves are tested


def test_a_team_that_finds_nobody_searches_the_enemy_end(field):
    # Against a team that stands still, waiting at the rally point would draw every game; each
    # style crosses maps 14, 44 and 46 (games 8-13) and scores from both spawn ends within 150
    # ticks.
    for name in ("tdm-alpha", "tdm-beta", "tdm-gamma"):
        scored = field(name)[1][:150, STILL].max(axis=0)
        assert (scored > 0).all(), (name, scored)


def test_every_route_step_is_walkable_on_every_map(every_map):
    # A step the route grid counts (`route.terrain`) is one a body walks straight, touching no
    # obstacle: 201 points along every counted step of all 52 maps fit against all obstacles.
    from marl_bgs.tdm.scripted import route

    _, state = every_map
    points, steps, _ = jax.jit(jax.vmap(route.terrain))(state.obstacles)
    points, steps = np.asarray(points), np.asarray(steps)
    along = np.linspace(0.0, 1.0, 201, dtype=np.float32)[:, None]
    counted = 0
    for k, (dx, dy) in enumerate(route.STEPS):
        g, i, j = np.nonzero(steps[..., k] < route.FAR)
        a, b = points[g, i, j], points[g, i + dx, j + dy]
        path = a[:, None] + (b - a)[:, None] * along  # [steps, 201, 2]
        obstacles = jax.tree.map(lambda f, g=g: f[g][:, None], state.obstacles)
        fits = np.asarray(jax.jit(body_fits)(jnp.asarray(path), obstacles))
        bad = np.nonzero(~fits.all(axis=1))[0]
        assert bad.size == 0, f"map {g[bad[0]]} cell {i[bad[0]], j[bad[0]]} direction {(dx, dy)}"
        counted += len(g)
    assert counted > 52 * 100  # most cells of most maps have passable steps
