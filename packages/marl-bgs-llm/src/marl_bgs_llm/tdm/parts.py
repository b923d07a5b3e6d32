"""Team Deathmatch's `TextParts`: one move and one combat choice per reply, by name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from marl_bgs.core.arena import MOVE_NAMES
from marl_bgs.tdm.actions import COMBAT_PAIRS
from marl_bgs_llm.modes import TextParts
from marl_bgs_llm.tdm.text_view import RULES, TEXT_VIEW, format_actor_view, legal_names


def action_of(names: Sequence[str]) -> np.ndarray:
    """The action int32 [3] (move, target, ultimate) of legal (move, combat) names."""
    move, combat = names
    target, ult = COMBAT_PAIRS[combat]
    return np.asarray([MOVE_NAMES.index(move), target, ult], np.int32)


def choices(masks: Any) -> np.ndarray:
    """Legal actions of each agent [n, slots]: legal moves times legal combat choices."""
    move, pair = np.asarray(masks.move), np.asarray(masks.pair)
    return move.sum(-1) * pair.reshape(*pair.shape[:2], -1).sum(-1)


def _prompt(view: Any, masks: Any, slot: int, rules: bool) -> str:
    del slot  # the view marks the agent itself (`is_self`)
    return format_actor_view(view, masks, rules=rules)


def _legal(masks: Any) -> dict[str, list[str]]:
    moves, combats = legal_names(masks)
    return {"move": moves, "combat": combats}


PARTS = TextParts(
    view=TEXT_VIEW,
    fields=("move", "combat"),
    prompt=_prompt,
    legal=_legal,
    action=action_of,
    idle=np.zeros(3, np.int32),  # stay, no target, no Ultimate
    choices=choices,
    rules=RULES,
)
