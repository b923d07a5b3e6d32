"""Usage statistics of an LLM (or function) team: one record per decision asked of the backend.

Each record carries the game's memory key (which evaluation derives from the game's seed and
number, so records join the results table), which play of that game it is (the same game played
again, e.g. a second evaluation with the same seed, is play 1), the tick, the agent's slot, how
the reply was judged (`replies.KINDS`), token counts as the server reported them and the latency.
"""

from __future__ import annotations

import threading

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from marl_bgs_eval.seeds import memory_keys, root_key
from marl_bgs_llm.replies import FAILURES, KINDS

COLUMNS = {
    "game_key": "string",
    "play": "int32",
    "tick": "int32",
    "agent": "int8",
    "kind": "string",
    "prompt_tokens": "int64",
    "completion_tokens": "int64",
    "latency_s": "float64",
}
PERCENTILES = (50, 90, 99)


def key_text(key_data: np.ndarray) -> str:
    """A game's memory key (raw uint32 key data) as text."""
    return np.asarray(key_data, np.uint32).tobytes().hex()


def summarize(calls: pd.DataFrame) -> dict[str, float]:
    """Totals of a set of records: calls, tokens, legal share, failures by kind, latency
    percentiles (seconds)."""
    n = len(calls)
    kinds = calls["kind"].to_numpy(str)
    prompt = calls["prompt_tokens"].to_numpy(np.int64)
    reply = calls["completion_tokens"].to_numpy(np.int64)
    latency = calls["latency_s"].to_numpy(np.float64)
    out: dict[str, float] = {
        "calls": n,
        "prompt_tokens": int(prompt.sum()),
        "completion_tokens": int(reply.sum()),
        "prompt_tokens_mean": float(prompt.mean()) if n else 0.0,
        "completion_tokens_mean": float(reply.mean()) if n else 0.0,
        "legal_share": float(np.mean(kinds == "legal")) if n else float("nan"),
    }
    out.update({kind: int(np.sum(kinds == kind)) for kind in FAILURES})
    for p in PERCENTILES:
        out[f"latency_p{p}_s"] = float(np.percentile(latency, p)) if n else float("nan")
    return out


class Usage:
    """The records of one System (thread-safe to append)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._rows: list[tuple] = []
        self._plays: dict[str, int] = {}
        self._lock = threading.Lock()

    def new_games(self, keys: list[str]) -> None:
        """Games that start now (their tick 0): their records from here on are a new play."""
        with self._lock:
            for key in keys:
                self._plays[key] = self._plays.get(key, -1) + 1

    def add(self, rows: list[tuple]) -> None:
        """Append records: tuples of every `COLUMNS` entry but `play`, in that order."""
        bad = [r for r in rows if r[3] not in KINDS]
        if bad:
            raise ValueError(f"kind: expected one of {KINDS}, got {bad[0][3]!r}")
        with self._lock:
            self._rows.extend((r[0], self._plays.get(r[0], 0), *r[1:]) for r in rows)

    def calls(self) -> pd.DataFrame:
        """Every record, one row each."""
        with self._lock:
            rows = list(self._rows)
        frame = pd.DataFrame(rows, columns=list(COLUMNS))
        return frame.astype(COLUMNS)

    def summary(self) -> pd.DataFrame:
        """One row of totals for the whole System (`summarize`)."""
        return pd.DataFrame([{"system": self.name, **summarize(self.calls())}])

    def per_game(self, games: pd.DataFrame, team: int, path: tuple[int, ...] = ()) -> pd.DataFrame:
        """Totals per game of a results table in which this System played team `team` (0: A,
        1: B), from the latest play of each game: columns game, seed, system, then
        `summarize`'s (games without calls count 0). `path`: the `fold_in` indices from a game's
        memory key to this System's (set by compositions such as `marl_bgs_eval.team`)."""
        if team not in (0, 1):
            raise ValueError(f"team: expected 0 (A) or 1 (B), got {team!r}")
        calls = self.calls()
        latest = np.asarray(calls.groupby("game_key")["play"].transform("max"))
        calls = pd.DataFrame(calls[calls["play"].to_numpy() == latest])
        by_game: dict[str, pd.DataFrame] = {
            str(key): pd.DataFrame(frame) for key, frame in calls.groupby("game_key")
        }
        none = pd.DataFrame(calls.iloc[:0])
        seeds = games["seed"].to_numpy(np.int64)
        rows = []
        for seed in dict.fromkeys(seeds.tolist()):
            mine = seeds == seed
            numbers = games["game"].to_numpy(np.int64)[mine]
            keys = memory_keys(
                root_key(seed),
                jnp.asarray(games["seed_number"].to_numpy(np.int64)[mine]),
                jnp.asarray(numbers),
                team,
            )
            for index in path:
                keys = jax.vmap(lambda k, i=index: jax.random.fold_in(k, i))(keys)
            for game, kd in zip(numbers, np.asarray(jax.random.key_data(keys)), strict=True):
                of_game = by_game.get(key_text(kd), none)
                rows.append({"game": int(game), "seed": seed, "system": self.name,
                             **summarize(of_game)})  # fmt: skip
        return pd.DataFrame(rows)
