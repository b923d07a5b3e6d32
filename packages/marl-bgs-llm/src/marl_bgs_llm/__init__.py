"""LLM agents for MARL-BattleGrounds over OpenAI-compatible Chat Completions.

`make_system` turns a model behind any Chat Completions server into a System (a team) of any
mode with text parts (`marl_bgs_llm.modes`: Team Deathmatch's in `marl_bgs_llm.tdm`, whose
`format_actor_view` writes the text view `actor-text-v1`; Two-Bridge's in
`marl_bgs_llm.two_bridge`); `function_system` does the same for a plain Python function.
See docs/llm.md.
"""

import sys
from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from marl_bgs_eval.lazy import LazyPackage, export_lazily

if TYPE_CHECKING:  # the exports, each imported on first use (marl_bgs_eval.lazy)
    from marl_bgs_llm.client import RESPONSE_FORMATS, LLMError
    from marl_bgs_llm.modes import TextParts, register, text_parts
    from marl_bgs_llm.replies import KINDS, check_reply, reply_schema
    from marl_bgs_llm.system import ReplyFormat, function_system, make_system
    from marl_bgs_llm.usage import Usage

__version__ = _version("marl-bgs-llm")
__all__ = [
    "KINDS",
    "RESPONSE_FORMATS",
    "LLMError",
    "ReplyFormat",
    "TextParts",
    "Usage",
    "__version__",
    "check_reply",
    "function_system",
    "make_system",
    "register",
    "reply_schema",
    "text_parts",
]
# Team Deathmatch's text view left the top level (generic code names no mode).
_MOVED = {name: f"marl_bgs_llm.tdm.{name}" for name in ("TEXT_VIEW", "format_actor_view",
                                                         "legal_names")}  # fmt: skip


class _Package(LazyPackage):
    def __getattr__(self, name: str) -> object:
        if name in _MOVED:
            raise AttributeError(
                f"marl_bgs_llm.{name} moved to {_MOVED[name]} (Team Deathmatch's text view; "
                "any mode's: marl_bgs_llm.text_parts(mode))"
            )
        return super().__getattr__(name)


export_lazily(__name__)
sys.modules[__name__].__class__ = _Package
