"""LLM agents for MARL-BattleGrounds over OpenAI-compatible Chat Completions.

`format_actor_view` writes one agent's permitted view as the text view `actor-text-v1`;
`make_system` turns a model behind any Chat Completions server into a System (a team);
`function_system` does the same for a plain Python function. See docs/llm.md.
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from marl_bgs_eval.lazy import export_lazily

if TYPE_CHECKING:  # the exports, each imported on first use (marl_bgs_eval.lazy)
    from marl_bgs_llm.client import RESPONSE_FORMATS, LLMError
    from marl_bgs_llm.replies import KINDS, check_reply, reply_schema
    from marl_bgs_llm.system import ReplyFormat, function_system, make_system
    from marl_bgs_llm.text_view import TEXT_VIEW, format_actor_view, legal_names
    from marl_bgs_llm.usage import Usage

__version__ = _version("marl-bgs-llm")
__all__ = [
    "KINDS",
    "RESPONSE_FORMATS",
    "TEXT_VIEW",
    "LLMError",
    "ReplyFormat",
    "Usage",
    "__version__",
    "check_reply",
    "format_actor_view",
    "function_system",
    "legal_names",
    "make_system",
    "reply_schema",
]

export_lazily(__name__)
