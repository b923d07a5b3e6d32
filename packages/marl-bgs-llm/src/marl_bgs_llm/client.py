"""A Chat Completions client for many concurrent agent requests (httpx, asyncio).

Requests go to `<server_url>/chat/completions` in the OpenAI wire format. At most `slots` are in
flight at once. A failed request (connection error, timeout, HTTP 429 or 5xx) is retried with
exponential backoff. How the reply's form is enforced (`response_format`):

- `json_schema`: OpenAI's strict structured output, the legal names as enums;
- `json_object`: `{"type": "json_object", "schema": ...}` (llama.cpp's server, which answers a
  `json_schema` request with HTTP 500);
- `grammar`: a GBNF grammar in the `grammar` field (llama.cpp);
- `none`: the prompt's instruction only;
- `auto` (default): `json_schema`, and on an HTTP error the next form in that order, remembered
  for later requests.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

import httpx

from marl_bgs.core.checks import check_float, check_int
from marl_bgs_eval.errors import EvalError

FORMATS = ("json_schema", "json_object", "grammar", "none")
RESPONSE_FORMATS = ("auto", *FORMATS)
MAX_BODY_BYTES = 1 << 20  # a server reply larger than this is not read (counts as failed)


class LLMError(EvalError):
    """A bad setting of the LLM API (the message names the field and what is allowed)."""


@dataclass(frozen=True)
class Completion:
    """One request's outcome: the reply text (None when none came), why generation stopped,
    token counts as the server reported them, seconds from send to the full reply, and the
    error when the request failed."""

    text: str | None
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    latency: float
    error: str | None = None


@dataclass(frozen=True)
class RequestSettings:
    """What every request carries besides its messages (see `make_system`)."""

    model: str
    temperature: float | None = 0.0
    top_p: float | None = 1.0
    seed: int | None = 0
    max_tokens: int = 64
    thinking: bool | None = False
    extra_body: dict[str, Any] | None = None


def _response_fields(form: str, schema: dict | None, grammar: str | None) -> dict[str, Any]:
    if form == "json_schema" and schema is not None:
        spec = {"name": "action", "strict": True, "schema": schema}
        return {"response_format": {"type": "json_schema", "json_schema": spec}}
    if form == "json_object" and schema is not None:
        return {"response_format": {"type": "json_object", "schema": schema}}
    if form == "grammar" and grammar is not None:
        return {"grammar": grammar}
    return {}


def request_body(
    settings: RequestSettings, messages: list[dict[str, str]], form: str, schema: dict | None,
    grammar: str | None,
) -> dict[str, Any]:  # fmt: skip
    """The JSON body of one Chat Completions request: the reply's form enforced by `form` with
    `schema` (a JSON schema) or `grammar` (GBNF), where given."""
    body: dict[str, Any] = {"model": settings.model, "messages": messages}
    body["max_tokens"] = settings.max_tokens
    for name in ("temperature", "top_p", "seed"):
        value = getattr(settings, name)
        if value is not None:
            body[name] = value
    if settings.thinking is not None:  # vLLM and SGLang pass this to the chat template
        body["chat_template_kwargs"] = {"enable_thinking": settings.thinking}
    body.update(_response_fields(form, schema, grammar))
    body.update(settings.extra_body or {})
    return body


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def read_completion(data: Any, latency: float) -> Completion:
    """A Completion from a server's decoded JSON reply (fields it lacks count as missing)."""
    usage = data.get("usage") if isinstance(data, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    tokens = (_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")))
    choices = data.get("choices") if isinstance(data, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    text = message.get("content") if isinstance(message, dict) else None
    if not isinstance(text, str):
        return Completion(None, None, *tokens, latency, "no message content in the reply")
    reason = first.get("finish_reason") if isinstance(first, dict) else None
    return Completion(text, reason if isinstance(reason, str) else None, *tokens, latency)


class ChatClient:
    """Sends Chat Completions requests from any thread; runs its own event loop in a daemon
    thread so a host System (called from JAX's callback thread) can wait on many at once."""

    def __init__(
        self, server_url: str, *, slots: int = 8, timeout: float = 60.0, retries: int = 2,
        backoff: float = 0.5, response_format: str = "auto", api_key_env: str = "OPENAI_API_KEY",
    ) -> None:  # fmt: skip
        if not isinstance(server_url, str) or not server_url.startswith(("http://", "https://")):
            raise LLMError(f"server_url: expected an http(s) URL, got {server_url!r}")
        if response_format not in RESPONSE_FORMATS:
            allowed = list(RESPONSE_FORMATS)
            raise LLMError(f"response_format: expected one of {allowed}, got {response_format!r}")
        slots = check_int(slots, "slots", 1, 1024, error=LLMError)
        retries = check_int(retries, "retries", 0, 100, error=LLMError)
        timeout = check_float(timeout, "timeout", 0.001, 86_400.0, error=LLMError)
        backoff = check_float(backoff, "backoff", 0.0, 3_600.0, error=LLMError)
        if not isinstance(api_key_env, str):
            raise LLMError(
                f"api_key_env: expected an environment variable name, got {api_key_env!r}"
            )
        self.url = server_url.rstrip("/") + "/chat/completions"
        self.slots, self.timeout, self.retries, self.backoff = slots, timeout, retries, backoff
        self.form = "json_schema" if response_format == "auto" else response_format
        self.auto = response_format == "auto"
        key = os.environ.get(api_key_env) if api_key_env else None
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._http: httpx.AsyncClient | None = None
        self._gate: asyncio.Semaphore | None = None
        self._lock = threading.Lock()

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, daemon=True).start()
                self._loop = loop
            return self._loop

    def run(self, work: Coroutine[Any, Any, Any]) -> Any:
        """Run `work` on the client's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(work, self._ensure_loop()).result()

    async def _session(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        if self._http is None or self._gate is None:
            limits = httpx.Limits(max_connections=self.slots, max_keepalive_connections=self.slots)
            self._http = httpx.AsyncClient(timeout=self.timeout, limits=limits)
            self._gate = asyncio.Semaphore(self.slots)
        return self._http, self._gate

    async def _post(self, body: dict[str, Any]) -> tuple[int, Any]:
        """(HTTP status, decoded JSON or None) of one POST; raises httpx errors."""
        http, gate = await self._session()
        async with gate, http.stream("POST", self.url, json=body, headers=self.headers) as r:
            chunks, size = [], 0
            async for chunk in r.aiter_bytes():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    return r.status_code, None
                chunks.append(chunk)
        try:
            return r.status_code, json.loads(b"".join(chunks))
        except ValueError:
            return r.status_code, None

    async def complete(
        self, settings: RequestSettings, messages: list[dict[str, str]], schema: dict | None,
        grammar: str | None,
    ) -> Completion:  # fmt: skip
        """One request with retries; never raises for server or network trouble (the
        Completion carries the error instead)."""
        start = time.perf_counter()
        error = "no attempt"
        attempt = 0
        while attempt <= self.retries:
            form = self.form
            try:
                status, data = await self._post(
                    request_body(settings, messages, form, schema, grammar)
                )
            except (httpx.HTTPError, OSError) as err:
                status, data, error = 0, None, f"{type(err).__name__}: {err}"
            else:
                if status == 200 and data is not None:
                    return read_completion(data, time.perf_counter() - start)
                error = f"HTTP {status}" if status != 200 else "reply body is not JSON"
                later = FORMATS.index(form) + 1
                if self.auto and status in (400, 422, 500) and later < len(FORMATS):
                    if self.form == form:  # the server does not take this form: try the next
                        self.form = FORMATS[later]
                    continue  # a form change is not a retry
                if status not in (0, 408, 429) and status < 500:
                    break  # a client error will not pass on a retry
            attempt += 1
            if attempt <= self.retries:
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
        return Completion(None, None, 0, 0, time.perf_counter() - start, error)

    def close(self) -> None:
        """Close the connections and stop the loop."""
        if self._loop is None:
            return
        if self._http is not None:
            self.run(self._http.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._loop = None
        self._http = None
