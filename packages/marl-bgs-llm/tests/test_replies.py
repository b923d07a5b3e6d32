"""Replies: the schema and grammar name exactly the legal choices; each kind of reply is judged
as documented, and only a legal choice becomes an action."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from marl_bgs.core.arena import MOVE_NAMES
from marl_bgs.tdm.actions import COMBAT_PAIRS
from marl_bgs_llm import LLMError
from marl_bgs_llm.replies import check_reply, parse_reply, reply_grammar, reply_schema

MOVES = ["stay", "north", "east"]
COMBATS = ["no_combat", "ultimate", "enemy_2_basic"]
LEGAL = {"move": MOVES, "combat": COMBATS}


def test_schema_lists_the_legal_names_and_nothing_else() -> None:
    schema = reply_schema(LEGAL)
    assert schema["properties"]["move"]["enum"] == MOVES
    assert schema["properties"]["combat"]["enum"] == COMBATS
    assert schema["required"] == ["move", "combat"]
    assert schema["additionalProperties"] is False


def test_grammar_admits_exactly_the_legal_names() -> None:
    grammar = reply_grammar(LEGAL)
    rules = dict(re.findall(r"^(move|combat) ::= (.*)$", grammar, re.M))
    read = lambda rule: [json.loads(json.loads(x)) for x in rule.split(" | ")]  # noqa: E731
    assert read(rules["move"]) == MOVES
    assert read(rules["combat"]) == COMBATS


@pytest.mark.parametrize("move", MOVES)
@pytest.mark.parametrize("combat", COMBATS)
def test_a_legal_reply_is_its_action(move: str, combat: str) -> None:
    checked = check_reply(json.dumps({"move": move, "combat": combat}), "stop", LEGAL, "tdm")
    assert checked.kind == "legal"
    target, ult = COMBAT_PAIRS[combat]
    assert checked.action.tolist() == [MOVE_NAMES.index(move), target, ult]


@pytest.mark.parametrize(
    ("text", "finish", "kind"),
    [
        ('{"move": "north", "combat": "enemy_3_basic"}', "stop", "masked"),  # not legal now
        ('{"move": "up", "combat": "no_combat"}', "stop", "masked"),  # no such move
        ('{"move": "north"', "length", "cut_off"),
        ('{"move": "north"', "stop", "malformed"),
        ('{"move": "north", "combat": "no_combat", "why": "x"}', "stop", "malformed"),
        ('{"move": 3, "combat": "no_combat"}', "stop", "malformed"),
        ("north, no_combat", "stop", "malformed"),
        (None, None, "failed"),
    ],
)
def test_every_bad_reply_becomes_stay_and_no_combat(text, finish, kind) -> None:
    checked = check_reply(text, finish, LEGAL, "tdm")
    assert checked.kind == kind
    assert np.array_equal(checked.action, [0, 0, 0])


def test_thinking_and_a_code_fence_around_the_object_are_read() -> None:
    text = '<think>east is open</think>\n```json\n{"move": "east", "combat": "ultimate"}\n```'
    assert parse_reply(text, ["move", "combat"]) == {"move": "east", "combat": "ultimate"}
    assert check_reply(text, "stop", LEGAL, "tdm").kind == "legal"


def test_the_old_separate_lists_get_a_message_naming_the_new_form() -> None:
    with pytest.raises(LLMError, match=r"^reply_schema: expected \{reply field: legal names\}"):
        reply_schema(MOVES, COMBATS)  # type: ignore[arg-type]
    with pytest.raises(LLMError, match=r"^reply_grammar: expected"):
        reply_grammar(MOVES, COMBATS)  # type: ignore[arg-type]
    with pytest.raises(LLMError, match="the separate moves and combats lists are gone"):
        check_reply("{}", "stop", MOVES, COMBATS)  # type: ignore[arg-type]


def test_a_grammar_has_one_rule_per_field_in_order() -> None:
    grammar = reply_grammar({"action": ["stay", "attack_enemy_0"]})
    assert grammar.splitlines()[0] == 'root ::= "{" ws "\\"action\\"" ws ":" ws action ws "}"'
    assert grammar.splitlines()[1] == 'action ::= "\\"stay\\"" | "\\"attack_enemy_0\\""'
