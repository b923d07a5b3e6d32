"""Team Deathmatch's result columns and the checks of their rows (points, kills, maps)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from marl_bgs.tdm.classes import LETTERS as CLASS_LETTERS
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.kit import KIT
from marl_bgs.tdm.lifecycle import DEATH_POINTS, MAX_POINTS_PER_TICK, RED_ZONE_DEATH_POINTS
from marl_bgs.tdm.maps import CUSTOM_MAP_ID, all_ids
from marl_bgs.tdm.maps import load as load_map
from marl_bgs_eval.modes import INT, STR, FailRows
from marl_bgs_eval.tdm import metrics as mt

LETTERS = "-" + CLASS_LETTERS  # indexed by class id, "-" for an empty slot
RESULT_OF_OUTCOME = dict(list(enumerate(KIT.results))[1:])  # {1: "win", 2: "loss", 3: "draw"}
ROSTER = re.compile(f"[{CLASS_LETTERS}]{{1,{TEAM_SIZE}}}")
# The mode's own columns, after the common ones (`marl_bgs_eval.results.COMMON`).
COLUMNS: dict[str, str] = {
    "roster_a": STR,
    "roster_b": STR,
    "points_a": INT,
    "points_b": INT,
    **dict.fromkeys(mt.base_columns(), INT),
    "winning_score": INT,
}
SAME_IN_PAIR = ["roster_a", "roster_b"]
SAME_GAME = ["roster_a", "roster_b", "winning_score"]
OUTCOME = ["points_a", "points_b"]


def roster_text(ids: Any) -> str:
    """A roster's class ids as letters ("MWHRP"); empty slots are left out."""
    return "".join(LETTERS[int(c)] for c in ids if c)


def row_columns(
    sched: pd.DataFrame, final: Any, counters: pd.DataFrame, rosters: Sequence[tuple[str, ...]],
    meta: dict[str, int],
) -> dict[str, Any]:  # fmt: skip
    """Team Deathmatch's columns of finished games: rosters, points, kills and deaths."""
    r = sched["roster_index"].to_numpy()
    score = np.asarray(final)
    cols: dict[str, Any] = {
        "roster_a": [rosters[k][0] for k in r],
        "roster_b": [rosters[k][1] for k in r],
        "points_a": score[:, 0],
        "points_b": score[:, 1],
    }
    cols.update({c: counters[c].to_numpy() for c in mt.base_columns()})
    cols["winning_score"] = meta["winning_score"]
    return cols


def check_rows(df: pd.DataFrame, fail: FailRows) -> None:
    """Each row on its own: rosters, a result that follows from the points, points that follow
    from the kills, counts within what the ticks allow, and a known map."""
    fail(df["winning_score"] < 1, f"winning_score must be >= 1, got {df['winning_score'].min()}")
    for col in ("roster_a", "roster_b"):
        bad = ~df[col].map(lambda v: ROSTER.fullmatch(v) is not None)
        fail(bad, f"{col} must be 1-5 class letters of MWHRP")
    a, b, limit, ticks = df["points_a"], df["points_b"], df["winning_score"], df["ticks"]
    top = limit - 1 + MAX_POINTS_PER_TICK
    fail((a > top) | (b > top), "points beyond one tick past the winning score")
    reached = (a >= limit) | (b >= limit)
    expected = np.where(reached, np.where(a > b, "win", np.where(b > a, "loss", "draw")), "draw")
    fail(
        df["result"].to_numpy() != expected,
        "result does not follow from points_a, points_b and winning_score",
    )
    fail(
        ~reached & (ticks != df["tick_limit"]),
        "ended before tick_limit with no team at winning_score",
    )
    fail(df["a_kills"] != df["b_deaths"], "a_kills differs from b_deaths")
    fail(df["b_kills"] != df["a_deaths"], "b_kills differs from a_deaths")
    low, high, extra = DEATH_POINTS, RED_ZONE_DEATH_POINTS, RED_ZONE_DEATH_POINTS - DEATH_POINTS
    for t, pts, kills in (("a", a, df["a_kills"]), ("b", b, df["b_kills"])):
        fail(
            (pts < low * kills) | (pts > high * kills),
            f"points_{t} must be {low} or {high} per kill ({t}_kills)",
        )
        cap = TEAM_SIZE * ticks
        for m in ("rejected_actions", "basics_used", "ultimates_used"):
            col = f"{t}_{m}"
            if col in df.columns:
                fail(df[col] > cap, f"{col} exceeds {TEAM_SIZE} agents x ticks")
        if f"{t}_red_zone_deaths" in df.columns:
            other = "b" if t == "a" else "a"
            exact = pts != low * kills + extra * df[f"{other}_red_zone_deaths"]
            fail(exact, f"points_{t} != {t}_kills + {other}_red_zone_deaths")
            fail(
                df[f"{t}_red_zone_deaths"] > df[f"{t}_deaths"],
                f"{t}_red_zone_deaths exceed {t}_deaths",
            )
    _check_maps(df, fail)


def _check_maps(df: pd.DataFrame, fail: FailRows) -> None:
    shipped = {i: load_map(i) for i in all_ids()}
    known = cast(pd.Series, df["map"]).isin([*shipped, CUSTOM_MAP_ID])
    fail(
        ~known,
        f"unknown map {df.loc[~known, 'map'].iat[0] if (~known).any() else ''}; shipped maps are "
        f"0-{max(shipped)}, custom maps are recorded as {CUSTOM_MAP_ID}",
    )
    ids = df["map"].to_numpy()
    want = np.asarray([shipped[i].content_hash if i in shipped else "" for i in ids], object)
    wrong = (ids != CUSTOM_MAP_ID) & (df["map_hash"].to_numpy() != want)
    fail(wrong, "map_hash does not match the shipped map of that id")
