"""LLM teams as Systems: `make_system` (a model behind a Chat Completions server) and
`function_system` (any Python function from an agent's permitted view or text to its choice).

Both are host Systems: the compiled game loop calls them once per tick with the team's permitted
inputs of every game. An agent is asked only when it has more than one legal choice (a dead,
stunned or finished agent is not); every answer is checked against its exact mask, and one that
is cut off, malformed or masked becomes the mode's idle action (Team Deathmatch: stay + no
combat) and is counted (`usage`). A mode's text view and reply fields come from its text parts
(`marl_bgs_llm.modes`); the System plays the mode given as `mode` and, through `for_mode`, any
other mode with text parts.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from marl_bgs.core.checks import check_bool, check_float, check_int
from marl_bgs_eval.systems import System, system
from marl_bgs_llm.client import (
    ChatClient,
    Completion,
    LLMError,
    RequestSettings,
)
from marl_bgs_llm.modes import TextParts, mode_id, text_parts
from marl_bgs_llm.replies import (
    Checked,
    Legal,
    check_names,
    check_reply,
    reply_grammar,
    reply_schema,
)
from marl_bgs_llm.usage import Usage, key_text

Prompt = Callable[[Any, Any], str]  # (one agent's permitted view, its masks) -> prompt text


def _start(key: jax.Array) -> tuple[jax.Array, jax.Array]:
    """A game's memory: its key data, which names the game in the usage records, and the ticks
    played so far."""
    return jax.random.key_data(key), jnp.zeros((), jnp.int32)


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
    legal: Legal  # reply field -> legal names


def _turns(
    parts: TextParts, memory: tuple[np.ndarray, np.ndarray], inputs: Any, usage: Usage
) -> tuple[np.ndarray, list[tuple[int, int, _Ask]], list[str]]:
    """Actions of the agents with a single legal choice (the mode's idle action) [n, slots,
    heads], the turns to ask about, and the games that start now (told to `usage`)."""
    keys, ticks = memory
    n, slots = np.shape(inputs.obs)[:2]
    actions = np.broadcast_to(parts.idle, (n, slots, parts.idle.size)).copy()
    choices = np.asarray(parts.choices(inputs.masks))
    starting = [key_text(keys[g]) for g in np.flatnonzero(ticks == 0)]
    usage.new_games(starting)
    asks = []
    for g, k in zip(*np.nonzero(choices > 1), strict=True):
        view, masks = _agent(inputs.views, g, k), _agent(inputs.masks, g, k)
        ask = _Ask(key_text(keys[g]), int(ticks[g]), int(k), view, masks, parts.legal(masks))
        asks.append((int(g), int(k), ask))
    return actions, asks, starting


def _record(ask: _Ask, checked: Checked, done: Completion | None, latency: float) -> tuple:
    tokens = (done.prompt_tokens, done.completion_tokens) if done else (0, 0)
    return (ask.game, ask.tick, ask.slot, checked.kind, *tokens, latency)


@dataclass(frozen=True)
class ReplyFormat:
    """A custom reply format: `instruction` replaces the text view's reply line, `schema(*legal)`
    (the legal names of each reply field, in the mode's order: Team Deathmatch's `moves,
    combats`) is the JSON schema sent to the server (None: none sent) and `parse(text)` returns
    the chosen names, one per field (Team Deathmatch: `(move, combat)`), or None when the reply
    does not follow the format."""

    instruction: str
    parse: Callable[[str], tuple[str, ...] | None]
    schema: Callable[..., dict[str, Any]] | None = None


def _check_custom(fmt: ReplyFormat, done: Completion, legal: Legal, parts: TextParts) -> Checked:
    if done.text is None:
        return check_reply(None, None, legal, parts)
    try:
        picked = fmt.parse(done.text)
    except Exception:  # a user's parser failing on a hostile reply is a malformed reply
        picked = None
    if not isinstance(picked, tuple | list) or len(picked) != len(legal):
        return check_reply("", done.finish_reason, legal, parts)  # cut off or malformed
    return check_names(picked, legal, parts)


def _for_modes(build: Callable[[str], System], mode: str) -> System:
    """`build(mode)`'s System, whose `for_mode` gives its twin for another mode with text parts
    (built once per mode; the twins share their usage statistics)."""
    made: dict[str, System] = {}

    def twin(other: str) -> System:
        other = mode_id(other)
        if other not in made:
            made[other] = replace(build(other), adapt=twin)
        return made[other]

    return twin(mode)


def make_system(
    model: str,
    server_url: str,
    *,
    mode: str = "tdm",
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
    """A team of `mode` (an id or alias with text parts; default Team Deathmatch) played by
    `model` behind the OpenAI-compatible server at `server_url` (e.g. `http://127.0.0.1:8080/v1`).

    One request per agent per tick when it has more than one legal choice, at most `slots` in
    flight. `prompt(view, masks)` replaces the mode's text view; `reply_format` replaces the JSON
    reply; `rules_as_system_message` sends the public rules once as a system message instead of
    inside each prompt. `thinking` (None: not sent) switches a model's thinking through
    `chat_template_kwargs`; `temperature`, `top_p`, `seed` (None: not sent) and `max_tokens` go
    into every request; `history` earlier turns of the same agent in the same game are sent
    before the prompt. `timeout` (seconds per request), `retries` and `backoff` (seconds, doubled
    each retry) govern failed requests; `response_format` is one of `client.RESPONSE_FORMATS`;
    the API key is read from the environment variable `api_key_env` (none sent when it is
    unset). The System's `usage` holds the statistics (shared with its twins for other modes).
    """
    if not isinstance(model, str) or not model:
        raise LLMError(f"model: expected a model name, got {model!r}")
    mode = mode_id(mode)
    text_parts(mode)  # an error now if the mode has none
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

    def build(mode: str) -> System:
        parts = text_parts(mode)
        turns: dict[tuple[str, int], deque] = {}
        system_messages = (
            [{"role": "system", "content": parts.rules}] if rules_as_system_message else []
        )

        def text_of(ask: _Ask) -> str:
            if prompt is not None:
                return prompt(ask.view, ask.masks)
            text = parts.prompt(ask.view, ask.masks, ask.slot, not rules_as_system_message)
            if reply_format is not None:
                text = text.rsplit("\n", 1)[0] + "\n" + reply_format.instruction
            return text

        async def one(ask: _Ask) -> tuple[Checked, Completion]:
            user = {"role": "user", "content": text_of(ask)}
            earlier = [m for turn in turns.get((ask.game, ask.slot), ()) for m in turn]
            messages = [*system_messages, *earlier, user]
            if reply_format is None:
                schema, grammar = reply_schema(ask.legal), reply_grammar(ask.legal)
            else:
                schema = reply_format.schema(*ask.legal.values()) if reply_format.schema else None
                grammar = None
            done = await client.complete(settings, messages, schema, grammar)
            if reply_format is None:
                checked = check_reply(done.text, done.finish_reason, ask.legal, parts)
            else:
                checked = _check_custom(reply_format, done, ask.legal, parts)
            if history and done.text is not None:
                past = turns.setdefault((ask.game, ask.slot), deque(maxlen=history))
                past.append((user, {"role": "assistant", "content": done.text}))
            return checked, done

        async def all_of(asks: list[_Ask]) -> list[tuple[Checked, Completion]]:
            return list(await asyncio.gather(*(one(a) for a in asks)))

        def act(keys: np.ndarray, memory: Any, inputs: Any) -> tuple[np.ndarray, Any]:
            del keys
            actions, asks, starting = _turns(parts, memory, inputs, usage)
            live = {key_text(m) for m in memory[0]} - set(starting)
            for gone in [k for k in turns if k[0] not in live]:  # games that ended or restart
                del turns[gone]
            answers = client.run(all_of([a for *_, a in asks])) if asks else []
            rows = []
            for (g, k, ask), (checked, done) in zip(asks, answers, strict=True):
                actions[g, k] = checked.action
                rows.append(_record(ask, checked, done, done.latency))
            usage.add(rows)
            return actions, (memory[0], memory[1] + 1)

        return system(act, name=label, init=_start, host=True, usage=usage, mode=mode)

    return _for_modes(build, mode)


def function_system(
    fn: Callable[..., Any],
    *,
    name: str,
    text: bool = False,
    mode: str = "tdm",
) -> System:
    """A team of `mode` (default Team Deathmatch) played by a plain Python function, asked like
    a model: `fn(view, *legal)` returns the chosen names, one per reply field (Team
    Deathmatch: `fn(view, moves, combats) -> (move, combat)`; Two-Bridge: `fn(view, actions)
    -> (action,)`), where `view` is the agent's permitted view (numpy, no leading axes) or,
    with `text=True`, its prompt in the mode's text view. Answers are checked against the mask
    like a model's replies and counted in `usage` (no tokens)."""
    if not callable(fn):
        raise LLMError(f"fn: expected a callable (view, *legal names) -> names, got {fn!r}")
    usage = Usage(name)

    def build(mode: str) -> System:
        parts = text_parts(mode)

        def act(keys: np.ndarray, memory: Any, inputs: Any) -> tuple[np.ndarray, Any]:
            del keys
            actions, asks, _ = _turns(parts, memory, inputs, usage)
            rows = []
            for g, k, ask in asks:
                start = time.perf_counter()
                view = parts.prompt(ask.view, ask.masks, ask.slot, True) if text else ask.view
                checked = check_names(fn(view, *ask.legal.values()), ask.legal, parts)
                actions[g, k] = checked.action
                rows.append(_record(ask, checked, None, time.perf_counter() - start))
            usage.add(rows)
            return actions, (memory[0], memory[1] + 1)

        return system(act, name=name, init=_start, host=True, usage=usage, mode=mode)

    return _for_modes(build, mode)
