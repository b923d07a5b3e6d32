"""Replies: the JSON schema a model must follow, and the check of every reply against the mask.

A reply becomes an action only when it is one JSON object whose `move` and `combat` are names on
the agent's legal lists. Anything else becomes stay + no combat and is counted by kind:
`cut_off` (the server stopped at the token limit), `malformed` (not such an object: not JSON,
missing or extra fields, non-text values, too long), `masked` (well formed, but a name that is
not legal now) or `failed` (no reply: the request failed after its retries).
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

import numpy as np

from marl_bgs.core.arena import MOVE_NAMES
from marl_bgs.tdm.actions import COMBAT_PAIRS

KINDS = ("legal", "cut_off", "malformed", "masked", "failed")
FAILURES = KINDS[1:]
MAX_REPLY_CHARS = 4096  # longer replies are not parsed (a hostile or runaway reply)
STAY = np.zeros(3, np.int32)  # stay, no target, no Ultimate
_THINKING = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class Checked(NamedTuple):
    """A reply's action (int32 [3]: move, target, ultimate) and its kind (`KINDS`)."""

    action: np.ndarray
    kind: str


def reply_schema(moves: list[str], combats: list[str]) -> dict[str, Any]:
    """The JSON schema of a legal reply: exactly `move` and `combat`, each one of the names."""
    return {
        "type": "object",
        "properties": {
            "move": {"type": "string", "enum": list(moves)},
            "combat": {"type": "string", "enum": list(combats)},
        },
        "required": ["move", "combat"],
        "additionalProperties": False,
    }


def _gbnf_choice(names: list[str]) -> str:
    return " | ".join(json.dumps(json.dumps(n)) for n in names)


def reply_grammar(moves: list[str], combats: list[str]) -> str:
    """A GBNF grammar (llama.cpp's `grammar` field) that admits only legal replies."""
    return "\n".join(
        [
            'root ::= "{" ws "\\"move\\"" ws ":" ws move ws "," ws "\\"combat\\"" ws ":" ws '
            'combat ws "}"',
            f"move ::= {_gbnf_choice(moves)}",
            f"combat ::= {_gbnf_choice(combats)}",
            "ws ::= [ \\t\\n]{0,4}",
        ]
    )


def parse_reply(text: str) -> dict[str, str] | None:
    """The reply's `{"move", "combat"}` names, or None when it is not exactly such an object
    (a leading <think> block and a ``` fence around the object are allowed)."""
    if not isinstance(text, str) or len(text) > MAX_REPLY_CHARS:
        return None
    body = _THINKING.sub("", text, count=1).strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or set(value) != {"move", "combat"}:
        return None
    if not all(isinstance(value[k], str) for k in ("move", "combat")):
        return None
    return {"move": value["move"], "combat": value["combat"]}


def check_choice(move: Any, combat: Any, moves: list[str], combats: list[str]) -> Checked:
    """The action of a (move, combat) choice by name, or stay + no combat (`masked`) when either
    name is not on the legal lists (`malformed` when they are not strings)."""
    if not isinstance(move, str) or not isinstance(combat, str):
        return Checked(STAY.copy(), "malformed")
    if move not in moves or combat not in combats:
        return Checked(STAY.copy(), "masked")
    target, ult = COMBAT_PAIRS[combat]
    return Checked(np.asarray([MOVE_NAMES.index(move), target, ult], np.int32), "legal")


def check_reply(
    text: str | None, finish_reason: str | None, moves: list[str], combats: list[str]
) -> Checked:
    """The action a model's reply stands for, checked against the legal names."""
    if text is None:
        return Checked(STAY.copy(), "failed")
    parsed = parse_reply(text)
    if parsed is None:
        kind = "cut_off" if finish_reason == "length" else "malformed"
        return Checked(STAY.copy(), kind)
    return check_choice(parsed["move"], parsed["combat"], moves, combats)
