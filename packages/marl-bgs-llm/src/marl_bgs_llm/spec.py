"""LLM teams by name: `llm:<model>@<server_url>?<option>=<value>&...` anywhere a System name goes
(`marl-bgs-eval play "llm:smollm2@http://127.0.0.1:8080/v1?slots=4" tdm-alpha`).

Without `@<server_url>` the URL comes from the environment variable `MARL_BGS_LLM_URL`. Options
are `make_system`'s keywords that take plain values (`OPTIONS`), `mode` among them; the System
plays any mode with text parts (`marl-bgs-eval play --mode two-bridge llm:...`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from marl_bgs_eval.systems import System
from marl_bgs_llm.client import LLMError
from marl_bgs_llm.system import make_system

URL_VARIABLE = "MARL_BGS_LLM_URL"


def _flag(text: str) -> bool | None:
    low = text.lower()
    if low in ("none", "default"):
        return None
    if low in ("1", "true", "on", "yes"):
        return True
    if low in ("0", "false", "off", "no"):
        return False
    raise ValueError(text)


def _maybe(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    return lambda text: None if text.lower() == "none" else kind(text)


OPTIONS: dict[str, Callable[[str], Any]] = {
    "mode": str,
    "name": str,
    "slots": int,
    "thinking": _flag,
    "temperature": _maybe(float),
    "top_p": _maybe(float),
    "seed": _maybe(int),
    "max_tokens": int,
    "history": int,
    "timeout": float,
    "retries": int,
    "backoff": float,
    "response_format": str,
    "api_key_env": str,
    "rules_as_system_message": _flag,
}


def parse_spec(argument: str) -> tuple[str, str, dict[str, Any]]:
    """(model, server_url, options) of the part of a System name after `llm:`."""
    head, _, query = argument.partition("?")
    model, at, url = head.partition("@")
    if not model:
        raise LLMError(f"llm: expected llm:<model>@<server_url>, got 'llm:{argument}'")
    if not at:
        url = os.environ.get(URL_VARIABLE, "")
        if not url:
            raise LLMError(
                f"llm:{argument}: no server URL; write llm:<model>@<url> or set {URL_VARIABLE}"
            )
    options: dict[str, Any] = {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise LLMError(f"llm:{argument}: options must read key=value&key=value") from None
    for key, value in pairs:
        if key not in OPTIONS:
            raise LLMError(f"llm option {key!r}: unknown; allowed: {sorted(OPTIONS)}")
        try:
            options[key] = OPTIONS[key](value)
        except ValueError:
            raise LLMError(f"llm option {key!r}: cannot read {value!r}") from None
    return model, url, options


def llm_system(argument: str, *, mode: str = "tdm") -> System:
    """The System named `llm:<argument>` (entry point of the `llm` prefix), playing `mode`
    unless the argument's own `mode=` option names another."""
    model, url, options = parse_spec(argument)
    options.setdefault("name", f"llm:{argument}")
    options.setdefault("mode", mode)
    return make_system(model, url, **options)
