"""Team Deathmatch's text parts (entry point `marl_bgs_llm.modes`: tdm): the text view
`actor-text-v1` and the reply of a move and a combat choice by name."""

from marl_bgs_llm.tdm.parts import PARTS, action_of, choices
from marl_bgs_llm.tdm.text_view import RULES, TEXT_VIEW, format_actor_view, legal_names

__all__ = [
    "PARTS",
    "RULES",
    "TEXT_VIEW",
    "action_of",
    "choices",
    "format_actor_view",
    "legal_names",
]
