"""A fake Chat Completions server on the loopback interface, for tests and offline prompt work.

It speaks the OpenAI wire format over real HTTP (`http.server` in a thread), records every
request body, and answers with what a `responder(body)` returns: the reply text and finish
reason, or a whole `Raw` HTTP answer (status and bytes) to imitate a broken or hostile server.
The default responder plays legal names read from the request's own schema.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Raw:
    """A literal HTTP answer."""

    status: int
    body: bytes
    delay: float = 0.0


Reply = tuple[str, str] | Raw  # (content, finish_reason) or a raw answer
Responder = Callable[[dict[str, Any]], Reply]


def legal_names_of(body: dict[str, Any]) -> dict[str, list[str]]:
    """The legal names per reply field a request offers, from its JSON schema, its grammar or,
    failing both, its last message: the fields of the reply instruction (its last line) and the
    name lists of the lines above it (`moves: stay, north`), in order."""
    fmt = body.get("response_format") or {}
    schema = (
        fmt.get("json_schema", {}).get("schema")
        if fmt.get("type") == "json_schema"
        else (fmt.get("schema"))
    )
    if schema:
        return {field: spec["enum"] for field, spec in schema["properties"].items()}
    if "grammar" in body:
        rules = dict(re.findall(r"^([a-z0-9]+) ::= (.*)$", body["grammar"], re.M))
        read = lambda rule: [json.loads(json.loads(x)) for x in rule.split(" | ")]  # noqa: E731
        return {field: read(rule) for field, rule in rules.items() if field not in ("root", "ws")}
    lines = body["messages"][-1]["content"].splitlines()
    fields = re.findall(r'"(\w+)": "<', lines[-1])
    lists = [line.split(": ", 1)[1].split(", ") for line in lines[-1 - len(fields) : -1]]
    return dict(zip(fields, lists, strict=True))


def _eager_pick(names: list[str]) -> str:
    attacks = [n for n in names if n.startswith(("enemy_", "attack_"))]
    return attacks[0] if attacks else "east" if "east" in names else names[0]


def eager(body: dict[str, Any]) -> Reply:
    """Attacks the first enemy offered in any field; else moves east when it may; else takes
    the field's first legal name (Team Deathmatch: moves east and uses the first `enemy_*`
    combat choice)."""
    legal = legal_names_of(body)
    return json.dumps({field: _eager_pick(names) for field, names in legal.items()}), "stop"


class FakeServer:
    """`with FakeServer(responder) as server:` serves at `server.url` (ends in `/v1`).
    `reject_json_schema=True` answers `json_schema` requests with HTTP 500, as llama.cpp's server
    does. `requests` holds every decoded request body."""

    def __init__(self, responder: Responder = eager, *, reject_json_schema: bool = False) -> None:
        self.responder = responder
        self.reject_json_schema = reject_json_schema
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                del format, args

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                with owner._lock:
                    owner.requests.append(body)
                status, payload, delay = owner._answer(body, self.path)
                time.sleep(delay)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def _answer(self, body: dict[str, Any], path: str) -> tuple[int, bytes, float]:
        if path != "/v1/chat/completions":
            return 404, b'{"error": "not found"}', 0.0
        fmt = (body.get("response_format") or {}).get("type")
        if self.reject_json_schema and fmt == "json_schema":
            return 500, b'{"error": {"message": "json_schema is not supported"}}', 0.0
        reply = self.responder(body)
        if isinstance(reply, Raw):
            return reply.status, reply.body, reply.delay
        content, finish = reply
        prompt = sum(len(m["content"]) for m in body["messages"]) // 4
        payload = {
            "id": "fake",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": finish,
                    "message": {"role": "assistant", "content": content},
                }
            ],
            "usage": {"prompt_tokens": prompt, "completion_tokens": max(1, len(content) // 4)},
        }
        return 200, json.dumps(payload).encode(), 0.0

    def __enter__(self) -> FakeServer:
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
