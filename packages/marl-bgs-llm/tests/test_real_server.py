"""The real tier: a real model (SmolLM2-135M-Instruct) behind a real llama.cpp server on
127.0.0.1 plays a short game against a scripted team. The nox `tests` session of this package
starts the server and sets MARL_BGS_LLM_SERVER (`MARL_BGS_LLM_REAL=0` skips it); without it
this module is skipped.

Checked: the server's refusal of `json_schema` is met by the `json_object` fall-back, every reply
is judged, the actions played are legal, one request per agent per tick with a choice, and the
statistics add up between the records, the per-game table and the summary.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import marl_bgs_eval as ev
from marl_bgs_llm import make_system
from marl_bgs_llm.replies import FAILURES

URL = os.environ.get("MARL_BGS_LLM_SERVER")
MODEL = os.environ.get("MARL_BGS_LLM_MODEL", "smollm2")
TICKS = 2
ROSTERS = ("MP", "MP")  # 2 v 2 for 2 ticks: 8 requests, under two minutes on 2 cores
pytestmark = pytest.mark.skipif(URL is None, reason="no real model server (MARL_BGS_LLM_SERVER)")


def test_a_real_model_plays_a_short_game_legally() -> None:
    assert URL is not None
    team = make_system(MODEL, URL, name="smollm2", slots=2, max_tokens=64, timeout=120)
    games = ev.evaluate(team, "tdm-alpha", maps=[47], games_per_map=2, batch_size=2,
                        tick_limit=TICKS, rosters=ROSTERS, metrics="none")  # fmt: skip
    calls = team.usage.calls()
    per_game = team.usage.per_game(games, 0)
    summary = team.usage.summary().iloc[0]
    print("real tier:", json.dumps({k: (v.item() if hasattr(v, "item") else v)
                                    for k, v in summary.items()}))  # fmt: skip
    # One request per agent per tick with a choice: no agent twice in a tick, none past the end.
    assert not calls.duplicated(["game_key", "tick", "agent"]).any()
    assert 0 < len(calls) <= len(ROSTERS[0]) * TICKS * 2
    assert calls["tick"].max() < TICKS
    # Statistics add up three ways.
    assert int(per_game["calls"].sum()) == len(calls) == int(summary["calls"])
    assert int(per_game["prompt_tokens"].sum()) == int(calls["prompt_tokens"].sum())
    assert int(summary["prompt_tokens"]) == int(calls["prompt_tokens"].sum()) > 1000 * len(calls)
    assert int(summary["completion_tokens"]) > 0
    kinds = calls["kind"].value_counts()
    assert int(kinds.sum()) == len(calls)
    assert int(kinds.get("failed", 0)) == 0, "every request got a reply"
    assert float(summary["legal_share"]) >= 0.9, kinds.to_dict()
    for kind in FAILURES:
        assert int(per_game[kind].sum()) == int(kinds.get(kind, 0))
    assert np.isfinite(summary["latency_p50_s"])
    assert summary["latency_p50_s"] > 0
    assert set(games["ticks"]) == {TICKS}
