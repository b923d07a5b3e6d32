"""The renderer: each unit in its team's colour where the state puts it, health bars as long as
health allows, badges and rings for statuses, arrows for hits, and a POV that shows exactly the
engine's view of one agent, turned back into the world frame."""

from __future__ import annotations

import math

import numpy as np
import pygame
import pytest

from marl_bgs.core.arena import BODY_RADIUS, MOVE_VECTORS
from marl_bgs.tdm.tables import REL_TO_ABS
from marl_bgs_clients.canvas import pixels
from marl_bgs_clients.tdm.drawing import replay_scene
from marl_bgs_clients.tdm.render import (
    BADGES,
    DAMAGE,
    FIELD,
    HEALTH,
    RED_ZONE,
    SHIELD,
    TEAM_COLOURS,
    Layout,
    render,
)
from marl_bgs_clients.tdm.scene import NO_SLOT, Scene, UnitDraw, oracle_scene, pov_scene
from marl_bgs_eval.tdm import replays

LAYOUT = Layout()


def _disc_share(surface: pygame.Surface, u: UnitDraw, rgb: tuple[int, int, int]) -> float:
    """The share of a unit's body pixels that have colour `rgb`."""
    cx, cy = LAYOUT.to_px(u.x, u.y)
    r = LAYOUT.length(BODY_RADIUS) - 3  # inside the white outline
    hits = total = 0
    for dx in range(-r, r + 1, 2):
        for dy in range(-r, r + 1, 2):
            if dx * dx + dy * dy <= r * r:
                total += 1
                hits += tuple(surface.get_at((cx + dx, cy + dy)))[:3] == rgb
    return hits / total


def test_oracle_draws_every_living_unit_where_the_state_puts_it(demo) -> None:
    for t in (0, 30, demo.ticks):
        state = replays.oracle(demo, t)
        scene = oracle_scene(state)
        surface = render(scene)
        alive = np.flatnonzero(state.units.alive)
        assert sorted(u.slot for u in scene.units if u.alive) == alive.tolist()
        for u in scene.units:
            if not u.alive:
                continue
            assert (u.x, u.y) == pytest.approx(tuple(state.units.pos[u.slot]), abs=1e-6)
            assert _disc_share(surface, u, TEAM_COLOURS[u.team]) > 0.6
            assert _disc_share(surface, u, TEAM_COLOURS[1 - u.team]) == 0


def test_health_bars_are_as_long_as_health_allows(demo) -> None:
    checked = set()
    for t in range(0, demo.ticks + 1, 5):
        scene = oracle_scene(replays.oracle(demo, t))
        surface = render(scene)
        living = [u for u in scene.units if u.alive]
        for u in living:
            if any(0 < math.hypot(u.x - v.x, u.y - v.y) < 1.5 for v in living):
                continue  # a neighbour's labels may cross this bar
            bar = LAYOUT.health_bar(u)
            row = bar.y + bar.height // 2
            green = sum(
                tuple(surface.get_at((x, row)))[:3] == HEALTH
                for x in range(bar.x, bar.x + bar.width)
            )
            assert green == pytest.approx(bar.width * u.health / u.max_health, abs=1.01)
            checked.add(round(u.health / u.max_health, 2))
    assert len(checked) > 3  # full and damaged units both seen


def test_badges_and_the_shield_ring() -> None:
    unit = UnitDraw(slot=6, class_id=2, x=10.0, y=5.0, alive=True, health=50.0, max_health=200.0,
                    cooldown=4, statuses={"stun": 1, "burst": 2, "shield": 3})  # fmt: skip
    scene = Scene(obstacles=(), red_zone_depth=5.0, units=(unit,), arrows=(), tick=3,
                  tick_limit=300, score=(0, 0), winning_score=20, a_left=True)  # fmt: skip
    surface = render(scene)
    cx, cy = LAYOUT.to_px(unit.x, unit.y)
    r = LAYOUT.length(BODY_RADIUS)
    ring = {tuple(surface.get_at((cx + r + d, cy)))[:3] for d in (1, 2, 3)}
    assert SHIELD in ring
    size = max(9, LAYOUT.length(0.28))
    left = cx - 2 * size // 2  # two badges (stun, burst), in BADGES order
    for k, status in enumerate(("stun", "burst")):
        assert tuple(surface.get_at((left + k * size + 1, cy + r + 3)))[:3] == BADGES[status].colour
    plain = render(
        Scene(**{**scene.__dict__, "units": (UnitDraw(**{**unit.__dict__, "statuses": {}}),)})
    )
    assert SHIELD not in {tuple(plain.get_at((cx + r + d, cy)))[:3] for d in (1, 2, 3)}


def test_red_zones_follow_the_rule_value() -> None:
    empty = Scene(obstacles=(), red_zone_depth=5.0, units=(), arrows=(), tick=0, tick_limit=300,
                  score=(0, 0), winning_score=20, a_left=True)  # fmt: skip
    surface = render(empty)
    assert tuple(surface.get_at(LAYOUT.to_px(4.5, 4.0)))[:3] == RED_ZONE
    assert tuple(surface.get_at(LAYOUT.to_px(15.5, 4.0)))[:3] == RED_ZONE
    assert tuple(surface.get_at(LAYOUT.to_px(5.5, 4.0)))[:3] == FIELD
    off = render(Scene(**{**empty.__dict__, "red_zone_depth": 0.0}))
    assert tuple(off.get_at(LAYOUT.to_px(4.5, 4.0)))[:3] == FIELD


def test_arrows_are_the_last_accepted_actions_with_their_hits(demo) -> None:
    a = demo.arrays
    dealt = a["facts.damage_basic"] + a["facts.damage_ultimate"]
    ticks = [t for t in range(demo.ticks) if dealt[t].sum() > 0]
    assert ticks, "the demo game has hits"
    for t in ticks[:5]:
        scene = replay_scene(demo, t + 1)
        hits = {(x.actor, x.target): x for x in scene.arrows if x.target != NO_SLOT}
        for i, j in zip(*np.nonzero(dealt[t]), strict=True):
            if not a["state.units.alive"][t + 1, i]:
                continue  # the dead are not drawn, nor their arrows
            accepted = a["facts.accepted"][t, i]
            assert int(REL_TO_ABS[i, accepted[1]]) == j
            arrow = hits[(int(i), int(j))]
            assert arrow.kind == ("ultimate" if accepted[2] else "basic")
            assert arrow.amount == pytest.approx(float(dealt[t, i, j]), abs=1e-4)
        surface = render(scene)
        assert np.all(pixels(surface) == np.asarray(DAMAGE), axis=-1).any()


@pytest.mark.parametrize("side", ["a_left", "a_right"])
@pytest.mark.parametrize("slot", [0, 2, 7, 9])
def test_pov_is_exactly_the_agents_view_in_the_world_frame(demo, demo_right, side, slot) -> None:
    """Every unit the view holds is drawn where (and as) the state has it, and nothing else;
    with either team on either side (each agent's frame turned back into the world's)."""
    demo = demo if side == "a_left" else demo_right
    assert demo.header["a_spawn"] == side[2:]
    for t in (0, 25, 40, demo.ticks):
        state = replays.oracle(demo, t)
        view = replays.view(demo, slot, t)
        scene = pov_scene(view, slot, demo.header["a_spawn"] == "right")
        rows = REL_TO_ABS[slot, 1:]
        assert sorted(u.slot for u in scene.units) == sorted(
            int(rows[k]) for k in np.flatnonzero(view.units.visible)
        )
        for u in scene.units:
            assert (u.x, u.y) == pytest.approx(tuple(state.units.pos[u.slot]), abs=1e-4)
            assert u.health == pytest.approx(float(state.units.health[u.slot]), abs=1e-4)
            assert u.class_id == int(state.units.class_id[u.slot])
            assert u.cooldown == int(state.units.cooldown[u.slot])
        assert scene.score == tuple(int(s) for s in state.score)
        assert scene.a_left == (side == "a_left")
        moves = {a.actor: (a.dx, a.dy) for a in scene.arrows if a.kind == "move"}
        for actor, (dx, dy) in moves.items():  # the last move, in world directions
            world = MOVE_VECTORS[int(state.units.last_move[actor])]
            assert (dx, dy) == pytest.approx(tuple(world))
        oracle = oracle_scene(state)
        shown = {(o.kind, round(o.x, 4), round(o.y, 4)) for o in scene.obstacles}
        assert shown == {(o.kind, round(o.x, 4), round(o.y, 4)) for o in oracle.obstacles}


def test_a_hidden_enemy_is_not_drawn_in_the_pov(demo) -> None:
    """At some moment an enemy the agent's team does not see has no pixel of its colour at its
    true place in the POV picture, while the Oracle picture shows it there."""
    found = 0
    for t in range(0, demo.ticks, 6):
        state = replays.oracle(demo, t)
        for slot in (0, 7):
            view = replays.view(demo, slot, t)
            scene = pov_scene(view, slot, demo.header["a_spawn"] == "right")
            oracle = oracle_scene(state)
            enemy_team = 1 - slot // 5
            shown = {u.slot for u in scene.units}
            for u in oracle.units:
                if u.alive and u.team == enemy_team and u.slot not in shown:
                    assert _disc_share(render(scene), u, TEAM_COLOURS[enemy_team]) == 0
                    assert _disc_share(render(oracle), u, TEAM_COLOURS[enemy_team]) > 0.6
                    found += 1
                    break
    assert found >= 3


def test_layout_maps_world_points_both_ways() -> None:
    for x, y in ((0.0, 0.0), (20.0, 10.0), (3.25, 7.5)):
        col, row = LAYOUT.to_px(x, y)
        assert LAYOUT.to_world(col, row) == pytest.approx((x, y), abs=1 / LAYOUT.scale)
    assert LAYOUT.to_px(0, 10)[1] < LAYOUT.to_px(0, 0)[1]  # y grows upward
    assert math.isclose(LAYOUT.length(1.0), LAYOUT.scale)
