"""What an LLM System needs from a mode, by mode id: `TextParts`, found through `PARTS`.

A mode's text parts are registered with `register(mode, parts)` or through the entry-point group
`marl_bgs_llm.modes` (name: the mode's alias, value: "module:PARTS"). Team Deathmatch's live in
`marl_bgs_llm.tdm`, Two-Bridge's in `marl_bgs_llm.two_bridge`. Generic code (`make_system`,
`function_system`, the `llm:` names, `marl-bgs-llm prompt`) asks `text_parts(mode)`.

A reply is one JSON object whose fields (`fields`, e.g. `move` and `combat`) each name one of
the agent's legal choices for that field; `legal(masks)` lists them and `action(names)` turns
legal names into the agent's action. Anything else becomes `idle` (an action that is always
legal) and is counted by kind (`replies.KINDS`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import marl_bgs
from marl_bgs import ConfigError, PartRegistry
from marl_bgs_llm.client import LLMError

_FIELD = re.compile(r"[a-z][a-z0-9]*")  # a JSON key that is also a GBNF rule name
_RESERVED = ("root", "ws")  # the grammar's own rules


@dataclass(frozen=True, eq=False)
class TextParts:
    """A mode's text parts (see the module docstring).

    `view`: the text view's name and version (e.g. "actor-text-v1"); `fields`: the reply's
    fields, in order; `prompt(view, masks, slot, rules)`: the prompt of the agent in roster
    `slot` from its permitted view and exact masks (no leading axes), its last line the reply
    instruction (a custom `ReplyFormat` replaces that line), the public rules left out when
    `rules` is False; `legal(masks)`: the agent's legal names per field (a dict in `fields`
    order); `action(names)`: the action (int32 [heads]) of legal names, one per field; `idle`:
    the action of a bad reply; `choices(masks)`: how many legal actions each agent has (masks
    [n, slots, ...] -> int [n, slots]; an agent with one is not asked); `rules`: the public
    rules (`rules_as_system_message` sends them once)."""

    view: str
    fields: tuple[str, ...]
    prompt: Callable[[Any, Any, int, bool], str]
    legal: Callable[[Any], dict[str, list[str]]]
    action: Callable[[Sequence[str]], np.ndarray]
    idle: np.ndarray
    choices: Callable[[Any], np.ndarray]
    rules: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.view, str) or not self.view:
            raise LLMError(f"view: expected the text view's name, got {self.view!r}")
        fields = self.fields
        if (
            not isinstance(fields, tuple)
            or not fields
            or len(set(fields)) != len(fields)
            or not all(isinstance(f, str) and _FIELD.fullmatch(f) for f in fields)
            or set(fields) & set(_RESERVED)
        ):
            raise LLMError(
                f"fields: expected a tuple of distinct lower-case names ([a-z][a-z0-9]*, not "
                f"{list(_RESERVED)}), got {fields!r}"
            )
        for name in ("prompt", "legal", "action", "choices"):
            if not callable(getattr(self, name)):
                raise LLMError(f"{name}: expected a callable, got {getattr(self, name)!r}")
        idle = np.asarray(self.idle)
        if idle.ndim != 1 or not idle.size or not np.issubdtype(idle.dtype, np.integer):
            raise LLMError(f"idle: expected an int action [heads], got {self.idle!r}")
        object.__setattr__(self, "idle", idle.astype(np.int32))
        if not isinstance(self.rules, str):
            raise LLMError(f"rules: expected text, got {type(self.rules).__name__}")


PARTS = PartRegistry("marl_bgs_llm.modes", "LLM text parts", TextParts, LLMError)
register = PARTS.register  # give a mode (an id or alias) its text parts
text_parts = PARTS.get  # the text parts of a mode id or alias


def mode_id(mode: str) -> str:
    """The versioned id of a mode id or alias (an LLMError if unknown)."""
    try:
        return marl_bgs.kit(mode).id
    except ConfigError as err:
        raise LLMError(str(err)) from None
