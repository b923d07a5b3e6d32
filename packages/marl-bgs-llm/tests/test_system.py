"""LLM teams through the real HTTP client against the fake server: one request per agent per tick
with a choice, every failure counted by kind, concurrency bounded by the slots, retries, format
fall-back, options on the wire, usage that adds up, and the `llm:` name from the shell."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import marl_bgs_eval as ev
from marl_bgs_eval.cli import app
from marl_bgs_llm import LLMError, ReplyFormat, function_system, make_system
from marl_bgs_llm.client import ChatClient, Completion, RequestSettings
from marl_bgs_llm.replies import FAILURES, reply_grammar, reply_schema
from marl_bgs_llm.spec import parse_spec
from marl_bgs_llm.testing import FakeServer, Raw, eager

TICKS = 6  # every game's tick limit: nobody dies against `idle`, so every agent has a choice
GAMES = 2
SLOTS = 3


class Script:
    """The fake server's behaviour, switchable per test; counts requests in flight."""

    def __init__(self) -> None:
        self.reply = eager
        self.delay = 0.0
        self.in_flight = 0
        self.most = 0
        self.lock = threading.Lock()

    def __call__(self, body):
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        time.sleep(self.delay)
        with self.lock:
            self.in_flight -= 1
        return self.reply(body)


@pytest.fixture(scope="module")
def served():
    script = Script()
    with FakeServer(script) as server:
        team = make_system("fake-model", server.url, name="llm-test", slots=SLOTS, history=1,
                           retries=1, backoff=0.01, timeout=5, thinking=False)  # fmt: skip
        yield script, server, team


def _play(team) -> pd.DataFrame:
    return ev.evaluate(team, "idle", maps=[47], games_per_map=GAMES, batch_size=GAMES,
                       tick_limit=TICKS, metrics="none")  # fmt: skip


def _fresh(server, script) -> None:
    server.requests.clear()
    script.reply, script.delay, script.most = eager, 0.0, 0


def test_one_request_per_agent_per_tick_and_usage_adds_up(served) -> None:
    script, server, team = served
    _fresh(server, script)
    script.delay = 0.02
    before = len(team.usage.calls())
    games = _play(team)
    calls = team.usage.calls().iloc[before:]
    assert len(calls) == 5 * TICKS * GAMES == len(server.requests)
    assert not calls.duplicated(["game_key", "tick", "agent"]).any()
    assert (calls["kind"] == "legal").all()
    assert 1 < script.most <= SLOTS
    per_game = team.usage.per_game(games, 0)
    assert per_game["calls"].tolist() == [5 * TICKS] * GAMES
    assert per_game["prompt_tokens"].sum() == calls["prompt_tokens"].sum() > 0
    assert (per_game["legal_share"] == 1.0).all()
    # The eager replies moved the team east and it scored nothing against idle: moves happened.
    body = server.requests[0]
    assert body["model"] == "fake-model"
    assert body["max_tokens"] == 64
    assert body["temperature"] == 0.0
    assert body["seed"] == 0
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["strict"] is True


def test_history_keeps_the_agents_last_turn(served) -> None:
    script, server, team = served
    _fresh(server, script)
    _play(team)
    lengths = {len(b["messages"]) for b in server.requests}
    assert lengths == {1, 3}  # the first turn alone, then one earlier turn (prompt + reply)
    later = next(b for b in server.requests if len(b["messages"]) == 3)
    assert [m["role"] for m in later["messages"]] == ["user", "assistant", "user"]


def test_every_failure_becomes_stay_and_is_counted(served) -> None:
    script, server, team = served
    _fresh(server, script)
    answers = {
        "legal": None,
        "cut_off": ('{"move": "ea', "length"),
        "malformed": ("I will go east", "stop"),
        "masked": ('{"move": "east", "combat": "enemy_4_ultimate"}', "stop"),
        "failed": Raw(503, b"busy"),
    }
    kinds = list(answers)
    counter = {"n": 0}

    def cycle(body):
        with script.lock:
            kind = kinds[counter["n"] % len(kinds)]
            counter["n"] += 1
        return eager(body) if answers[kind] is None else answers[kind]

    script.reply = cycle
    before = len(team.usage.calls())
    games = _play(team)
    calls = team.usage.calls().iloc[before:]
    counts = calls["kind"].value_counts()
    assert set(counts.index) == set(kinds)
    assert int(counts.sum()) == 5 * TICKS * GAMES
    summary = team.usage.per_game(games, 0)[list(FAILURES)].sum()
    assert all(summary[k] >= counts[k] for k in FAILURES)  # per_game covers all games
    # Retries: a 503 is asked again once (retries=1), so requests exceed the calls.
    assert len(server.requests) > len(calls)


def test_function_backend_with_text_and_with_views() -> None:
    seen = []

    def by_text(text, moves, combats):
        seen.append(text)
        return ("north" if "north" in moves else moves[0]), "no_combat"

    team = function_system(by_text, name="fn-text", text=True)
    games = ev.evaluate(team, "idle", maps=[47], games_per_map=2, batch_size=2, tick_limit=3,
                        metrics="none")  # fmt: skip
    assert len(seen) == 5 * 3 * 2
    assert all(t.startswith("MARL-BGs actor-text-v1") for t in seen)
    usage = team.usage.per_game(games, 0)
    assert usage["calls"].tolist() == [15, 15]
    assert (usage["legal_share"] == 1).all()
    assert usage["prompt_tokens"].sum() == 0

    team = function_system(lambda view, m, c: ("fly", "no_combat"), name="fn-bad")
    ev.evaluate(team, "idle", maps=[47], games_per_map=2, batch_size=2, tick_limit=2,
                metrics="none")  # fmt: skip
    assert (team.usage.calls()["kind"] == "masked").all()


# --------------------------------------------------------------------- the client on its own
def _ask(client: ChatClient) -> Completion:
    legal = {"move": ["stay", "north"], "combat": ["no_combat"]}
    messages = [{"role": "user", "content": "go"}]
    work = client.complete(
        RequestSettings("m"), messages, reply_schema(legal), reply_grammar(legal)
    )
    return client.run(work)


def test_llama_cpp_style_server_falls_back_to_json_object_and_remembers() -> None:
    with FakeServer(reject_json_schema=True) as server:
        client = ChatClient(server.url, retries=0)
        for _ in range(3):
            assert _ask(client).error is None
        client.close()
    forms = [(b.get("response_format") or {}).get("type") for b in server.requests]
    assert forms == ["json_schema", "json_object", "json_object", "json_object"]


def test_retries_back_off_then_succeed_and_client_errors_are_not_retried() -> None:
    answers = [Raw(503, b""), Raw(429, b""), ('{"move": "stay", "combat": "no_combat"}', "stop")]
    with FakeServer(lambda body: answers.pop(0)) as server:
        client = ChatClient(server.url, retries=2, backoff=0.05, response_format="none")
        start = time.perf_counter()
        done = _ask(client)
        assert done.text is not None
        assert time.perf_counter() - start >= 0.05 + 0.1  # two waits: 0.05 s, then 0.1 s
        answers[:] = [Raw(400, b"bad request")] * 3
        assert _ask(client).error == "HTTP 400"
        client.close()
    assert len(server.requests) == 4


def test_a_timeout_counts_as_failed() -> None:
    with FakeServer(lambda body: Raw(200, b"{}", delay=1.0)) as server:
        client = ChatClient(server.url, retries=0, timeout=0.2)
        done = _ask(client)
        assert done.text is None
        assert "Timeout" in done.error
        client.close()


def test_api_key_header_is_sent(monkeypatch) -> None:
    import http.server

    got = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            del a

        def do_POST(self):
            got["auth"] = self.headers.get("Authorization")
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.handle_request, daemon=True).start()
    monkeypatch.setenv("MY_KEY", "sekrit")
    client = ChatClient(f"http://127.0.0.1:{httpd.server_address[1]}/v1", retries=0,
                        response_format="none", api_key_env="MY_KEY")  # fmt: skip
    _ask(client)
    client.close()
    httpd.server_close()
    assert got["auth"] == "Bearer sekrit"


def test_custom_reply_format() -> None:
    fmt = ReplyFormat(
        instruction="Answer as MOVE/COMBAT.",
        parse=lambda text: tuple(text.strip().split("/")) if "/" in text else None,  # type: ignore[return-value]
    )
    with FakeServer(lambda body: ("north/no_combat", "stop")) as server:
        team = make_system("m", server.url, name="custom", reply_format=fmt, slots=2)
        ev.evaluate(team, "idle", maps=[47], games_per_map=2, batch_size=2, tick_limit=2,
                    metrics="none")  # fmt: skip
    assert (team.usage.calls()["kind"] == "legal").all()
    body = server.requests[0]
    assert "response_format" not in body
    assert "grammar" not in body
    assert body["messages"][-1]["content"].endswith("Answer as MOVE/COMBAT.")


def test_system_names_on_the_shell(tmp_path: Path, monkeypatch) -> None:
    assert parse_spec("m@http://h:1/v1?slots=4&thinking=on&seed=none") == (
        "m", "http://h:1/v1", {"slots": 4, "thinking": True, "seed": None})  # fmt: skip
    with pytest.raises(LLMError, match="unknown"):
        parse_spec("m@http://h/v1?colour=red")
    monkeypatch.delenv("MARL_BGS_LLM_URL", raising=False)
    with pytest.raises(LLMError, match="MARL_BGS_LLM_URL"):
        parse_spec("m")
    with FakeServer() as server:
        out = tmp_path / "r.parquet"
        result = CliRunner().invoke(app, [
            "play", f"llm:m@{server.url}?slots=2", "idle", "--maps", "47", "--games-per-map", "2",
            "--tick-limit", "3", "--batch-size", "2", "--out", str(out), "--no-progress",
        ])  # fmt: skip
    assert result.exit_code == 0, result.output
    usage = pd.read_parquet(tmp_path / "r-usage-a.parquet")
    assert usage["calls"].tolist() == [15, 15]
    assert "usage of" in result.output  # the table's title (wrapped to the table's width)
    assert "legal_share" in result.output
    bad = CliRunner().invoke(app, ["play", "llm:m@http://h/v1?colour=red", "idle"])
    assert bad.exit_code != 0
    assert "colour" in bad.output


def test_usage_reads_the_results_of_either_side() -> None:
    with FakeServer() as server:
        team = make_system("m", server.url, name="side-b", slots=2)
        games = ev.evaluate("idle", team, maps=[47], games_per_map=2, batch_size=2, tick_limit=2,
                            metrics="none")  # fmt: skip
    assert team.usage.per_game(games, 1)["calls"].tolist() == [10, 10]
    assert team.usage.per_game(games, 0)["calls"].tolist() == [0, 0]


def test_prompt_command_prints_the_agents_view_at_a_tick(tmp_path: Path) -> None:
    from marl_bgs_llm.cli import app as llm_app

    out = tmp_path / "prompt.txt"
    result = CliRunner().invoke(
        llm_app, ["prompt", "random", "idle", "--tick", "3", "--team", "b", "--slot", "4",
                  "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "tick 3 of 300" in text
    assert "you are ally_4, the priest" in text
    bad = CliRunner().invoke(llm_app, ["prompt", "random", "idle", "--team", "c"])
    assert bad.exit_code == 2
    assert "team: expected a or b" in bad.output


def test_in_a_mixed_team_or_a_pool_it_is_asked_only_about_its_own_slots() -> None:
    asked = []

    def mage_only(view, moves, combats):
        asked.append(int(view.units.is_self.argmax()))
        return moves[-1], combats[0]

    member = function_system(mage_only, name="fn-mage")
    mixed = ev.team(classes={"M": member}, rest=ev.idle_system())
    games = ev.evaluate(mixed, "idle", maps=[47], games_per_map=2, batch_size=2, tick_limit=3,
                        metrics="none")  # fmt: skip
    assert asked
    assert set(asked) == {0}  # the Mage's slot only, never the idle teammates'
    assert mixed.usage is not None
    assert mixed.usage.per_game(games, 0)["calls"].tolist() == [3, 3]

    asked.clear()
    drawn = ev.pool([member, ev.idle_system()], weights=[1.0, 1.0], name="pool-fn")
    games = ev.evaluate(drawn, "idle", maps=[47], games_per_map=4, batch_size=4, tick_limit=2,
                        metrics="none")  # fmt: skip
    per_game = drawn.usage.per_game(games, 0)  # type: ignore[union-attr]
    assert sorted(per_game["calls"].unique().tolist()) == [0, 10]  # 5 agents x 2 ticks, or none
    assert int(per_game["calls"].sum()) == len(asked)


def test_the_prompt_command_takes_ticks_of_the_engines_game_length() -> None:
    # The last decision is tick tick_limit - 1 of the engine's default rule values (RuleValues).
    from marl_bgs.tdm.config import RuleValues
    from marl_bgs_eval.errors import EvalError
    from marl_bgs_llm.cli import game_prompt

    last = RuleValues.tick_limit - 1
    for tick in (-1, last + 1, True):
        with pytest.raises(EvalError, match=rf"^tick: expected an integer in \[0, {last}\]"):
            game_prompt("tdm-alpha", "tdm-beta", tick=tick)
