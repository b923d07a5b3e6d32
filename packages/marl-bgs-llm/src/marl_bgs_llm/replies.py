"""Replies: the JSON schema a model must follow, and the check of every reply against the mask.

A reply becomes an action only when it is one JSON object whose fields are exactly the mode's
reply fields (`TextParts.fields`, e.g. `move` and `combat`), each a name on the agent's legal
list for that field. Anything else becomes the mode's idle action (Team Deathmatch: stay + no
combat) and is counted by kind: `cut_off` (the server stopped at the token limit), `malformed`
(not such an object: not JSON, missing or extra fields, non-text values, too long), `masked`
(well formed, but a name that is not legal now) or `failed` (no reply: the request failed after
its retries). `legal` is always a dict: reply field -> its legal names, in the mode's order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from marl_bgs_llm.client import LLMError
from marl_bgs_llm.modes import TextParts, text_parts

KINDS = ("legal", "cut_off", "malformed", "masked", "failed")
FAILURES = KINDS[1:]
MAX_REPLY_CHARS = 4096  # longer replies are not parsed (a hostile or runaway reply)
_THINKING = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)

Legal = Mapping[str, Sequence[str]]  # reply field -> its legal names


class Checked(NamedTuple):
    """A reply's action (int32 [heads]) and its kind (`KINDS`)."""

    action: np.ndarray
    kind: str


def _legal(legal: Any, what: str, old: tuple = ()) -> Legal:
    if old or not isinstance(legal, Mapping) or not legal:
        raise LLMError(
            f"{what}: expected {{reply field: legal names}}, e.g. {{'move': moves, 'combat': "
            f"combats}} (the separate moves and combats lists are gone), got {type(legal).__name__}"
        )
    return legal


def _parts(parts: TextParts | str) -> TextParts:
    return parts if isinstance(parts, TextParts) else text_parts(parts)


def reply_schema(legal: Legal, *old: Any) -> dict[str, Any]:
    """The JSON schema of a legal reply: exactly the fields of `legal`, each one of its names
    (`old`: the separate name lists of earlier versions, refused with a message)."""
    legal = _legal(legal, "reply_schema", old)
    return {
        "type": "object",
        "properties": {f: {"type": "string", "enum": list(names)} for f, names in legal.items()},
        "required": list(legal),
        "additionalProperties": False,
    }


def _gbnf_choice(names: Sequence[str]) -> str:
    return " | ".join(json.dumps(json.dumps(n)) for n in names)


def reply_grammar(legal: Legal, *old: Any) -> str:
    """A GBNF grammar (llama.cpp's `grammar` field) that admits only legal replies (one rule
    per field, named as the field; `old` as in `reply_schema`)."""
    legal = _legal(legal, "reply_grammar", old)
    pairs = ' ws "," ws '.join(f'"\\"{f}\\"" ws ":" ws {f}' for f in legal)
    return "\n".join(
        [
            f'root ::= "{{" ws {pairs} ws "}}"',
            *(f"{f} ::= {_gbnf_choice(names)}" for f, names in legal.items()),
            "ws ::= [ \\t\\n]{0,4}",
        ]
    )


def parse_reply(text: str, fields: Sequence[str]) -> dict[str, str] | None:
    """The reply's names by field, or None when it is not exactly one JSON object with text
    values for `fields` (a leading <think> block and a ``` fence around the object are allowed)."""
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
    if not isinstance(value, dict) or set(value) != set(fields):
        return None
    if not all(isinstance(value[k], str) for k in fields):
        return None
    return {k: value[k] for k in fields}


def check_names(picked: Any, legal: Legal, parts: TextParts | str) -> Checked:
    """The action of names chosen one per field (in `legal`'s order), or the mode's idle action
    (`masked`) when a name is not legal (`malformed` when they are not that many strings).
    `parts`: the mode's `TextParts` or its id."""
    legal, parts = _legal(legal, "legal"), _parts(parts)
    idle = parts.idle.copy()
    if (
        not isinstance(picked, tuple | list)
        or len(picked) != len(legal)
        or not all(isinstance(n, str) for n in picked)
    ):
        return Checked(idle, "malformed")
    if any(name not in names for name, names in zip(picked, legal.values(), strict=True)):
        return Checked(idle, "masked")
    return Checked(np.asarray(parts.action(tuple(picked)), np.int32), "legal")


def check_reply(
    text: str | None, finish_reason: str | None, legal: Legal, parts: TextParts | str
) -> Checked:
    """The action a model's reply stands for, checked against the legal names."""
    legal, parts = _legal(legal, "legal"), _parts(parts)
    if text is None:
        return Checked(parts.idle.copy(), "failed")
    parsed = parse_reply(text, list(legal))
    if parsed is None:
        kind = "cut_off" if finish_reason == "length" else "malformed"
        return Checked(parts.idle.copy(), kind)
    return check_names([parsed[f] for f in legal], legal, parts)
