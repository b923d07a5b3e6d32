"""The season folder's tables, checked: ratings.csv, matchups.csv, measures.csv, the studies'
tables (studies/teamwork.csv, studies/zero_shot.csv) and the few columns of games.csv the pages
need. Every cell is read as text and parsed here, so a bad cell is a SeasonDataError naming the
file, row and column, never a crash further on."""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from marl_bgs_eval.screen import COLUMNS as SCREEN_COLUMNS
from marl_bgs_tournament.studies import ZERO_SHOT_COLUMNS
from marl_bgs_tournament.web.files import SeasonDataError, read_bytes, signature

MAX_TABLE_BYTES = 64 << 20
MAX_GAMES_BYTES = 4 << 30  # games.csv holds every metric column; only four are read
NULLS = ("", "nan", "NaN", "None", "null", "<NA>")
RESULT_FLIP = {"win": "loss", "draw": "draw", "loss": "win"}


def _frame(data: bytes | Path, name: str, usecols: list[str] | None = None) -> pd.DataFrame:
    """A CSV as text cells (the `# ` integrity line of an older games.csv is skipped)."""
    if isinstance(data, bytes):
        head, source = data[:2], io.BytesIO(data)
    else:
        with open(data, "rb") as f:
            head, source = f.read(2), data
    try:
        df = pd.read_csv(
            source, dtype=str, keep_default_na=False, skiprows=1 if head == b"# " else 0,
            usecols=usecols, encoding="utf-8",
        )  # fmt: skip
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as err:
        raise SeasonDataError(f"{name}: not a readable CSV table ({type(err).__name__}: "
                              f"{str(err)[:120]})") from None  # fmt: skip
    return df


def _table(path: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    df = _frame(read_bytes(path, MAX_TABLE_BYTES), path.name)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise SeasonDataError(f"{path.name}: missing column(s) {missing}")
    return df


class _Cells:
    """Parses the cells of one table row, naming the file, row and column on failure."""

    def __init__(self, name: str, k: int, row: dict[str, str]) -> None:
        self.where, self.row = f"{name}: row {k + 1}", row

    def _fail(self, col: str, what: str) -> SeasonDataError:
        return SeasonDataError(f"{self.where}, column {col}: expected {what}, got "
                               f"{self.row[col][:40]!r}")  # fmt: skip

    def text(self, col: str, empty: bool = False) -> str:
        v = self.row[col].strip()
        if (not v and not empty) or len(v) > 200:
            raise self._fail(col, "a text of 1-200 characters")
        return v

    def integer(self, col: str, low: int = 0, null: bool = False) -> int | None:
        v = self.row[col].strip()
        if null and v in NULLS:
            return None
        try:
            f = float(v)
        except ValueError:
            raise self._fail(col, "an integer") from None
        if not (math.isfinite(f) and f == int(f) and low <= f < 2**53):
            raise self._fail(col, f"an integer >= {low}")
        return int(f)

    def number(self, col: str, null: bool = False, low: float = -math.inf,
               high: float = math.inf) -> float | None:  # fmt: skip
        v = self.row[col].strip()
        if null and v in NULLS:
            return None
        try:
            f = float(v)
        except ValueError:
            raise self._fail(col, "a number") from None
        if not (math.isfinite(f) and low <= f <= high):
            raise self._fail(col, f"a finite number in [{low}, {high}]")
        return f

    def boolean(self, col: str) -> bool:
        v = self.row[col].strip().lower()
        if v not in ("true", "false", "1", "0"):
            raise self._fail(col, "true or false")
        return v in ("true", "1")


def _rows(df: pd.DataFrame, name: str, parse: Callable[[_Cells], dict[str, Any]]) -> list[dict]:
    return [parse(_Cells(name, k, row)) for k, row in enumerate(df.to_dict("records"))]


RATING_COLUMNS = (
    "rank", "system", "elo", "elo_low", "elo_high", "tier", "division_tier", "division",
    "win_chance", "games", "wins", "draws", "losses", "member", "team",
)  # fmt: skip


def _rating(c: _Cells) -> dict[str, Any]:
    # distinct_games and repeats are absent from season folders written before them
    distinct = c.integer("distinct_games") if "distinct_games" in c.row else None
    row = {
        "rank": c.integer("rank", 1), "system": c.text("system"),
        **{k: c.number(k) for k in ("elo", "elo_low", "elo_high")},
        "tier": c.text("tier"), "division_tier": c.text("division_tier"),
        "division": c.integer("division", 1, null=True),
        "win_chance": c.number("win_chance", low=0.0, high=1.0),
        **{k: c.integer(k) for k in ("games", "wins", "draws", "losses")},
        "member": c.boolean("member"), "team": c.text("team"), "distinct_games": distinct,
        "repeats": c.boolean("repeats") if "repeats" in c.row else False,
    }  # fmt: skip
    if row["wins"] + row["draws"] + row["losses"] != row["games"]:
        raise SeasonDataError(f"{c.where}: wins + draws + losses differ from games")
    if distinct is not None and not 0 < distinct <= row["games"]:
        raise SeasonDataError(f"{c.where}: distinct_games must lie in [1, games]")
    return row


def ratings(path: Path) -> list[dict[str, Any]]:
    """ratings.csv: the leaderboard, one row per System, in rank order."""
    rows = _rows(_table(path, RATING_COLUMNS), path.name, _rating)
    if not rows:
        raise SeasonDataError(f"{path.name}: no Systems")
    names = [r["system"] for r in rows]
    if len(set(names)) != len(names):
        raise SeasonDataError(f"{path.name}: a System is listed twice")
    rows.sort(key=lambda r: r["rank"])
    return rows


def matchups(path: Path) -> dict[str, Any]:
    """matchups.csv: team A's score per game against each team B (None where no games)."""
    df = _table(path, ("system_a",))
    cols = [c for c in df.columns if c != "system_a"]
    rows_a, scores = [], []
    for k, row in enumerate(df.to_dict("records")):
        c = _Cells(path.name, k, row)
        rows_a.append(c.text("system_a"))
        scores.append([c.number(b, null=True, low=0.0, high=1.0) for b in cols])
    if len(set(rows_a)) != len(rows_a) or len(set(cols)) != len(cols):
        raise SeasonDataError(f"{path.name}: a System is listed twice")
    for b in cols:
        if not 0 < len(b) <= 200:
            raise SeasonDataError(f"{path.name}: a column name is not a System name")
    return {"systems_a": rows_a, "systems_b": cols, "scores": scores}


def _measure(c: _Cells) -> dict[str, Any]:
    return {
        "system": c.text("system"), "measure": c.text("measure"), "kind": c.text("kind"),
        "unit": c.text("unit", empty=True),
        **{k: c.number(k, null=True) for k in ("value", "low", "high")},
        "games": c.integer("games"),
    }  # fmt: skip


def measures(path: Path) -> list[dict[str, Any]]:
    """measures.csv: per (System, measure) its value and interval over the season's games."""
    cols = ("system", "measure", "kind", "unit", "value", "low", "high", "games")
    return _rows(_table(path, cols), path.name, _measure)


def _screened(c: _Cells) -> dict[str, Any]:
    return {
        "measure": c.text("measure"), "rho": c.number("rho", null=True, low=-1.0, high=1.0),
        **{k: c.number(k, null=True, low=0.0, high=1.0) for k in ("p", "p_holm", "p_maxt")},
        "systems": c.integer("systems"), "varies": c.boolean("varies"),
        "exact": c.boolean("exact"),
    }  # fmt: skip


def teamwork(path: Path) -> list[dict[str, Any]]:
    """studies/teamwork.csv: the teamwork screen, one row per measure (`studies.teamwork`)."""
    return _rows(_table(path, tuple(SCREEN_COLUMNS)), path.name, _screened)


def _stranger(c: _Cells) -> dict[str, Any]:
    numbers = ("margin_change", "low", "high", "distance", "base_distance", "distance_added")
    return {
        "base": c.text("base"), "stranger": c.text("stranger"),
        "stranger_elo": c.number("stranger_elo", null=True), "class": c.text("class"),
        "games": c.integer("games"), **{k: c.number(k, null=True) for k in numbers},
    }  # fmt: skip


def zero_shot(path: Path) -> list[dict[str, Any]]:
    """studies/zero_shot.csv: the zero-shot study, one row per (stranger, class)
    (`studies.zero_shot`)."""
    return _rows(_table(path, ZERO_SHOT_COLUMNS), path.name, _stranger)


def records(path: Path) -> dict[str, list[dict[str, Any]]]:
    """games.csv, reduced to each System's record against each opponent (from its own side):
    wins, draws, losses, games and score (wins + draws / 2 per game). Self-play is left out."""
    if signature(path)[1] > MAX_GAMES_BYTES:
        raise SeasonDataError(f"{path.name}: larger than {MAX_GAMES_BYTES} bytes")
    df = _frame(path, path.name, usecols=["system_a", "system_b", "result"])
    tally: dict[str, dict[str, list[int]]] = {}
    for k, row in enumerate(df.to_dict("records")):
        c = _Cells(path.name, k, row)
        a, b, result = c.text("system_a"), c.text("system_b"), row["result"]
        if result not in RESULT_FLIP:
            raise SeasonDataError(f"{c.where}, column result: expected win, draw or loss")
        if a == b:
            continue
        for me, other, res in ((a, b, result), (b, a, RESULT_FLIP[result])):
            counts = tally.setdefault(me, {}).setdefault(other, [0, 0, 0])
            counts[("win", "draw", "loss").index(res)] += 1
    out = {}
    for me, by_opponent in tally.items():
        out[me] = [
            {"opponent": other, "wins": w, "draws": d, "losses": l_, "games": w + d + l_,
             "score": (w + d / 2) / (w + d + l_)}
            for other, (w, d, l_) in sorted(by_opponent.items())
        ]  # fmt: skip
    return out
