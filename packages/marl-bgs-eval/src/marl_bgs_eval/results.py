"""Results tables: one row per game, with a fixed schema; saved and loaded as Parquet or CSV.

Loading validates every column (present, right type, allowed values) and raises `EvalError`
naming the column, so a malformed or hostile file never reaches the ratings.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from marl_bgs_eval import metrics as mt
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.systems import System

LETTERS = "-MWHRP"
SLOTS = [f"system_{t}_slot{i}" for t in "ab" for i in range(5)]
INT, STR, FLOAT = "int64", "string", "float64"
COLUMNS: dict[str, str] = {
    "game": INT,
    "pair_id": INT,
    "seed_number": INT,
    "seed": INT,
    "map": INT,
    "a_spawn": STR,
    "system_a": STR,
    "system_b": STR,
    **dict.fromkeys(SLOTS, STR),
    "roster_a": STR,
    "roster_b": STR,
    "result": STR,
    "points_a": INT,
    "points_b": INT,
    **dict.fromkeys(mt.base_columns(), INT),
    "ticks": INT,
    "tick_limit": INT,
    "winning_score": INT,
}
METRIC_COLUMNS = dict.fromkeys(mt.priority_columns(), FLOAT)
VALUES = {"result": {"win", "draw", "loss"}, "a_spawn": {"left", "right"}}
RESULT_OF_OUTCOME = {1: "win", 2: "loss", 3: "draw"}


def _roster(ids: Any) -> str:
    return "".join(LETTERS[int(c)] for c in ids if c)


def _names(leaves: tuple[str, ...], who: np.ndarray) -> np.ndarray:
    table = np.asarray([*leaves, "-"], dtype=object)
    return table[np.where(who < 0, len(leaves), who)]


def frame(
    sched: pd.DataFrame,
    out: Any,
    a: System,
    b: System,
    map_ids: list[int],
    rosters: np.ndarray,
    level: str,
    meta: dict[str, int],
) -> pd.DataFrame:
    """Assemble the results table from the schedule and the device's per-game buffers."""
    n = len(sched)
    r, m = sched["roster_index"].to_numpy(), sched["map_index"].to_numpy()
    outcome = np.asarray(out.outcome[:n])
    if np.any(outcome == 0):
        raise RuntimeError("internal: a scheduled game has no result")
    counters = np.asarray(out.counters[:n], np.float64)
    cols: dict[str, Any] = {
        "game": sched["game"],
        "pair_id": sched["seed_number"],
        "seed_number": sched["seed_number"],
        "seed": meta["seed"],
        "map": np.asarray(map_ids)[m],
        "a_spawn": np.where(sched["swap"], "right", "left"),
        "system_a": a.name,
        "system_b": b.name,
    }
    who_a, who_b = np.asarray(out.who_a[:n]), np.asarray(out.who_b[:n])
    for i in range(5):
        cols[f"system_a_slot{i}"] = _names(a.leaves, who_a[:, i])
    for i in range(5):
        cols[f"system_b_slot{i}"] = _names(b.leaves, who_b[:, i])
    cols["roster_a"] = [_roster(rosters[k][:5]) for k in r]
    cols["roster_b"] = [_roster(rosters[k][5:]) for k in r]
    cols["result"] = [RESULT_OF_OUTCOME[int(o)] for o in outcome]
    score = np.asarray(out.score[:n])
    cols["points_a"], cols["points_b"] = score[:, 0], score[:, 1]
    for j, name in enumerate(mt.base_columns()):
        cols[name] = np.rint(counters[:, j])
    cols["ticks"] = np.asarray(out.ticks[:n])
    cols["tick_limit"], cols["winning_score"] = meta["tick_limit"], meta["winning_score"]
    if level == "priority":
        for j, name in enumerate(mt.priority_columns()):
            cols[name] = counters[:, len(mt.base_columns()) + j]
    return normalize(pd.DataFrame(cols))


def normalize(df: pd.DataFrame) -> pd.DataFrame:
    """Cast every known column to its schema dtype (a fresh frame with a plain index)."""
    schema = {**COLUMNS, **METRIC_COLUMNS}
    df = df.reset_index(drop=True)
    return df.astype({c: schema[c] for c in df.columns if c in schema})


def validate(df: pd.DataFrame, source: str = "results") -> pd.DataFrame:
    """Check a results table (types, values, metric columns all or none); return it normalized."""
    if not isinstance(df, pd.DataFrame):
        raise EvalError(f"{source}: expected a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise EvalError(f"{source}: missing column(s) {missing}")
    present = [c for c in METRIC_COLUMNS if c in df.columns]
    if present and len(present) != len(METRIC_COLUMNS):
        gone = [c for c in METRIC_COLUMNS if c not in df.columns]
        raise EvalError(f"{source}: metric column(s) {gone} missing (give all 16 or none)")
    extra = [c for c in df.columns if c not in COLUMNS and c not in METRIC_COLUMNS]
    if extra:
        raise EvalError(f"{source}: unknown column(s) {extra}")
    out = {}
    for col in df.columns:
        out[col] = _column(pd.Series(df[col]), col, {**COLUMNS, **METRIC_COLUMNS}[col], source)
    frame_ = pd.DataFrame(out)
    if len(frame_) == 0:
        raise EvalError(f"{source}: no games")
    return normalize(frame_)


def _column(s: pd.Series, col: str, kind: str, source: str) -> pd.Series:
    where = f"{source}: column {col!r}"
    if kind == STR:
        if not all(isinstance(v, str) for v in s.tolist()):
            raise EvalError(f"{where}: expected text in every row")
        if col in VALUES and not set(s.tolist()) <= VALUES[col]:
            bad = sorted(set(s.tolist()) - VALUES[col])[:3]
            raise EvalError(f"{where}: values {bad} are not in {sorted(VALUES[col])}")
        return s
    if s.dtype == object or pd.api.types.is_string_dtype(s.dtype):
        try:  # text (CSV): Python's own parsers, exact for the repr that `save` writes
            s = s.astype(INT if kind == INT else FLOAT)
        except (ValueError, TypeError):
            raise EvalError(
                f"{where}: expected {'integers' if kind == INT else 'numbers'}"
            ) from None
    if kind == INT and not pd.api.types.is_integer_dtype(s.dtype):
        raise EvalError(f"{where}: expected integers, got dtype {s.dtype}")
    if kind == FLOAT and not pd.api.types.is_numeric_dtype(s.dtype):
        raise EvalError(f"{where}: expected numbers, got dtype {s.dtype}")
    if kind == FLOAT and not np.all(np.isfinite(s.to_numpy(np.float64))):
        raise EvalError(f"{where}: expected finite numbers in every row")
    return s


def save(df: pd.DataFrame, path: str | Path) -> Path:
    """Write a results table to `.parquet` or `.csv` (chosen by the suffix)."""
    path = Path(path)
    df = validate(df)
    if path.suffix == ".parquet":
        df.to_parquet(path, index=False)
    elif path.suffix == ".csv":
        df.to_csv(path, index=False, float_format=None)
    else:
        raise EvalError(f"path: expected a .parquet or .csv file, got {str(path)!r}")
    return path


def load(path: str | Path) -> pd.DataFrame:
    """Read and validate a results table written by `save` (or by anyone, to the same schema)."""
    path = Path(path)
    if not path.is_file():
        raise EvalError(f"path: results file {str(path)!r} does not exist")
    try:
        if path.suffix == ".parquet":
            df = pd.read_parquet(path)
        elif path.suffix == ".csv":
            df = pd.read_csv(path, dtype=str, keep_default_na=False)
        else:
            raise EvalError(f"path: expected a .parquet or .csv file, got {str(path)!r}")
    except EvalError:
        raise
    except Exception as err:  # malformed bytes: name the file, not the parser's internals
        raise EvalError(f"path: cannot read {str(path)!r}: {type(err).__name__}: {err}") from None
    return validate(df, source=path.name)


@contextlib.contextmanager
def progress_bar(enabled: bool, total: int, label: str) -> Iterator[Callable[[int], None]]:
    """A rich progress bar over games (a no-op when disabled)."""
    if not enabled:
        yield lambda k: None
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda k: bar.advance(task, k)
