"""What was really played: distinct games per table, pairing and System.

A game repeats an earlier one (in table order) when both have the same setup
(`results.same_game`: Systems, map, rosters, limits) and the same trajectory fingerprint
(`fingerprint`): every agent did the same, tick by tick, in its own frame. So a spawn-swapped
pair of mirror images counts once, and so does every replay of one game that deterministic
Systems play under other seed numbers. Games without a fingerprint (files written before it)
keep the older rule: a pair whose two games agree on the result, points, ticks and every counter
counts once; nothing else is caught.

A pairing (system_a, system_b) *repeats* when it holds fewer distinct games than spawn-swapped
pairs: whole pairs replayed games already played, so its games are less evidence than their
count, and resampling them within a map (the default Elo intervals) finds no spread at all.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd

from marl_bgs_eval.modes import parts
from marl_bgs_eval.resampling import SCHEMES
from marl_bgs_eval.results import PAIR, TRAJECTORY, mode_of, outcome_columns, same_game

REPEATS_NOTE = (
    "repeats: a pairing with fewer distinct games than spawn-swapped pairs (deterministic "
    "Systems replay the same few games), so its games are less evidence than their count"
)
ZERO_WIDTH_NOTE = (
    "A zero-width interval means the resampled games were identical, not that the rating is "
    "known beyond the maps played."
)


def mirror_pairs(df: pd.DataFrame) -> pd.Series:
    """Per pair (index: seed, system_a, system_b, pair_id): whether its two games show exactly
    the same outcome and counters from team A's side: mirror images of one game, as happens
    whenever both Systems read only their own frame (the pair shares every random number). The
    rule for games without a trajectory fingerprint."""
    mode = mode_of(df)
    counters = parts(mode).metric_columns("priority")
    cols = [c for c in outcome_columns(mode) + counters if c in df.columns]
    groups = df.groupby([c for c in PAIR if c in df.columns], sort=False)
    same = groups[cols].nunique().eq(1).all(axis=1)
    return same & cast(pd.Series, groups.size()).eq(2)


def repeated(df: pd.DataFrame) -> np.ndarray:
    """Per row, whether the game repeats an earlier row's: same setup and fingerprint, or (for
    games without one) the second game of a mirror-image pair. bool [len(df)]."""
    known = np.zeros(len(df), bool)
    if TRAJECTORY in df.columns:
        known = (df[TRAJECTORY].fillna("").astype(str) != "").to_numpy()
    out = np.zeros(len(df), bool)
    if known.any():
        key = [c for c in same_game(mode_of(df)) if c in df.columns] + [TRAJECTORY]
        out[known] = df.loc[known, key].duplicated(keep="first").to_numpy()
    rest = df.loc[~known]
    if len(rest) and {"result", "ticks"} <= set(rest.columns):
        pair = [c for c in PAIR if c in rest.columns]
        mirrored = mirror_pairs(rest)
        in_mirror = rest.set_index(pair).index.isin(mirrored.loc[mirrored].index)
        second = rest.duplicated(pair, keep="first").to_numpy()
        out[np.flatnonzero(~known)[in_mirror & second]] = True
    return out


def distinct_games(df: pd.DataFrame) -> int:
    """How many different games a table holds (see the module's rule)."""
    return int(len(df) - repeated(df).sum())


def pairings(df: pd.DataFrame) -> pd.DataFrame:
    """One row per pairing (system_a, system_b, in order of appearance): games, pairs (spawn-
    swapped pairs), distinct (games) and repeats (distinct < pairs)."""
    g = df.assign(_distinct=~repeated(df))
    pair = [c for c in PAIR if c in df.columns]
    by = g.groupby(["system_a", "system_b"], sort=False)
    out = pd.DataFrame(
        {
            "games": by.size(),
            "pairs": g[pair].drop_duplicates().groupby(["system_a", "system_b"], sort=False).size(),
            "distinct": cast(pd.Series, by["_distinct"].sum()).astype(int),
        }
    ).reset_index()
    out["repeats"] = out["distinct"] < out["pairs"]
    return out


def per_system(df: pd.DataFrame) -> pd.DataFrame:
    """Per System (index, sorted): games (a self-play game once), distinct_games, and repeats
    (one of its pairings repeats)."""
    rep = repeated(df)
    flagged = pairings(df)
    flagged = flagged[flagged["repeats"]]
    a, b = df["system_a"].astype(str).to_numpy(), df["system_b"].astype(str).to_numpy()
    rows = {}
    for s in sorted({*a, *b}):
        mine = (a == s) | (b == s)
        rows[s] = {
            "games": int(mine.sum()),
            "distinct_games": int((mine & ~rep).sum()),
            "repeats": bool(((flagged["system_a"] == s) | (flagged["system_b"] == s)).any()),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def interval_notes(ratings: pd.DataFrame, bootstrap: int, scheme: str) -> list[str]:
    """The lines under a ratings table (`rate`'s): where its intervals' width comes from, and
    what a zero width means when an interval has one."""
    lines = [f"95% intervals: {bootstrap} refits, {SCHEMES[scheme]} (--bootstrap-scheme {scheme})"]
    width = ratings["elo_high"].to_numpy() - ratings["elo_low"].to_numpy()
    return [*lines, ZERO_WIDTH_NOTE] if width.min() < 0.5 else lines


def repeats_lines(df: pd.DataFrame) -> list[str]:
    """The footnote of a table over `df`: one line per repeating pairing, then `REPEATS_NOTE`
    (nothing when no pairing repeats)."""
    p = pairings(df)
    cols = ["system_a", "system_b", "games", "pairs", "distinct"]
    flagged = cast(pd.DataFrame, p.loc[p["repeats"], cols]).to_numpy()
    if not len(flagged):
        return []
    lines = [f"{a} vs {b}: {n} games, {k} distinct ({m} pairs)" for a, b, n, m, k in flagged]
    return [*lines, REPEATS_NOTE]
