"""Results tables: one row per game, with a fixed schema; saved and loaded as Parquet or CSV.

Loading validates every column (present, right type, allowed values), the content of every row
(a win has the winning score, points match the deaths, ticks lie within the limit, the map is
known, each pair holds its two games, games with one trajectory fingerprint end alike) and the
file's integrity record (game count and SHA-256, written by `save`), and raises `EvalError`
naming the file, the column and the row. So a cut, edited, duplicated or hostile file never
reaches the ratings.

The record lives in the Parquet schema metadata, and beside a CSV in `<name>.csv.meta.json`, so
both open with a plain `pandas.read_parquet`/`read_csv`. CSV files written before that carry it
as a `# {...}` first line; `load` still reads them.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import marl_bgs
from marl_bgs.tdm.classes import LETTERS as CLASS_LETTERS
from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.lifecycle import DEATH_POINTS, MAX_POINTS_PER_TICK, RED_ZONE_DEATH_POINTS
from marl_bgs.tdm.maps import CUSTOM_MAP_ID, MapSpec
from marl_bgs_eval import fingerprint as fp
from marl_bgs_eval import metrics as mt
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.systems import System

FORMAT = "marl-bgs-results-v1"
META_KEY = b"marl-bgs-results"  # Parquet schema metadata; a CSV's is in its side file
META_SUFFIX = ".meta.json"  # games.csv -> games.csv.meta.json
META_LIMIT = 64 * 1024  # bytes a side file may hold (a record is about 120)
LETTERS = "-" + CLASS_LETTERS  # indexed by class id, "-" for an empty slot
SLOTS = [f"system_{t}_slot{i}" for t in "ab" for i in range(5)]
INT, STR, FLOAT = "int64", "string", "float64"
COLUMNS: dict[str, str] = {
    "game": INT,
    "pair_id": INT,
    "seed_number": INT,
    "seed": INT,
    "map": INT,
    "map_name": STR,
    "map_hash": STR,
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
# The game's trajectory fingerprint (`fingerprint`): 16 hex digits, or "" where unknown. Files
# written before it existed lack the column; a table combined from both holds "" for their games.
TRAJECTORY = "trajectory"
OPTIONAL_COLUMNS = {TRAJECTORY: STR}
METRIC_COLUMNS = {
    c: FLOAT if mt.is_amount(c) else INT for c in mt.priority_columns() + mt.full_columns()
}
# The metric columns a table may hold beyond the base ones: one level's set, whole.
LEVEL_COLUMNS = {
    level: frozenset(mt.columns(level)) - frozenset(mt.base_columns()) for level in mt.LEVELS
}
SCHEMA = {**COLUMNS, **OPTIONAL_COLUMNS, **METRIC_COLUMNS}
VALUES = {"result": {"win", "draw", "loss"}, "a_spawn": {"left", "right"}}
RESULT_OF_OUTCOME = {1: "win", 2: "loss", 3: "draw"}
IDENTITY = ["seed", "system_a", "system_b", "game"]  # one game; never twice in a table
PAIR = ["seed", "system_a", "system_b", "pair_id"]  # the two spawn-swapped games of a pair
SAME_IN_PAIR = ["seed_number", "map", "map_hash", "roster_a", "roster_b", "tick_limit"]
# One game's setup: games that also share a trajectory fingerprint are one game played again.
SAME_GAME = ["system_a", "system_b", "map_hash", "roster_a", "roster_b", "tick_limit",
             "winning_score"]  # fmt: skip
ROSTER = re.compile(f"[{CLASS_LETTERS}]{{1,{TEAM_SIZE}}}")
HASH = re.compile(r"[0-9a-f]{16}")
# What both games of a pair show from team A's side when they are mirror images of each other.
OUTCOME = ["result", "points_a", "points_b", "ticks"]


def roster_text(ids: Any) -> str:
    """A roster's class ids as letters ("MWHRP"); empty slots are left out."""
    return "".join(LETTERS[int(c)] for c in ids if c)


def _names(leaves: tuple[str, ...], who: np.ndarray) -> np.ndarray:
    table = np.asarray([*leaves, "-"], dtype=object)
    return table[np.where(who < 0, len(leaves), who)]


def frame(
    sched: pd.DataFrame,
    out: Any,
    a: System,
    b: System,
    maps: Sequence[MapSpec],
    rosters: np.ndarray,
    level: str,
    meta: dict[str, int],
) -> pd.DataFrame:
    """The results rows of the scheduled games `sched` from their per-game buffers `out` (row k
    of every buffer belongs to row k of `sched`)."""
    r, m = sched["roster_index"].to_numpy(), sched["map_index"].to_numpy()
    outcome = np.asarray(out.outcome)
    if np.any(outcome == 0):
        raise RuntimeError("internal: a scheduled game has no result")
    counters = np.asarray(out.counters, np.float64)
    cols: dict[str, Any] = {
        "game": sched["game"].to_numpy(),
        "pair_id": sched["seed_number"].to_numpy(),
        "seed_number": sched["seed_number"].to_numpy(),
        "seed": meta["seed"],
        "map": [maps[k].record_id for k in m],
        "map_name": [maps[k].name for k in m],
        "map_hash": [maps[k].content_hash for k in m],
        "a_spawn": np.where(sched["swap"].to_numpy(), "right", "left"),
        "system_a": a.name,
        "system_b": b.name,
    }
    who_a, who_b = np.asarray(out.who_a), np.asarray(out.who_b)
    for i in range(5):
        cols[f"system_a_slot{i}"] = _names(a.leaves, who_a[:, i])
    for i in range(5):
        cols[f"system_b_slot{i}"] = _names(b.leaves, who_b[:, i])
    cols["roster_a"] = [roster_text(rosters[k][:5]) for k in r]
    cols["roster_b"] = [roster_text(rosters[k][5:]) for k in r]
    cols["result"] = [RESULT_OF_OUTCOME[int(o)] for o in outcome]
    score = np.asarray(out.score)
    cols["points_a"], cols["points_b"] = score[:, 0], score[:, 1]
    names = mt.columns(level)
    amount = np.asarray([mt.is_amount(c) for c in names], bool)
    ints = pd.DataFrame(
        np.rint(counters[:, ~amount]).astype(np.int64), columns=np.asarray(names)[~amount]
    )
    floats = pd.DataFrame(counters[:, amount], columns=np.asarray(names)[amount])
    metrics = cast(pd.DataFrame, pd.concat([ints, floats], axis=1)[names])
    cols["ticks"] = np.asarray(out.ticks)
    cols["tick_limit"], cols["winning_score"] = meta["tick_limit"], meta["winning_score"]
    cols.update({c: metrics[c].to_numpy() for c in mt.base_columns()})
    cols[TRAJECTORY] = fp.text(out.trajectory)
    table = cast(pd.DataFrame, pd.DataFrame(cols)[[*COLUMNS, TRAJECTORY]])
    extra = cast(pd.DataFrame, metrics[[c for c in names if c in METRIC_COLUMNS]])
    return normalize(pd.concat([table, extra], axis=1))


def normalize(df: pd.DataFrame) -> pd.DataFrame:
    """Cast every known column to its schema dtype (a fresh frame with a plain index); a
    missing trajectory (a game from a file without the column) becomes ""."""
    df = df.reset_index(drop=True)
    if TRAJECTORY in df.columns and bool(df[TRAJECTORY].isna().any()):
        df[TRAJECTORY] = _unknown_as_empty(pd.Series(df[TRAJECTORY]))
    dtypes = df.dtypes
    cast = {c: SCHEMA[c] for c, d in dtypes.items() if c in SCHEMA and str(d) != SCHEMA[c]}
    if len(cast) > 64:  # a table from a file: one pass over every column
        return df.astype(cast)
    for col, kind in cast.items():  # a few columns (a played table): leave the rest untouched
        df[col] = df[col].astype(kind)
    return df


def _unknown_as_empty(s: pd.Series) -> pd.Series:
    """Missing fingerprints (games of a table without the column, joined to one with it) as ""."""
    return s.astype(object).where(s.notna(), "")


def validate(df: pd.DataFrame, source: str = "results", *, complete: bool = True) -> pd.DataFrame:
    """Check a results table: columns and types, every row's content, unique games and whole
    pairs (`complete=False` allows a pair whose second game is still to come, as in a journal
    of a run in progress). Returns it normalized."""
    if not isinstance(df, pd.DataFrame):
        raise EvalError(f"{source}: expected a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise EvalError(f"{source}: missing column(s) {missing}")
    present = frozenset(c for c in METRIC_COLUMNS if c in df.columns)
    if present not in LEVEL_COLUMNS.values():
        level = "full" if present - LEVEL_COLUMNS["priority"] else "priority"
        gone = sorted(LEVEL_COLUMNS[level] - present)
        raise EvalError(
            f"{source}: metric column(s) {gone[:5]}{' ...' if len(gone) > 5 else ''} missing: "
            f"a table holds every column of one metric level or none ({len(gone)} missing of "
            f"the {len(LEVEL_COLUMNS[level])} of level {level!r})"
        )
    extra = [c for c in df.columns if c not in SCHEMA]
    if extra:
        raise EvalError(f"{source}: unknown column(s) {extra}")
    repeated = sorted(set(df.columns[df.columns.duplicated()]))
    if repeated:
        raise EvalError(f"{source}: repeated column(s) {repeated}")
    out = {col: _column(pd.Series(df[col]), col, SCHEMA[col], source) for col in df.columns}
    table = normalize(pd.DataFrame(out))
    if len(table) == 0:
        raise EvalError(f"{source}: no games")
    _check_rows(table, source)
    _check_games(table, source, complete)
    return table


def _column(s: pd.Series, col: str, kind: str, source: str) -> pd.Series:
    where = f"{source}: column {col!r}"
    if col == TRAJECTORY:
        s = _unknown_as_empty(s)
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
        except (ValueError, TypeError, OverflowError):
            raise EvalError(
                f"{where}: expected {'integers' if kind == INT else 'numbers'}"
            ) from None
    if kind == INT and not pd.api.types.is_integer_dtype(s.dtype):
        raise EvalError(f"{where}: expected integers, got dtype {s.dtype}")
    if kind == INT and s.isna().any():  # a nullable integer dtype (Int64) with missing values
        raise EvalError(f"{where}: expected integers in every row, some are missing")
    real = pd.api.types.is_integer_dtype(s.dtype) or pd.api.types.is_float_dtype(s.dtype)
    if kind == FLOAT and not real:  # not bool, not complex (astype would drop the imaginary part)
        raise EvalError(f"{where}: expected numbers, got dtype {s.dtype}")
    if kind == FLOAT and not np.all(np.isfinite(s.to_numpy(np.float64))):
        raise EvalError(f"{where}: expected finite numbers in every row")
    return s


def _fail_rows(df: pd.DataFrame, bad: Any, source: str, what: str) -> None:
    bad = np.asarray(bad, bool)
    if bad.any():
        k = int(np.argmax(bad))
        raise EvalError(
            f"{source}: row {k} (game {df['game'].iat[k]}): {what} "
            f"({int(bad.sum())} row(s) like it)"
        )


def _check_rows(df: pd.DataFrame, source: str) -> None:
    """Each row on its own: ranges, names, maps, and a result that follows from the points."""
    counts = [c for c, kind in SCHEMA.items() if kind != STR and c in df.columns and c != "map"]
    for col in counts:
        low = 1 if col in ("ticks", "tick_limit", "winning_score") else 0
        _fail_rows(df, df[col] < low, source, f"{col} must be >= {low}, got {df[col].min()}")
    for col in ("system_a", "system_b", "map_name", *SLOTS):
        _fail_rows(df, df[col].str.strip() == "", source, f"{col} is empty")
    for col in ("roster_a", "roster_b"):
        bad = ~df[col].map(lambda v: ROSTER.fullmatch(v) is not None)
        _fail_rows(df, bad, source, f"{col} must be 1-5 class letters of MWHRP")
    a, b, limit, ticks = df["points_a"], df["points_b"], df["winning_score"], df["ticks"]
    _fail_rows(df, ticks > df["tick_limit"], source, "ticks exceed tick_limit")
    top = limit - 1 + MAX_POINTS_PER_TICK
    _fail_rows(df, (a > top) | (b > top), source, "points beyond one tick past the winning score")
    reached = (a >= limit) | (b >= limit)
    expected = np.where(reached, np.where(a > b, "win", np.where(b > a, "loss", "draw")), "draw")
    _fail_rows(
        df, df["result"].to_numpy() != expected, source,
        "result does not follow from points_a, points_b and winning_score",
    )  # fmt: skip
    early = ~reached & (ticks != df["tick_limit"])
    _fail_rows(df, early, source, "ended before tick_limit with no team at winning_score")
    _fail_rows(df, df["a_kills"] != df["b_deaths"], source, "a_kills differs from b_deaths")
    _fail_rows(df, df["b_kills"] != df["a_deaths"], source, "b_kills differs from a_deaths")
    low, high, extra = DEATH_POINTS, RED_ZONE_DEATH_POINTS, RED_ZONE_DEATH_POINTS - DEATH_POINTS
    for t, pts, kills in (("a", a, df["a_kills"]), ("b", b, df["b_kills"])):
        _fail_rows(
            df, (pts < low * kills) | (pts > high * kills), source,
            f"points_{t} must be {low} or {high} per kill ({t}_kills)",
        )  # fmt: skip
        cap = TEAM_SIZE * ticks
        for m in ("rejected_actions", "basics_used", "ultimates_used"):
            col = f"{t}_{m}"
            if col in df.columns:
                _fail_rows(df, df[col] > cap, source, f"{col} exceeds {TEAM_SIZE} agents x ticks")
        if f"{t}_red_zone_deaths" in df.columns:
            other = "b" if t == "a" else "a"
            exact = pts != low * kills + extra * df[f"{other}_red_zone_deaths"]
            _fail_rows(df, exact, source, f"points_{t} != {t}_kills + {other}_red_zone_deaths")
            _fail_rows(
                df, df[f"{t}_red_zone_deaths"] > df[f"{t}_deaths"], source,
                f"{t}_red_zone_deaths exceed {t}_deaths",
            )  # fmt: skip
    _check_maps(df, source)


def _check_maps(df: pd.DataFrame, source: str) -> None:
    shipped = {i: marl_bgs.maps.load(i) for i in marl_bgs.maps.all_ids()}
    bad_hash = ~df["map_hash"].map(lambda v: HASH.fullmatch(v) is not None)
    _fail_rows(df, bad_hash, source, "map_hash must be 16 hex digits")
    if TRAJECTORY in df.columns:
        bad = ~df[TRAJECTORY].map(lambda v: v == "" or HASH.fullmatch(v) is not None)
        _fail_rows(df, bad, source, f"{TRAJECTORY} must be 16 hex digits (or empty: unknown)")
    known = cast(pd.Series, df["map"]).isin([*shipped, CUSTOM_MAP_ID])
    _fail_rows(
        df, ~known, source,
        f"unknown map {df.loc[~known, 'map'].iat[0] if (~known).any() else ''}; shipped maps are "
        f"0-{max(shipped)}, custom maps are recorded as {CUSTOM_MAP_ID}",
    )  # fmt: skip
    ids = df["map"].to_numpy()
    want = np.asarray([shipped[i].content_hash if i in shipped else "" for i in ids], object)
    wrong = (ids != CUSTOM_MAP_ID) & (df["map_hash"].to_numpy() != want)
    _fail_rows(df, wrong, source, "map_hash does not match the shipped map of that id")


def _check_games(df: pd.DataFrame, source: str, complete: bool) -> None:
    """Across rows: every game once, and each pair two games that swap spawn ends."""
    dup = df.duplicated(IDENTITY, keep="first")
    _fail_rows(df, dup, source, f"the same game twice (same {', '.join(IDENTITY)})")
    groups = df.groupby(PAIR, sort=False)
    size = cast(pd.Series, groups["game"].transform("size"))
    _fail_rows(df, size > 2, source, "pair_id holds more than two games")
    if complete:
        _fail_rows(df, size < 2, source, "pair_id holds one game; its spawn-swapped twin is gone")
    ends = groups["a_spawn"].transform("nunique")
    _fail_rows(df, (size == 2) & (ends != 2), source, "both games of a pair have the same a_spawn")
    for col in SAME_IN_PAIR:
        differ = cast(pd.Series, groups[col].transform("nunique")) > 1
        _fail_rows(df, differ, source, f"a pair's games differ in {col}")
    if TRAJECTORY in df.columns and bool((df[TRAJECTORY] != "").any()):
        known = cast(pd.DataFrame, df[df[TRAJECTORY] != ""])
        same = known.groupby([*SAME_GAME, TRAJECTORY], sort=False)
        for col in OUTCOME:
            differ = cast(pd.Series, same[col].transform("nunique")) > 1
            bad = np.zeros(len(df), bool)
            bad[np.flatnonzero(df[TRAJECTORY].to_numpy() != "")[differ.to_numpy()]] = True
            _fail_rows(df, bad, source, f"games with one {TRAJECTORY} differ in {col}")


def combine(tables: Sequence[tuple[str, pd.DataFrame]]) -> pd.DataFrame:
    """Concatenate named, validated tables; a game found in two of them is an error."""
    if not tables:
        raise EvalError("results: no files given")
    seen: dict[tuple[Any, ...], str] = {}
    for name, table in tables:
        for key in table[IDENTITY].itertuples(index=False, name=None):
            if key in seen:
                what = ", ".join(f"{c}={v}" for c, v in zip(IDENTITY, key, strict=True))
                raise EvalError(f"results: the game ({what}) is in both {seen[key]} and {name}")
            seen[key] = name
    return normalize(pd.concat([t for _, t in tables], ignore_index=True))


# --- files -------------------------------------------------------------------------------------


def checksum(df: pd.DataFrame) -> str:
    """SHA-256 of a normalized table's canonical CSV text (exact float reprs, "\\n" lines)."""
    text = normalize(df).to_csv(index=False, lineterminator="\n")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _record(df: pd.DataFrame) -> dict[str, Any]:
    return {"format": FORMAT, "games": len(df), "sha256": checksum(df)}


def meta_path(path: str | Path) -> Path:
    """The side file that holds a CSV results file's integrity record (`games.csv.meta.json`)."""
    path = Path(path)
    return path.with_name(path.name + META_SUFFIX)


def check_path(path: str | Path, *, overwrite: bool = True) -> Path:
    """A results path that can be written: .parquet or .csv, in an existing, writable folder
    (and, with `overwrite=False`, not an existing file). Checked before any game is played."""
    path = Path(path)
    if path.suffix not in (".parquet", ".csv"):
        raise EvalError(f"out: expected a .parquet or .csv file, got {str(path)!r}")
    folder = path.parent
    if not folder.is_dir():
        raise EvalError(f"out: folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise EvalError(f"out: folder {str(folder)!r} is not writable")
    for target in (path, meta_path(path)) if path.suffix == ".csv" else (path,):
        if target.is_dir():
            raise EvalError(f"out: {str(target)!r} is a folder")
    if path.exists() and not overwrite:
        raise EvalError(f"out: {str(path)!r} exists; remove it or choose another name")
    return path


def save(df: pd.DataFrame, path: str | Path) -> Path:
    """Write a results table to `.parquet` or `.csv` (by suffix) with its integrity record (game
    count and SHA-256: in the Parquet metadata, or in the CSV's side file `meta_path(path)`).
    Each file appears whole or not at all; the side file is replaced first, so a CSV cut off
    between the two fails its integrity check rather than passing with an old record."""
    path = check_path(path)
    df = validate(df)
    record = _record(df)
    tmp = path.with_name(f".{path.name}.tmp")
    side = meta_path(path)
    side_tmp = side.with_name(f".{side.name}.tmp")
    try:
        if path.suffix == ".parquet":
            table = pa.Table.from_pandas(df, preserve_index=False)
            meta = {**(table.schema.metadata or {}), META_KEY: json.dumps(record).encode()}
            pq.write_table(table.replace_schema_metadata(meta), tmp)
        else:
            tmp.write_text(df.to_csv(index=False, lineterminator="\n"), encoding="utf-8")
            side_tmp.write_text(json.dumps(record, sort_keys=True) + "\n", encoding="utf-8")
            os.replace(side_tmp, side)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        side_tmp.unlink(missing_ok=True)
    return path


def _parse_record(raw: str | bytes, path: Path) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        raise EvalError(f"{path.name}: the integrity record is not JSON: {raw[:80]!r}") from None


def _no_repeats(names: list[str], path: Path) -> None:
    """Refuse a repeated column name before a reader renames it (pandas reads a repeated CSV
    header `x` as `x.1`) or fails on it (Parquet)."""
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise EvalError(f"{path.name}: repeated column(s) {repeated}")


def _read(path: Path) -> tuple[pd.DataFrame, dict[str, Any] | None]:
    if path.suffix == ".parquet":
        _no_repeats(pq.read_schema(path).names, path)
        table = pq.read_table(path)
        raw = (table.schema.metadata or {}).get(META_KEY)
        return table.to_pandas(), None if raw is None else _parse_record(raw, path)
    text = path.read_bytes().decode("utf-8-sig")  # a leading byte order mark is not content
    record = None
    if text.startswith("# "):  # the record line of files written before the side file
        first, _, text = text.partition("\n")
        record = _parse_record(first[2:], path)
    if text and not text.endswith("\n"):
        raise EvalError(f"{path.name}: the last line is cut (no line end): a partial write?")
    _no_repeats(next(csv.reader(io.StringIO(text)), []), path)
    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False), record


def load(path: str | Path, *, check_integrity: bool = True) -> pd.DataFrame:
    """Read and validate a results table written by `save`. `check_integrity=False` loads a file
    that lacks the integrity record (one written by another tool to the same schema); its
    columns and content are still checked."""
    path = Path(path)
    if path.suffix not in (".parquet", ".csv"):
        raise EvalError(f"path: expected a .parquet or .csv file, got {str(path)!r}")
    if path.is_dir():
        raise EvalError(f"path: {str(path)!r} is a folder, not a results file")
    if not path.is_file():
        raise EvalError(f"path: results file {str(path)!r} does not exist")
    try:
        df, record = _read(path)
    except EvalError:
        raise
    except Exception as err:  # malformed bytes: name the file, not the parser's internals
        raise EvalError(f"path: cannot read {str(path)!r}: {type(err).__name__}: {err}") from None
    table = validate(df, source=path.name)
    if check_integrity:
        if path.suffix == ".csv":
            record = _csv_record(path, record)
        _check_record(table, record, path.name)
    return table


def _csv_record(path: Path, first_line: Any) -> Any:
    """A CSV's integrity record: from its side file, or (older files) its first line."""
    side = meta_path(path)
    if not side.exists():
        if first_line is None:
            raise EvalError(
                f"{path.name}: no integrity record ({side.name} is missing; written by another "
                "tool?); load it with check_integrity=False (CLI: --no-integrity) to use it anyway"
            )
        return first_line
    if first_line is not None:
        raise EvalError(f"{path.name}: two integrity records, its first line and {side.name}")
    if not side.is_file():
        raise EvalError(f"{side.name}: expected a file holding the integrity record of {path.name}")
    if side.stat().st_size > META_LIMIT:
        raise EvalError(f"{side.name}: {side.stat().st_size:,} bytes; a record is under 64 KiB")
    try:
        raw = side.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise EvalError(f"{side.name}: cannot read it: {type(err).__name__}") from None
    return _parse_record(raw, side)


def _check_record(table: pd.DataFrame, record: Any, source: str) -> None:
    if record is None:
        raise EvalError(
            f"{source}: no integrity record (written by another tool?); load it with "
            "check_integrity=False (CLI: --no-integrity) to use it anyway"
        )
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise EvalError(f"{source}: integrity record is not {FORMAT!r}: {str(record)[:80]}")
    if record.get("games") != len(table):
        raise EvalError(
            f"{source}: the file says {record.get('games')!r} games but holds {len(table)} "
            "(cut or edited after it was written)"
        )
    if record.get("sha256") != checksum(table):
        raise EvalError(f"{source}: checksum mismatch: the games were changed after writing")
