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
import functools
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

from marl_bgs_eval import fingerprint as fp
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.modes import FLOAT, INT, STR, kit, parts
from marl_bgs_eval.systems import System

FORMAT = "marl-bgs-results-v2"  # v2 added the `mode` column
FORMATS = ("marl-bgs-results-v1", FORMAT)  # what `load` reads (v1: Team Deathmatch, no mode)
META_KEY = b"marl-bgs-results"  # Parquet schema metadata; a CSV's is in its side file
META_SUFFIX = ".meta.json"  # games.csv -> games.csv.meta.json
META_LIMIT = 64 * 1024  # bytes a side file may hold (a record is about 120)
DEFAULT_MODE = "tdm-v2"  # the mode of tables written before the `mode` column
# The columns of every mode, in order: the slot columns (`slots`) follow system_b and the
# mode's own columns (`EvalParts.columns`) follow tick_limit.
COMMON: dict[str, str] = {
    "game": INT,
    "pair_id": INT,
    "seed_number": INT,
    "seed": INT,
    "mode": STR,
    "map": INT,
    "map_name": STR,
    "map_hash": STR,
    "a_spawn": STR,
    "system_a": STR,
    "system_b": STR,
    "result": STR,
    "ticks": INT,
    "tick_limit": INT,
}
# The game's trajectory fingerprint (`fingerprint`): 16 hex digits, or "" where unknown. Files
# written before it existed lack the column; a table combined from both holds "" for their games.
TRAJECTORY = "trajectory"
OPTIONAL_COLUMNS = {TRAJECTORY: STR}
VALUES = {"result": {"win", "draw", "loss"}, "a_spawn": {"left", "right"}}
IDENTITY = ["seed", "system_a", "system_b", "game"]  # one game; never twice in a table
PAIR = ["seed", "system_a", "system_b", "pair_id"]  # the two spawn-swapped games of a pair
SAME_IN_PAIR = ["seed_number", "map", "map_hash", "tick_limit"]
# One game's setup: games that also share a trajectory fingerprint are one game played again.
SAME_GAME = ["system_a", "system_b", "map_hash", "tick_limit"]
HASH = re.compile(r"[0-9a-f]{16}")
# What both games of a pair show from team A's side when they are mirror images of each other.
OUTCOME = ["result", "ticks"]


@functools.cache
def team_shape(mode: str) -> tuple[int, int]:
    """(slots per team, teams the Systems play) of a mode id or alias."""
    k = kit(mode)
    spec = k.build(num_envs=1).spec
    return spec.team_size, k.controlled_teams


def slots(mode: str) -> list[str]:
    """The slot columns of a mode: system_a_slot0, ... (and system_b_slot0, ... with two teams)."""
    size, teams = team_shape(mode)
    return [f"system_{t}_slot{i}" for t in "ab"[:teams] for i in range(size)]


@functools.cache
def columns(mode: str) -> dict[str, str]:
    """Every column a results table of `mode` holds at any metric level, in order, with its
    dtype (the base ones; `metric_columns` adds a level's extra columns)."""
    mode_id = kit(mode).id
    order = list(COMMON)
    at = order.index("system_b") + 1
    names = [*order[:at], *slots(mode_id), *order[at:]]
    base = {c: COMMON.get(c, STR) for c in names}
    return {**base, **parts(mode_id).columns}


@functools.cache
def metric_columns(mode: str) -> dict[str, str]:
    """Every metric column any level adds beyond `columns(mode)`, with its dtype."""
    p, own = parts(mode), columns(mode)
    names = dict.fromkeys(c for level in ("priority", "full") for c in p.metric_columns(level))
    return {c: FLOAT if p.is_amount(c) else INT for c in names if c not in own}


@functools.cache
def level_columns(mode: str) -> dict[str, frozenset[str]]:
    """The metric columns a table may hold beyond the base ones, per level: one level's set."""
    p, own = parts(mode), columns(mode)
    return {
        lv: frozenset(p.metric_columns(lv)) - frozenset(own) for lv in ("none", "priority", "full")
    }


def schema(mode: str) -> dict[str, str]:
    """Every column a table of `mode` may hold, with its dtype."""
    return {**columns(mode), **OPTIONAL_COLUMNS, **metric_columns(mode)}


def same_game(mode: str) -> list[str]:
    """The columns that, with the fingerprint, fix one game of `mode`."""
    return [*SAME_GAME, *parts(mode).same_game]


def outcome_columns(mode: str) -> list[str]:
    """The columns a game played again (one fingerprint) must repeat."""
    return [*OUTCOME, *parts(mode).outcome_columns]


def mode_of(df: pd.DataFrame, source: str = "results") -> str:
    """The one mode of a table's games (tables written before the `mode` column: tdm-v2)."""
    if "mode" not in df.columns or len(df) == 0:  # no games: `validate` says so
        return DEFAULT_MODE
    modes = sorted(set(df["mode"].astype(str).tolist()))
    if len(modes) != 1:
        raise EvalError(
            f"{source}: column 'mode': a table holds games of one mode, got {modes[:3]}"
        )
    try:
        mode_id = kit(modes[0]).id
    except EvalError as err:
        raise EvalError(f"{source}: column 'mode': {err}") from None
    if mode_id != modes[0]:
        raise EvalError(
            f"{source}: column 'mode': expected the versioned id {mode_id!r}, got {modes[0]!r}"
        )
    return mode_id


def _names(leaves: tuple[str, ...], who: np.ndarray) -> np.ndarray:
    table = np.asarray([*leaves, "-"], dtype=object)
    return table[np.where(who < 0, len(leaves), who)]


def frame(
    mode: str,
    sched: pd.DataFrame,
    out: Any,
    teams: Sequence[System],
    layouts: Sequence[Any],
    rosters: Sequence[tuple[str, ...]],
    level: str,
    meta: dict[str, int],
) -> pd.DataFrame:
    """The results rows of the scheduled games `sched` from their per-game buffers `out` (row k
    of every buffer belongs to row k of `sched`)."""
    k, p = kit(mode), parts(mode)
    m = sched["map_index"].to_numpy()
    outcome = np.asarray(out.outcome)
    if np.any(outcome == 0):
        raise RuntimeError("internal: a scheduled game has no result")
    counters = np.asarray(out.counters, np.float64)
    cols: dict[str, Any] = {
        "game": sched["game"].to_numpy(),
        "pair_id": sched["seed_number"].to_numpy(),
        "seed_number": sched["seed_number"].to_numpy(),
        "seed": meta["seed"],
        "mode": k.id,
        "map": [layouts[i].id for i in m],
        "map_name": [layouts[i].name for i in m],
        "map_hash": [layouts[i].hash for i in m],
        "a_spawn": np.where(sched["swap"].to_numpy(), "right", "left"),
        "system_a": teams[0].name,
        "system_b": teams[1].name if len(teams) > 1 else p.opponent,
    }
    for t, (system, who) in enumerate(zip(teams, out.who, strict=True)):
        who = np.asarray(who)
        for i in range(who.shape[1]):
            cols[f"system_{'ab'[t]}_slot{i}"] = _names(system.leaves, who[:, i])
    cols["result"] = [k.results[int(o)] for o in outcome]
    names = p.metric_columns(level)
    amount = np.asarray([p.is_amount(c) for c in names], bool)
    ints = pd.DataFrame(
        np.rint(counters[:, ~amount]).astype(np.int64), columns=np.asarray(names)[~amount]
    )
    floats = pd.DataFrame(counters[:, amount], columns=np.asarray(names)[amount])
    metrics = cast(pd.DataFrame, pd.concat([ints, floats], axis=1)[names])
    cols["ticks"] = np.asarray(out.ticks)
    cols["tick_limit"] = meta["tick_limit"]
    cols.update(p.row_columns(sched, out.final, metrics, rosters, meta))
    cols[TRAJECTORY] = fp.text(out.trajectory)
    table = cast(pd.DataFrame, pd.DataFrame(cols)[[*columns(k.id), TRAJECTORY]])
    extra = cast(pd.DataFrame, metrics[[c for c in names if c in metric_columns(k.id)]])
    return normalize(pd.concat([table, extra], axis=1))


def normalize(df: pd.DataFrame, *, add_mode: bool = True) -> pd.DataFrame:
    """Cast every known column to its schema dtype (a fresh frame with a plain index); a table
    written before the `mode` column gets it (tdm-v2) after `seed`; a missing trajectory (a game
    from a file without the column) becomes ""."""
    df = df.reset_index(drop=True)
    if add_mode and "mode" not in df.columns and "seed" in df.columns:
        df.insert(list(df.columns).index("seed") + 1, "mode", DEFAULT_MODE)
    if TRAJECTORY in df.columns and bool(df[TRAJECTORY].isna().any()):
        df[TRAJECTORY] = _unknown_as_empty(pd.Series(df[TRAJECTORY]))
    known = schema(mode_of(df)) if len(df) else {**COMMON, **OPTIONAL_COLUMNS}
    dtypes = df.dtypes
    cast = {c: known[c] for c, d in dtypes.items() if c in known and str(d) != known[c]}
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
    if "mode" in df.columns and not all(isinstance(v, str) for v in df["mode"].tolist()):
        raise EvalError(f"{source}: column 'mode': expected text in every row")
    mode = mode_of(df, source)
    own, levels, known = columns(mode), level_columns(mode), schema(mode)
    missing = [c for c in own if c not in df.columns and not (c == "mode" and mode == DEFAULT_MODE)]
    if missing:
        raise EvalError(f"{source}: missing column(s) {missing}")
    present = frozenset(c for c in metric_columns(mode) if c in df.columns)
    if present not in levels.values():
        level = "full" if present - levels["priority"] else "priority"
        gone = sorted(levels[level] - present)
        raise EvalError(
            f"{source}: metric column(s) {gone[:5]}{' ...' if len(gone) > 5 else ''} missing: "
            f"a table holds every column of one metric level or none ({len(gone)} missing of "
            f"the {len(levels[level])} of level {level!r})"
        )
    extra = [c for c in df.columns if c not in known]
    if extra:
        raise EvalError(f"{source}: unknown column(s) {extra}")
    repeated = sorted(set(df.columns[df.columns.duplicated()]))
    if repeated:
        raise EvalError(f"{source}: repeated column(s) {repeated}")
    out = {col: _column(pd.Series(df[col]), col, known[col], source) for col in df.columns}
    table = normalize(pd.DataFrame(out))
    if len(table) == 0:
        raise EvalError(f"{source}: no games")
    _check_rows(table, source, mode)
    _check_games(table, source, complete, mode)
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


def _check_rows(df: pd.DataFrame, source: str, mode: str) -> None:
    """Each row on its own: ranges, names, hashes and a result the mode's outcomes allow;
    then the mode's own checks (`EvalParts.check_rows`)."""
    known = schema(mode)
    signed = {"map", *parts(mode).signed}
    counts = [c for c, kind in known.items() if kind != STR and c in df.columns and c not in signed]
    for col in counts:
        low = 1 if col in ("ticks", "tick_limit") else 0
        _fail_rows(df, df[col] < low, source, f"{col} must be >= {low}, got {df[col].min()}")
    for col in ("system_a", "system_b", "map_name", *slots(mode)):
        _fail_rows(df, df[col].str.strip() == "", source, f"{col} is empty")
    _fail_rows(df, df["ticks"] > df["tick_limit"], source, "ticks exceed tick_limit")
    results = sorted(set(kit(mode).results[1:]))
    _fail_rows(
        df,
        ~df["result"].isin(results),
        source,
        f"result must be one of {sorted(results)} in {mode}",
    )
    bad_hash = ~df["map_hash"].map(lambda v: HASH.fullmatch(v) is not None)
    _fail_rows(df, bad_hash, source, "map_hash must be 16 hex digits")
    if TRAJECTORY in df.columns:
        bad = ~df[TRAJECTORY].map(lambda v: v == "" or HASH.fullmatch(v) is not None)
        _fail_rows(df, bad, source, f"{TRAJECTORY} must be 16 hex digits (or empty: unknown)")
    parts(mode).check_rows(df, lambda bad, what: _fail_rows(df, bad, source, what))


def _check_games(df: pd.DataFrame, source: str, complete: bool, mode: str) -> None:
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
    for col in [*SAME_IN_PAIR, *parts(mode).same_in_pair]:
        differ = cast(pd.Series, groups[col].transform("nunique")) > 1
        _fail_rows(df, differ, source, f"a pair's games differ in {col}")
    if TRAJECTORY in df.columns and bool((df[TRAJECTORY] != "").any()):
        known = cast(pd.DataFrame, df[df[TRAJECTORY] != ""])
        same = known.groupby([*same_game(mode), TRAJECTORY], sort=False)
        for col in outcome_columns(mode):
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


def checksum(df: pd.DataFrame, format: str = FORMAT) -> str:
    """SHA-256 of a normalized table's canonical CSV text (exact float reprs, "\\n" lines); a
    v1 record's is of the table without the `mode` column."""
    if format != FORMAT:
        df = df.drop(columns="mode")
    text = normalize(df, add_mode=format == FORMAT).to_csv(index=False, lineterminator="\n")
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
    if not isinstance(record, dict) or record.get("format") not in FORMATS:
        raise EvalError(
            f"{source}: integrity record is not one of {list(FORMATS)}: {str(record)[:80]}"
        )
    if record.get("games") != len(table):
        raise EvalError(
            f"{source}: the file says {record.get('games')!r} games but holds {len(table)} "
            "(cut or edited after it was written)"
        )
    if record.get("sha256") != checksum(table, record["format"]):
        raise EvalError(f"{source}: checksum mismatch: the games were changed after writing")
