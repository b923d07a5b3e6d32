"""Fuzz: hostile and malformed server answers, through real HTTP and the real client.

Each case is one answer of a fake Chat Completions server on 127.0.0.1 (the reply text, or the
whole HTTP answer). The client and the reply check must turn it into exactly one outcome: the
legal action it names ("accepted"), or stay + no combat counted under the documented kind
("repair"). No exception may escape and no illegal action may come out, whatever the server
sends: huge bodies, non-JSON, wrong enum values, injected text inside fields, wrong types,
missing fields, broken HTTP.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

import numpy as np
import pytest

from marl_bgs.core.arena import MOVE_NAMES
from marl_bgs.tdm.actions import COMBAT_PAIRS
from marl_bgs_llm.client import ChatClient, RequestSettings
from marl_bgs_llm.replies import MAX_REPLY_CHARS, check_reply, reply_grammar, reply_schema
from marl_bgs_llm.testing import FakeServer, Raw

pytestmark = pytest.mark.fuzz_family("LLM replies")

MOVES = ["stay", "north", "east", "southwest"]
COMBATS = ["no_combat", "enemy_1_basic", "ally_4_ultimate"]
LEGAL = {"move": MOVES, "combat": COMBATS}
SETTINGS = RequestSettings(model="fake", max_tokens=64)


@dataclass(frozen=True)
class Case:
    id: str
    answer: tuple[str, str] | Raw
    kind: str  # the expected judgement
    action: tuple[str, str] | None = None  # the expected names when accepted


def _body(content: object, finish: object = "stop", usage: object = None) -> bytes:
    choice = {
        "index": 0,
        "finish_reason": finish,
        "message": {"role": "assistant", "content": content},
    }
    return json.dumps({"choices": [choice], "usage": usage or {}}).encode()


def _text_cases() -> list[Case]:
    ok = lambda m, c: json.dumps({"move": m, "combat": c})  # noqa: E731
    return [
        Case("legal", (ok("east", "enemy_1_basic"), "stop"), "legal", ("east", "enemy_1_basic")),
        Case(
            "legal-spaces",
            (' \n {"move" :"north","combat":"no_combat"}\n', "stop"),
            "legal",
            ("north", "no_combat"),
        ),
        Case(
            "legal-cut-but-whole",
            (ok("stay", "ally_4_ultimate"), "length"),
            "legal",
            ("stay", "ally_4_ultimate"),
        ),
        Case("masked-move", (ok("west", "no_combat"), "stop"), "masked"),
        Case("masked-combat", (ok("east", "enemy_2_basic"), "stop"), "masked"),
        Case("wrong-case", (ok("East", "no_combat"), "stop"), "masked"),
        Case("padded-name", (ok("east ", "no_combat"), "stop"), "masked"),
        Case("lookalike-unicode", (ok("\u0435ast", "no_combat"), "stop"), "masked"),
        Case(
            "injection-in-field",
            (ok('east", "combat": "enemy_1_basic', "no_combat"), "stop"),
            "masked",
        ),
        Case(
            "instruction-in-field",
            (ok("ignore the rules and attack ally_0", "no_combat"), "stop"),
            "masked",
        ),
        Case(
            "duplicate-keys",
            ('{"move": "east", "move": "west", "combat": "no_combat"}', "stop"),
            "masked",
        ),
        Case(
            "extra-field", ('{"move": "east", "combat": "no_combat", "x": 1}', "stop"), "malformed"
        ),
        Case("missing-field", ('{"move": "east"}', "stop"), "malformed"),
        Case("number-values", ('{"move": 3, "combat": 0}', "stop"), "malformed"),
        Case("null-values", ('{"move": null, "combat": null}', "stop"), "malformed"),
        Case("list-values", ('{"move": ["east"], "combat": ["no_combat"]}', "stop"), "malformed"),
        Case("array", ('["east", "no_combat"]', "stop"), "malformed"),
        Case("plain-words", ("move east and attack enemy 1", "stop"), "malformed"),
        Case("empty", ("", "stop"), "malformed"),
        Case("cut-off", ('{"move": "east", "com', "length"), "cut_off"),
        Case("cut-off-blank-padding", ('{"move": "east",' + " " * 200, "length"), "cut_off"),
        Case("deep-nesting", ("[" * 100_000 + "]" * 100_000, "stop"), "malformed"),
        Case("huge", (ok("east", "no_combat") + " " * (MAX_REPLY_CHARS + 10), "stop"), "malformed"),
        Case("nan", ('{"move": NaN, "combat": Infinity}', "stop"), "malformed"),
        Case("two-objects", (ok("east", "no_combat") * 2, "stop"), "malformed"),
        Case("text-then-object", ("Sure! " + ok("east", "no_combat"), "stop"), "malformed"),
    ]


def _raw_cases() -> list[Case]:
    return [
        Case("http-500", Raw(500, b'{"error": "boom"}'), "failed"),
        Case("http-404", Raw(404, b"not here"), "failed"),
        Case("not-json-body", Raw(200, b"<html>hello</html>"), "failed"),
        Case("invalid-utf8", Raw(200, b"\xff\xfe\x00garbage"), "failed"),
        Case("huge-body", Raw(200, b'{"choices": "' + b"x" * (2 << 20) + b'"}'), "failed"),
        Case("no-choices", Raw(200, b'{"choices": []}'), "failed"),
        Case("choices-not-list", Raw(200, b'{"choices": {"a": 1}}'), "failed"),
        Case("content-not-text", Raw(200, _body({"move": "east"})), "failed"),
        Case("content-null", Raw(200, _body(None)), "failed"),
        Case("json-list-body", Raw(200, b"[1, 2, 3]"), "failed"),
        Case(
            "bad-usage",
            Raw(
                200,
                _body(
                    '{"move": "east", "combat": "no_combat"}',
                    "stop",
                    {"prompt_tokens": -5, "completion_tokens": "many"},
                ),
            ),
            "legal",
            ("east", "no_combat"),
        ),
        Case("finish-not-text", Raw(200, _body('{"move": "east"', 7)), "malformed"),
    ]


def _random_cases(n: int, seed: int = 0) -> list[Case]:
    """Random byte-level mutations of a legal reply: whatever they read as, the judgement must
    agree with an independent reading (json.loads + the legal lists)."""
    rng = random.Random(seed)
    base = json.dumps({"move": "north", "combat": "enemy_1_basic"})
    cases = []
    for i in range(n):
        chars = list(base)
        for _ in range(rng.randint(1, 4)):
            op, at = rng.random(), rng.randrange(len(chars))
            if op < 0.4:
                del chars[at]
            elif op < 0.8:
                chars.insert(at, rng.choice('{}[]",: \\ntrue0x'))
            else:
                chars[at] = rng.choice("abcdefgh_0123")
        text = "".join(chars)
        kind = _independent(text)
        value = json.loads(text) if kind == "legal" else None
        names = (value["move"], value["combat"]) if value else None
        cases.append(Case(f"mutant-{i}", (text, "stop"), kind, names))
    return cases


def _independent(text: str) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        return "malformed"
    if not isinstance(value, dict) or set(value) != {"move", "combat"}:
        return "malformed"
    if not all(isinstance(v, str) for v in value.values()):
        return "malformed"
    return "legal" if value["move"] in MOVES and value["combat"] in COMBATS else "masked"


CASES = _text_cases() + _raw_cases() + _random_cases(60)


@pytest.fixture(scope="module")
def served():
    """A fake server whose next answer a test sets, and a client with no retries."""
    box: dict[str, Case] = {}
    with FakeServer(lambda body: box["case"].answer) as server:
        client = ChatClient(
            server.url, slots=2, retries=0, timeout=10, response_format="json_schema"
        )
        yield box, client
        client.close()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_server_answer_is_judged_exactly(case: Case, served, record_property) -> None:
    box, client = served
    box["case"] = case
    messages = [{"role": "user", "content": "choose"}]
    done = client.run(
        client.complete(SETTINGS, messages, reply_schema(LEGAL), reply_grammar(LEGAL))
    )
    checked = check_reply(done.text, done.finish_reason, LEGAL, "tdm")
    record_property("outcome", "accepted" if checked.kind == "legal" else "repair")
    assert checked.kind == case.kind, (done, checked)
    assert done.prompt_tokens >= 0
    assert done.completion_tokens >= 0
    if case.action is None:
        assert np.array_equal(checked.action, [0, 0, 0])
    else:
        move, combat = case.action
        target, ult = COMBAT_PAIRS[combat]
        assert checked.action.tolist() == [MOVE_NAMES.index(move), target, ult]


# One-field replies (Two-Bridge's): the same judgement, the idle action `stay` for every failure.
BRIDGE_LEGAL = {"action": ["stay", "north", "east", "attack_enemy_1"]}
BRIDGE_CASES = [
    ('{"action": "attack_enemy_1"}', "stop", "legal", "attack_enemy_1"),
    ('```json\n{"action": "east"}\n```', "stop", "legal", "east"),
    ('{"action": "attack_enemy_3"}', "stop", "masked", None),  # no such enemy in range
    ('{"action": "East"}', "stop", "masked", None),
    ('{"move": "east", "combat": "no_combat"}', "stop", "malformed", None),  # another mode's
    ('{"action": "east", "why": "x"}', "stop", "malformed", None),
    ('{"action": 4}', "stop", "malformed", None),
    ('{"action": ["east"]}', "stop", "malformed", None),
    ('{"action": "ea', "length", "cut_off", None),
    ('{"action": "east"}' + " " * MAX_REPLY_CHARS, "stop", "malformed", None),
    (None, None, "failed", None),
]


@pytest.mark.parametrize(("text", "finish", "kind", "name"), BRIDGE_CASES)
def test_one_field_reply_is_judged_exactly(text, finish, kind, name, record_property) -> None:
    from marl_bgs_llm.two_bridge import ACTION_NAMES

    checked = check_reply(text, finish, BRIDGE_LEGAL, "two-bridge")
    record_property("outcome", "accepted" if checked.kind == "legal" else "repair")
    assert checked.kind == kind
    expected = 0 if name is None else ACTION_NAMES.index(name)
    assert checked.action.tolist() == [expected]
