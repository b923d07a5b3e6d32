"""LLM teams as Systems: `make_system` (a model behind a Chat Completions server) and
`function_system` (any Python function from an agent's permitted view or text to its choice).

Both are host Systems: the compiled game loop calls them once per tick with the team's permitted
inputs of every game. An agent is asked only when it has more than one legal choice (a dead,
stunned or finished agent is not); every answer is checked against its exact mask, and one that
is cut off, malformed or masked becomes stay + no combat and is counted (`usage`).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from marl_bgs.core.checks import check_bool, check_float, check_int
from marl_bgs_eval.systems import System, system
from marl_bgs_llm.client import (
    ChatClient,
    Completion,
    LLMError,
    RequestSettings,
)
from marl_bgs_llm.replies import Checked, check_choice, check_reply, reply_grammar, reply_schema
from marl_bgs_llm.text_view import RULES, format_actor_view, legal_names
from marl_bgs_llm.usage import Usage, key_text

Prompt = Callable[[Any, Any], str]  # (one agent's AgentView, its ActionMasks) -> prompt text


def _start(key: jax.Array) -> jax.Array:
    """A game's memory: its key data, which names the game in the usage records."""
    return jax.random.key_data(key)


def _agent(tree: Any, game: int, slot: int) -> Any:
    return jax.tree.map(lambda a: a[game, slot], tree)


@dataclass
class _Ask:
    """One agent's turn that needs the backend."""

    game: str  # the game's key text
    tick: int
    slot: int
    view: Any
    masks: Any
    moves: list[str]
    combats: list[str]


def _turns(
    memory: np.ndarray, inputs: Any, usage: Usage
) -> tuple[np.ndarray, list[tuple[int, int, _Ask]], list[str]]:
    """Actions of the agents with a single legal choice (stay + no combat) [n, 5, 3], the turns
    to ask about, and the games that start now (told to `usage`)."""
    n = memory.shape[0]
    actions = np.zeros((n, 5, 3), np.int32)
    asks = []
    move, pair = np.asarray(inputs.masks.move), np.asarray(inputs.masks.pair)
    choices = move.sum(-1) * pair.reshape(n, 5, -1).sum(-1)
    ticks = np.asarray(inputs.views.public.tick)[:, 0]
    starting = [key_text(memory[g]) for g in np.flatnonzero(ticks == 0)]
    usage.new_games(starting)
    for g, k in zip(*np.nonzero(choices > 1), strict=True):
        view, masks = _agent(inputs.views, g, k), _agent(inputs.masks, g, k)
        moves, combats = legal_names(masks)
        asks.append((int(g), int(k), _Ask(key_text(memory[g]), int(ticks[g]), int(k), view,
                                          masks, moves, combats)))  # fmt: skip
    return actions, asks, starting


def _record(ask: _Ask, checked: Checked, done: Completion | None, latency: float) -> tuple:
    tokens = (done.prompt_tokens, done.completion_tokens) if done else (0, 0)
    return (ask.game, ask.tick, ask.slot, checked.kind, *tokens, latency)


@dataclass(frozen=True)
class ReplyFormat:
    """A custom reply format: `instruction` replaces the text view's reply line, `schema(moves,
    combats)` is the JSON schema sent to the server (None: none sent) and `parse(text)` returns
    the chosen `(move, combat)` names, or None when the reply does not follow the format."""

    instruction: str
    parse: Callable[[str], tuple[str, str] | None]
    schema: Callable[[list[str], list[str]], dict[str, Any]] | None = None


def _check_custom(
    fmt: ReplyFormat, done: Completion, moves: list[str], combats: list[str]
) -> Checked:
    if done.text is None:
        return check_reply(None, None, moves, combats)
    try:
        picked = fmt.parse(done.text)
    except Exception:  # a user's parser failing on a hostile reply is a malformed reply
        picked = None
    if not isinstance(picked, tuple | list) or len(picked) != 2:
        return check_reply("", done.finish_reason, moves, combats)  # cut off or malformed
    return check_choice(picked[0], picked[1], moves, combats)


def make_system(
    model: str,
    server_url: str,
    *,
    name: str | None = None,
    slots: int = 8,
    prompt: Prompt | None = None,
    reply_format: ReplyFormat | None = None,
    rules_as_system_message: bool = False,
    thinking: bool | None = False,
    temperature: float | None = 0.0,
    top_p: float | None = 1.0,
    seed: int | None = 0,
    max_tokens: int = 64,
    history: int = 0,
    timeout: float = 60.0,
    retries: int = 2,
    backoff: float = 0.5,
    response_format: str = "auto",
    api_key_env: str = "OPENAI_API_KEY",
    extra_body: dict[str, Any] | None = None,
) -> System:
    """A team played by `model` behind the OpenAI-compatible server at `server_url` (e.g.
    `http://127.0.0.1:8080/v1`).

    One request per agent per tick when it has more than one legal choice, at most `slots` in
    flight. `prompt(view, masks)` replaces the text view (`format_actor_view`); `reply_format`
    replaces the JSON reply; `rules_as_system_message` sends the public rules once as a system
    message instead of inside each prompt. `thinking` (None: not sent) switches a model's
    thinking through `chat_template_kwargs`; `temperature`, `top_p`, `seed` (None: not sent) and
    `max_tokens` go into every request; `history` earlier turns of the same agent in the same
    game are sent before the prompt. `timeout` (seconds per request), `retries` and `backoff`
    (seconds, doubled each retry) govern failed requests; `response_format` is one of
    `client.RESPONSE_FORMATS`; the API key is read from the environment variable `api_key_env`
    (none sent when it is unset). The System's `usage` holds the statistics.
    """
    if not isinstance(model, str) or not model:
        raise LLMError(f"model: expected a model name, got {model!r}")
    max_tokens = check_int(max_tokens, "max_tokens", 1, 1_000_000, error=LLMError)
    history = check_int(history, "history", 0, 1_000, error=LLMError)
    if temperature is not None:
        temperature = check_float(temperature, "temperature", 0.0, 2.0, error=LLMError)
    if top_p is not None:
        top_p = check_float(top_p, "top_p", 0.0, 1.0, error=LLMError)
    if seed is not None:
        seed = check_int(seed, "seed", 0, 2**63 - 1, error=LLMError)
    if thinking is not None and not isinstance(thinking, bool):
        raise LLMError(f"thinking: expected True, False or None (not sent), got {thinking!r}")
    rules_as_system_message = check_bool(
        rules_as_system_message, "rules_as_system_message", error=LLMError
    )
    if prompt is not None and not callable(prompt):
        raise LLMError(f"prompt: expected a callable (view, masks) -> str, got {prompt!r}")
    if reply_format is not None and not isinstance(reply_format, ReplyFormat):
        raise LLMError(f"reply_format: expected a ReplyFormat, got {reply_format!r}")
    if extra_body is not None and not isinstance(extra_body, dict):
        raise LLMError(f"extra_body: expected a dict of request fields, got {extra_body!r}")
    if name is not None and (not isinstance(name, str) or not name):
        raise LLMError(f"name: expected a non-empty System name, got {name!r}")
    client = ChatClient(
        server_url, slots=slots, timeout=timeout, retries=retries, backoff=backoff,
        response_format=response_format, api_key_env=api_key_env,
    )  # fmt: skip
    settings = RequestSettings(model, temperature, top_p, seed, max_tokens, thinking, extra_body)
    label = name or f"llm:{model}"
    usage = Usage(label)
    turns: dict[tuple[str, int], deque] = {}
    system_messages = [{"role": "system", "content": RULES}] if rules_as_system_message else []

    def text_of(ask: _Ask) -> str:
        if prompt is not None:
            return prompt(ask.view, ask.masks)
        text = format_actor_view(ask.view, ask.masks, rules=not rules_as_system_message)
        if reply_format is not None:
            text = text.rsplit("\n", 1)[0] + "\n" + reply_format.instruction
        return text

    async def one(ask: _Ask) -> tuple[Checked, Completion]:
        user = {"role": "user", "content": text_of(ask)}
        earlier = [m for turn in turns.get((ask.game, ask.slot), ()) for m in turn]
        messages = [*system_messages, *earlier, user]
        if reply_format is None:
            schema, grammar = (
                reply_schema(ask.moves, ask.combats),
                reply_grammar(ask.moves, ask.combats),
            )
        else:
            schema = reply_format.schema(ask.moves, ask.combats) if reply_format.schema else None
            grammar = None
        done = await client.complete(settings, messages, schema, grammar)
        if reply_format is None:
            checked = check_reply(done.text, done.finish_reason, ask.moves, ask.combats)
        else:
            checked = _check_custom(reply_format, done, ask.moves, ask.combats)
        if history and done.text is not None:
            past = turns.setdefault((ask.game, ask.slot), deque(maxlen=history))
            past.append((user, {"role": "assistant", "content": done.text}))
        return checked, done

    async def all_of(asks: list[_Ask]) -> list[tuple[Checked, Completion]]:
        return list(await asyncio.gather(*(one(a) for a in asks)))

    def act(keys: np.ndarray, memory: np.ndarray, inputs: Any) -> tuple[np.ndarray, np.ndarray]:
        del keys
        actions, asks, starting = _turns(memory, inputs, usage)
        live = {key_text(m) for m in memory} - set(starting)
        for gone in [k for k in turns if k[0] not in live]:  # games that ended or start again
            del turns[gone]
        answers = client.run(all_of([a for *_, a in asks])) if asks else []
        rows = []
        for (g, k, ask), (checked, done) in zip(asks, answers, strict=True):
            actions[g, k] = checked.action
            rows.append(_record(ask, checked, done, done.latency))
        usage.add(rows)
        return actions, memory

    return system(act, name=label, init=_start, host=True, usage=usage)


def function_system(
    fn: Callable[[Any, list[str], list[str]], tuple[str, str]],
    *,
    name: str,
    text: bool = False,
) -> System:
    """A team played by a plain Python function, asked like a model: `fn(view, moves, combats)
    -> (move, combat)` names, where `view` is the agent's `AgentView` (numpy, no leading axes)
    or, with `text=True`, its `actor-text-v1` prompt. Answers are checked against the mask like a
    model's replies and counted in `usage` (no tokens)."""
    if not callable(fn):
        raise LLMError(
            f"fn: expected a callable (view, moves, combats) -> (move, combat), got {fn!r}"
        )
    usage = Usage(name)

    def act(keys: np.ndarray, memory: np.ndarray, inputs: Any) -> tuple[np.ndarray, np.ndarray]:
        del keys
        actions, asks, _ = _turns(memory, inputs, usage)
        rows = []
        for g, k, ask in asks:
            start = time.perf_counter()
            view = format_actor_view(ask.view, ask.masks) if text else ask.view
            answer = fn(view, ask.moves, ask.combats)
            pair = answer if isinstance(answer, tuple | list) and len(answer) == 2 else (None, None)
            checked = check_choice(pair[0], pair[1], ask.moves, ask.combats)
            actions[g, k] = checked.action
            rows.append(_record(ask, checked, None, time.perf_counter() - start))
        usage.add(rows)
        return actions, memory

    return system(act, name=name, init=_start, host=True, usage=usage)
