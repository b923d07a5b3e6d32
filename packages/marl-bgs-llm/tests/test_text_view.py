"""The text view `actor-text-v1`: built from the agent's permitted view only (hidden changes leave
the prompt identical), its legal lists are exactly the masks, both spawn ends read alike, and its
numbers are the engine's."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import marl_bgs
from marl_bgs import team_inputs
from marl_bgs.core.arena import MOVE_NAMES
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.actions import COMBAT_PAIRS
from marl_bgs_llm.tdm import RULES, TEXT_VIEW, format_actor_view

N = 4


@pytest.fixture(scope="module")
def env():
    return marl_bgs.make("tdm", map_id=[47, 42, 46, 3], num_envs=N)


def _texts(env, state, team: int) -> list[list[str]]:
    """Every agent's prompt [game][slot] of one team."""
    inputs = team_inputs(env, state)[team]
    views, masks = jax.device_get((inputs.views, inputs.masks))
    take = lambda tree, g, k: jax.tree.map(lambda a: a[g, k], tree)  # noqa: E731
    return [[format_actor_view(take(views, g, k), take(masks, g, k)) for k in range(5)]
            for g in range(N)]  # fmt: skip


@pytest.fixture(scope="module")
def midgame(env):
    """A state after 40 ticks of random legal play (fights, deaths, statuses)."""
    _, state = env.reset(jax.random.key(0))
    step = jax.jit(env.step)
    sample = jax.jit(env.sample_actions)
    for t in range(40):
        k1, k2 = jax.random.split(jax.random.key(100 + t))
        _, state, *_ = step(k2, state, sample(k1, state))
    return state


def _section(text: str, name: str) -> str:
    return re.search(rf"^{name}: (.*)$", text, re.M).group(1)  # type: ignore[union-attr]


def test_legal_lists_are_exactly_the_masks(env, midgame) -> None:
    for team in (0, 1):
        inputs = jax.device_get(team_inputs(env, midgame)[team])
        texts = _texts(env, midgame, team)
        for g in range(N):
            for k in range(5):
                moves = _section(texts[g][k], "moves").split(", ")
                combats = _section(texts[g][k], "combat").split(", ")
                move_mask = np.zeros(9, bool)
                move_mask[[MOVE_NAMES.index(m) for m in moves]] = True
                pair_mask = np.zeros((11, 2), bool)
                for c in combats:
                    pair_mask[COMBAT_PAIRS[c]] = True
                assert len(set(moves)) == len(moves)
                assert len(set(combats)) == len(combats)
                assert np.array_equal(move_mask, inputs.masks.move[g, k])
                assert np.array_equal(pair_mask, inputs.masks.pair[g, k])


def test_what_the_team_cannot_see_does_not_change_the_prompt(env) -> None:
    _, state = env.reset(jax.random.key(1))
    visible = np.asarray(team_inputs(env, state)[0].views.units.visible)  # [N, 5, 10]
    hidden_enemy = ~visible[:, :, 5:].any(axis=1)  # [N, 5]: no agent of team A sees it
    assert hidden_enemy.all(), "at the start every enemy is out of sight"
    before = _texts(env, state, 0)
    u = state.units
    enemy = jnp.arange(10) >= 5
    changed = u.replace(
        health=jnp.where(enemy, u.health * 0.5, u.health),
        cooldown=jnp.where(enemy, 7, u.cooldown),
        stun=jnp.where(enemy, 2, u.stun),
        slow_poison=jnp.where(enemy, 3, u.slow_poison),
        last_move=jnp.where(enemy, 2, u.last_move),
        pos=u.pos.at[:, 5:, 1].add(0.25),
    )
    perturbed = state.replace(units=changed)
    assert not np.asarray(team_inputs(env, perturbed)[0].views.units.visible)[:, :, 5:].any()
    assert _texts(env, perturbed, 0) == before
    # The same change to units the team does see changes the prompt (the test can fail).
    ally = jnp.arange(10) < 5
    seen = state.replace(units=u.replace(health=jnp.where(ally, u.health * 0.5, u.health)))
    assert _texts(env, seen, 0) != before


@pytest.mark.default_compile  # the two ends' positions agree to the last digit shown
def test_both_spawn_ends_read_alike(env) -> None:
    """On mirrored maps with mirrored rosters, the same own-frame actions keep the game a mirror
    image: team A's agent k and team B's agent k read the same view (the obstacle list aside,
    whose slot numbers differ between the ends)."""
    _, state = env.reset(jax.random.key(2))
    step = jax.jit(env.step)
    for t in range(6):
        move = jnp.asarray([3, 5, 7, 3, 1])[t % 5]  # east, northeast, southeast, east, north
        actions = jnp.zeros((N, 10, 3), jnp.int32).at[:, :, 0].set(move)
        _, state, *_ = step(jax.random.key(t), state, actions)
    a, b = _texts(env, state, 0), _texts(env, state, 1)
    after_map = lambda text: text.split("== You ==", 1)[1]  # noqa: E731
    for g in range(N):
        for k in range(5):
            assert after_map(a[g][k]) == after_map(b[g][k])


def test_prompt_parts_and_the_engine_numbers(env, midgame) -> None:
    text = _texts(env, midgame, 0)[0][0]
    assert text.startswith(f"MARL-BGs {TEXT_VIEW}\n")
    order = ["== Rules ==", "== Map ==", "== You ==", "== Context ==", "== Roster ==",
             "== Units you know of ==", "== Who sees whom", "== Previous actions you saw ==",
             "== Your legal choices =="]  # fmt: skip
    places = [text.index(part) for part in order]
    assert places == sorted(places)
    assert text.endswith('"combat": "<one legal combat choice>"}.')
    for cid in range(1, 6):
        assert f"health {C.MAX_HEALTH[cid]:g}, speed {C.SPEED[cid]:g}" in RULES
    assert format_actor_view(*_one(env, midgame), rules=False).count("== Rules ==") == 0


def _one(env, state):
    inputs = jax.device_get(team_inputs(env, state)[0])
    return jax.tree.map(lambda a: a[0, 0], inputs.views), jax.tree.map(
        lambda a: a[0, 0], inputs.masks
    )
