"""Fuzz: settings of an LLM team, as keywords of `make_system` and as `llm:` System names.

Every bad value (wrong type, bool for a number, NaN, infinities, negative, huge, empty) must end
in an `LLMError` (an `EvalError`) whose message starts with the field's name; the valid edge
values mixed in must build a System. Nothing touches the network: a System connects on its first
request.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from marl_bgs_eval import EvalError
from marl_bgs_llm import LLMError, make_system
from marl_bgs_llm.spec import llm_system

pytestmark = pytest.mark.fuzz_family("LLM team settings")

URL = "http://127.0.0.1:9/v1"
JUNK = [None, True, "3", b"3", [3], {"a": 3}, math.nan, math.inf, -math.inf, -1, -0.5, 10**30]


@dataclass(frozen=True)
class Case:
    id: str
    kwargs: dict[str, Any]
    field: str | None  # None: accepted


def _cases() -> list[Case]:
    valid: dict[str, list[Any]] = {
        # numpy scalars pass as their Python twins: the engine's scalar checks (one policy).
        "slots": [1, 1024, np.int64(8)],
        "max_tokens": [1, 64, 1_000_000, np.int32(64)],
        "history": [0, 1_000],
        "temperature": [None, 0, 0.0, 2.0, np.float32(0.5)],
        "top_p": [None, 0.0, 1],
        "seed": [None, 0, 2**63 - 1],
        "timeout": [0.001, 60, 86_400],
        "retries": [0, 100],
        "backoff": [0, 3_600],
        "thinking": [None, True, False],
        "rules_as_system_message": [False, True],
        "response_format": ["auto", "json_schema", "json_object", "grammar", "none"],
        "api_key_env": ["OPENAI_API_KEY", ""],
        "extra_body": [None, {}, {"top_k": 5}],
        "name": [None, "team-x"],
        "mode": ["tdm", "tdm-v2", "two-bridge", "two-bridge-v1"],
    }
    extra_bad: dict[str, list[Any]] = {
        "slots": [0, 1025, 2.0],
        "max_tokens": [0, 1.5],
        "history": [1_001],
        "temperature": [2.01, "0.5"],
        "top_p": [1.5],
        "seed": [2**63, 1.0],
        "timeout": [0, 86_401],
        "retries": [101],
        "backoff": [3_601],
        "thinking": ["on", 1, 0],
        "rules_as_system_message": ["yes", 1],
        "response_format": ["xml", "JSON_SCHEMA", "", None, 3],
        "api_key_env": [None, 3],
        "extra_body": [[], "x", 3],
        "name": ["", 3],
        "mode": ["duel", "TDM", "", "tdm-v1"],
        "model": ["", None, 3],
        "server_url": ["", "127.0.0.1:8000", "ftp://h/v1", None, 3],
        "prompt": ["text", 3],
        "reply_format": ["json", 3],
    }
    cases = [Case(f"{f}={v!r}", {f: v}, None) for f, values in valid.items() for v in values]
    for field in valid:
        bad = [v for v in JUNK + extra_bad.get(field, []) if not _is_valid(field, v, valid)]
        cases += [Case(f"{field}={v!r}", {field: v}, field) for v in bad]
    for field in ("model", "server_url", "prompt", "reply_format"):
        cases += [Case(f"{field}={v!r}", {field: v}, field) for v in extra_bad[field]]
    return cases


# Fields where any value of a type is valid (any text names a variable or a System).
ANY_OF_TYPE = {"api_key_env": str, "name": str, "extra_body": dict}


def _is_valid(field: str, value: Any, valid: dict[str, list[Any]]) -> bool:
    kind = ANY_OF_TYPE.get(field)
    if kind is not None and isinstance(value, kind) and (value or field != "name"):
        return True
    return any(type(value) is type(v) and value == v for v in valid[field])


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_make_system_setting(case: Case, record_property) -> None:
    kwargs = {"model": "m", "server_url": URL, **case.kwargs}
    model, url = kwargs.pop("model"), kwargs.pop("server_url")
    if case.field is None:
        team = make_system(model, url, **kwargs)
        record_property("outcome", "accepted")
        assert team.host
        assert team.usage is not None
        return
    with pytest.raises(LLMError, match=rf"^{case.field}:"):
        make_system(model, url, **kwargs)
    record_property("outcome", "error")


SPECS = [
    ("m@http://h:1/v1", None),
    ("m@http://h:1/v1?slots=4&temperature=0.2&top_p=none&seed=none&thinking=off", None),
    ("org/model-9B@https://api.example.com/v1?max_tokens=128&history=2", None),
    ("m@http://h:1/v1?slots=0", "slots"),
    ("m@http://h:1/v1?slots=many", "llm option 'slots'"),
    ("m@http://h:1/v1?temperature=nan", "temperature"),
    ("m@http://h:1/v1?timeout=inf", "timeout"),
    ("m@http://h:1/v1?thinking=maybe", "llm option 'thinking'"),
    ("m@http://h:1/v1?colour=red", "llm option 'colour'"),
    ("m@http://h:1/v1?slots", "llm:"),
    ("m@http://h:1/v1?=4", "llm option ''"),
    ("m@http://h:1/v1?response_format=xml", "response_format"),
    ("m@http://h:1/v1?mode=two-bridge", None),
    ("m@http://h:1/v1?mode=duel", "mode"),
    ("@http://h:1/v1", "llm:"),
    ("m@h:1/v1", "server_url"),
    ("m@", "server_url"),
    ("", "llm:"),
]


@pytest.mark.parametrize(("spec", "field"), SPECS, ids=[s for s, _ in SPECS])
def test_llm_system_name(spec: str, field: str | None, record_property) -> None:
    if field is None:
        team = llm_system(spec)
        record_property("outcome", "accepted")
        assert team.name == f"llm:{spec}"
        return
    with pytest.raises(EvalError, match=rf"^{field}"):
        llm_system(spec)
    record_property("outcome", "error")


def test_every_name_option_is_a_make_system_keyword() -> None:
    """`llm:` options are read into `make_system`'s keywords: the two lists cannot drift apart."""
    import inspect

    from marl_bgs_llm.spec import OPTIONS

    keywords = inspect.signature(make_system).parameters
    assert set(OPTIONS) <= set(keywords)
