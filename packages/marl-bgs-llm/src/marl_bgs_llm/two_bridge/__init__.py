"""Two-Bridge's text parts (entry point `marl_bgs_llm.modes`: two-bridge): the text view
`bridge-text-v1` and the reply of one action by name."""

from marl_bgs_llm.two_bridge.text_view import ACTION_NAMES, PARTS, TEXT_VIEW, format_view

__all__ = ["ACTION_NAMES", "PARTS", "TEXT_VIEW", "format_view"]
