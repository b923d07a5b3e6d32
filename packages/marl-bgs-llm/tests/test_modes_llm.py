"""LLM Systems find a mode's text view and reply fields only through the text-parts registry:
Two-Bridge's view `bridge-text-v1` shows only the permitted view and lists exactly the mask, and
an LLM System (a function, or a model behind the fake server) plays Two-Bridge through the same
`evaluate` as Team Deathmatch."""

from __future__ import annotations

import re

import jax
import numpy as np
import pytest

import marl_bgs
import marl_bgs_eval as ev
from marl_bgs import team_inputs
from marl_bgs.two_bridge import layout as lay
from marl_bgs.two_bridge.rules import enemies_visible
from marl_bgs_llm import LLMError, TextParts, function_system, make_system, register, text_parts
from marl_bgs_llm.testing import FakeServer, eager
from marl_bgs_llm.two_bridge import ACTION_NAMES, PARTS, TEXT_VIEW, format_view

BRIDGE = {"mode": "two-bridge", "maps": "V1_Base", "games_per_map": 2, "batch_size": 2,
          "tick_limit": 3, "metrics": "none"}  # fmt: skip
CALLS = lay.NUM_FRIENDS * 3 * 2  # every Marine alive with a choice, 3 ticks, 2 games


def _prompts(env, state) -> list[list[str]]:
    inputs = jax.device_get(team_inputs(env, state)[0])
    take = lambda tree, g, k: jax.tree.map(lambda a: a[g, k], tree)  # noqa: E731
    return [[format_view(take(inputs.views, g, k), take(inputs.masks, g, k), k)
             for k in range(lay.NUM_FRIENDS)] for g in range(env.num_envs)]  # fmt: skip


@pytest.fixture(scope="module")
def fogged():
    env = marl_bgs.make("two-bridge", variant="V1_Base", num_envs=2, fog=True)
    _, state = env.reset(jax.random.key(0))
    return env, state


def test_the_view_lists_exactly_the_mask_and_what_the_minimap_shows(fogged) -> None:
    env, state = fogged
    inputs = jax.device_get(team_inputs(env, state)[0])
    for g, texts in enumerate(_prompts(env, state)):
        for k, text in enumerate(texts):
            assert text.startswith(f"MARL-BGs {TEXT_VIEW}\n")
            assert f"you are marine_{k}" in text
            names = re.search(r"^actions: (.*)$", text, re.M).group(1).split(", ")  # type: ignore[union-attr]
            mask = np.zeros(inputs.masks.flat.shape[-1], bool)
            mask[[ACTION_NAMES.index(n) for n in names]] = True
            assert np.array_equal(mask, inputs.masks.flat[g, k])
        cells = re.search(r"^cells with your Marines: (.*)$", texts[0], re.M).group(1)  # type: ignore[union-attr]
        for x, y in np.asarray(state.friend_pos[g]):  # each Marine's cell, by its centre
            cx, cy = (np.floor(np.asarray([x, y]) / lay.CELL) + 0.5) * lay.CELL
            assert f"({cx:g}, {cy:g})" in cells
        assert "health 45" in texts[0]


def test_what_the_team_cannot_see_does_not_change_the_prompt(fogged) -> None:
    env, state = fogged
    seen = np.asarray(enemies_visible(jax.tree.map(lambda a: a[0], state), True))
    assert not seen.any(), "at the start, under fog, the enemies are out of sight"
    before = _prompts(env, state)
    assert "cells with enemies: none in sight" in before[0][0]
    moved = state.replace(enemy_pos=state.enemy_pos.at[0, :, 1].add(1.0))
    assert _prompts(env, moved) == before
    # Without fog the same enemies are on the minimap (the test can fail).
    clear = marl_bgs.make("two-bridge", variant="V1_Base", num_envs=2)
    assert "cells with enemies: none" not in _prompts(clear, state)[0][0]


def test_a_model_system_plays_two_bridge_as_its_twin_and_bad_names_idle() -> None:
    def reply(body):  # marine_4 names an action that does not exist; the others play eager
        if "you are marine_4" in body["messages"][-1]["content"]:
            return '{"action": "fly"}', "stop"
        return eager(body)  # attacks when it may, else moves east

    with FakeServer(reply) as server:
        team = make_system("m", server.url, name="llm-any", slots=4)
        assert team.mode == "tdm-v2"
        twin = team.for_mode("two-bridge")
        assert twin.mode == "two-bridge-v1"
        assert twin.for_mode("tdm") is team
        games = ev.evaluate(team, **BRIDGE)
    assert len(games) == 2
    calls = team.usage.calls()  # the twins share one usage log
    assert len(calls) == CALLS == len(server.requests)
    assert calls["kind"].value_counts().to_dict() == {"legal": CALLS * 4 // 5, "masked": CALLS // 5}
    prompts = [b["messages"][-1]["content"] for b in server.requests]
    assert all(p.startswith(f"MARL-BGs {TEXT_VIEW}") for p in prompts)
    props = server.requests[0]["response_format"]["json_schema"]["schema"]["properties"]
    assert list(props) == ["action"]
    assert "east" in props["action"]["enum"]


def test_a_function_system_takes_the_mode_and_adapts() -> None:
    team = function_system(lambda view, actions: ("stay",), name="fn-bridge", mode="two-bridge")
    assert team.mode == "two-bridge-v1"
    assert team.for_mode("tdm").mode == "tdm-v2"
    assert team.for_mode("tdm").usage is team.usage
    with pytest.raises(LLMError, match=r"^mode: unknown mode"):
        function_system(lambda view, actions: ("stay",), name="fn", mode="duel")


def test_the_registry_and_its_errors() -> None:
    assert text_parts("two-bridge-v1") is PARTS
    assert text_parts("tdm").fields == ("move", "combat")
    with pytest.raises(LLMError, match=r"^mode: unknown mode 'duel'"):
        text_parts("duel")
    with pytest.raises(LLMError, match="already has LLM text parts"):
        register("tdm", PARTS)
    with pytest.raises(LLMError, match=r"^parts: expected a marl_bgs_llm\.TextParts"):
        register("tdm", "parts")  # type: ignore[arg-type]
    good = {"view": "v", "fields": ("action",), "prompt": PARTS.prompt, "legal": PARTS.legal,
            "action": PARTS.action, "idle": [0], "choices": PARTS.choices}  # fmt: skip
    assert TextParts(**good).idle.dtype == np.int32  # type: ignore[arg-type]
    for field, bad in [("fields", ("root",)), ("fields", ("move", "move")), ("fields", ("a_b",)),
                       ("fields", ()), ("idle", [0.5]), ("legal", 3), ("view", "")]:  # fmt: skip
        with pytest.raises(LLMError, match=f"^{field}:"):
            TextParts(**{**good, field: bad})  # type: ignore[arg-type]


def test_the_prompt_command_plays_any_mode_with_its_own_team_count() -> None:
    from marl_bgs_eval import EvalError
    from marl_bgs_llm.cli import game_prompt

    text = game_prompt("random", mode="two-bridge", map_id=0, tick=0, slot=1)  # V1_Base
    assert text.startswith(f"MARL-BGs {TEXT_VIEW}")
    assert "you are marine_1" in text
    with pytest.raises(EvalError, match=r"^system_b: mode 'two-bridge-v1' has 1 team"):
        game_prompt("random", "idle", mode="two-bridge")
    with pytest.raises(EvalError, match=r"^system_b: mode 'tdm-v2' has 2 team"):
        game_prompt("random", mode="tdm")
