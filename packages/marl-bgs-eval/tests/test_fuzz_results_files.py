"""Fuzz: malformed results files handed to `load`, `combine`, `validate` and the journal reader.

Every input is generated from one real results table (conftest's `base_games`: 16 games, two
maps, every count and metric column) and must end in exactly one outcome class: an `EvalError`
whose message names the file and the column, row or record it refuses; the documented repair
(a journal's cut last line is dropped, and the game played again); or, for the valid edge cases,
a table that loads with exactly the values written. No KeyError, pandas or pyarrow error may
escape, and nothing may be misread silently.

Content checks are fuzzed on files written without the integrity record (`to_csv`/`to_parquet`,
as another tool would) and loaded with `check_integrity=False`, so the content check is what
refuses them; the integrity record is fuzzed on files written by `save` (a CSV's record in its
side file `g.csv.meta.json`) and on CSV files of the older layout, the record as a `# {...}` first
line ("old csv" cases), which `load` still reads.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import marl_bgs
import marl_bgs_eval as ev
from marl_bgs.tdm.maps import CUSTOM_MAP_ID
from marl_bgs_eval import results
from marl_bgs_eval.journal import Journal, journal_path

pytestmark = pytest.mark.fuzz_family("results files")

Frame = pd.DataFrame
Mutate = Callable[[Frame], Frame]
NOT_A_RECORD = re.escape(f"integrity record is not one of {list(results.FORMATS)}")


@dataclass(frozen=True)
class Case:
    """One input: `run(tmp_path, base)` does the reading; `expect` is a regex on the EvalError
    (outcome "error") or a check of what `run` returned ("repair", "accepted")."""

    id: str
    outcome: str
    run: Callable[[Path, Frame], Any]
    expect: str | Callable[[Any, Frame], None]


# --- writing files ----------------------------------------------------------------------------


def _plain_csv(tmp: Path, df: Frame, name: str = "g.csv") -> Path:
    """A CSV of the schema without the integrity record (as another tool writes it)."""
    path = tmp / name
    df.to_csv(path, index=False, lineterminator="\n")
    return path


def _plain_parquet(tmp: Path, df: Frame, name: str = "g.parquet") -> Path:
    path = tmp / name
    df.to_parquet(path, index=False)
    return path


def _old_csv_text(tmp: Path, df: Frame) -> str:
    """A CSV as `save` wrote it before the side file: the "# {record}" line (today's side file),
    the header, one line per game."""
    path = ev.save(df, tmp / "saved.csv")
    record = results.meta_path(path).read_text(encoding="utf-8")
    return f"# {record}" + path.read_text(encoding="utf-8")


def _write(tmp: Path, name: str, data: str | bytes) -> Path:
    path = tmp / name
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8", newline="")
    else:
        path.write_bytes(data)
    return path


def _with_record(tmp: Path, df: Frame, record: Any, name: str = "g.csv") -> Path:
    """A CSV whose first line is `record` (any JSON value, or raw text after "# ")."""
    body = df.to_csv(index=False, lineterminator="\n")
    first = record if isinstance(record, str) else json.dumps(record)
    return _write(tmp, name, f"# {first}\n{body}")


def _parquet_with_meta(tmp: Path, df: Frame, raw: bytes | None, name: str = "g.parquet") -> Path:
    """A Parquet file of `df` whose integrity metadata is `raw` (None: the key is absent)."""
    table = pa.Table.from_pandas(results.normalize(df), preserve_index=False)
    meta = dict(table.schema.metadata or {})
    if raw is not None:
        meta[results.META_KEY] = raw
    path = tmp / name
    pq.write_table(table.replace_schema_metadata(meta), path)
    return path


def _record_json(df: Frame, **changes: Any) -> dict[str, Any]:
    return {**results._record(df), **changes}


# --- edits ------------------------------------------------------------------------------------


def _set(row: int, **values: Any) -> Mutate:
    """Set cells of one row (values of the column's own type)."""

    def mutate(df: Frame) -> Frame:
        df = df.copy()
        for col, value in values.items():
            df.loc[row, col] = value
        return df

    return mutate


def _miscount_red_zone_deaths(row: int) -> Mutate:
    """One more (or one fewer) of team B's deaths counted in its Red Zone than team A's points say,
    keeping them within team B's deaths."""

    def mutate(df: Frame) -> Frame:
        deaths, home = int(df.loc[row, "b_deaths"]), int(df.loc[row, "b_red_zone_deaths"])
        assert deaths >= 1, "the base game needs a death of team B in this row"
        return _set(row, b_red_zone_deaths=home + 1 if home < deaths else home - 1)(df)

    return mutate


def _set_all(**values: Any) -> Mutate:
    def mutate(df: Frame) -> Frame:
        return df.assign(**values)

    return mutate


def _drop_rows(*rows: int) -> Mutate:
    def mutate(df: Frame) -> Frame:
        return df.drop(index=list(rows)).reset_index(drop=True)

    return mutate


def _drop_cols(*cols: str) -> Mutate:
    def mutate(df: Frame) -> Frame:
        return df.drop(columns=list(cols))

    return mutate


def _append_copy(row: int, **values: Any) -> Mutate:
    """Append a copy of `row` (with `values` changed) at the end."""

    def mutate(df: Frame) -> Frame:
        extra = df.iloc[[row]].assign(**values)
        return pd.concat([df, extra], ignore_index=True)

    return mutate


def _csv_cells(base: Frame, edits: dict[tuple[int, str], str]) -> str:
    """The plain CSV text of `base` with cells replaced by literal text (row, column) -> text."""
    rows = list(csv.reader(io.StringIO(base.to_csv(index=False, lineterminator="\n"))))
    header = rows[0]
    for (row, col), text in edits.items():
        rows[row + 1][header.index(col)] = text
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def _shipped(map_id: int) -> Any:
    return marl_bgs.maps.load(map_id)


# --- operations -------------------------------------------------------------------------------


def _load_plain(fmt: str, mutate: Mutate) -> Callable[[Path, Frame], Any]:
    def run(tmp: Path, base: Frame) -> Any:
        df = mutate(base)
        path = _plain_csv(tmp, df) if fmt == "csv" else _plain_parquet(tmp, df)
        return ev.load(path, check_integrity=False)

    return run


def _load_text(text: Callable[[Frame], str | bytes], name: str = "g.csv", check: bool = False):
    def run(tmp: Path, base: Frame) -> Any:
        return ev.load(_write(tmp, name, text(base)), check_integrity=check)

    return run


def _load_old_text(
    edit: Callable[[str], str | bytes], check: bool = True, df: Mutate | None = None
):
    """A CSV of the old layout (the record on its first line), its text edited, loaded."""

    def run(tmp: Path, base: Frame) -> Any:
        text = _old_csv_text(tmp, base if df is None else df(base))
        return ev.load(_write(tmp, "g.csv", edit(text)), check_integrity=check)

    return run


def _load_saved(
    csv_text: Callable[[str], str | bytes] | None = None,
    side: Callable[[Path, str], object] | None = None,
    check: bool = True,
):
    """Save `g.csv` (its record in `g.csv.meta.json`), edit the CSV's text and then the side
    file (`side(path, its text)` rewrites or removes it), load."""

    def run(tmp: Path, base: Frame) -> Any:
        path = ev.save(base, tmp / "g.csv")
        if csv_text is not None:
            _write(tmp, "g.csv", csv_text(path.read_text(encoding="utf-8")))
        if side is not None:
            meta = results.meta_path(path)
            side(meta, meta.read_text(encoding="utf-8"))
        return ev.load(path, check_integrity=check)

    return run


def _side(data: Callable[[str], str | bytes]) -> Callable[[Path, str], object]:
    """Rewrite the side file with `data(its text)`."""
    return lambda meta, text: _write(meta.parent, meta.name, data(text))


def _load_made(make: Callable[[Path, Frame], Path], check: bool = True):
    def run(tmp: Path, base: Frame) -> Any:
        return ev.load(make(tmp, base), check_integrity=check)

    return run


def _validate(make: Callable[[Frame], Any], complete: bool = True):
    def run(tmp: Path, base: Frame) -> Any:
        del tmp
        return ev.validate(make(base), "frame", complete=complete)

    return run


# --- expectations -----------------------------------------------------------------------------


def _row(k: int, what: str, game: int | None = None) -> str:
    """A content refusal of row k: "{file}: row k (game g): what"."""
    return rf"^{{file}}: row {k} \(game {k if game is None else game}\): {what}"


def _col(col: str, what: str) -> str:
    return rf"^{{file}}: column '{col}': {what}"


def _equals(want: Mutate | None = None) -> Callable[[Any, Frame], None]:
    """Accepted: the loaded table equals the (normalized) frame that was written."""

    def check(got: Any, base: Frame) -> None:
        expected = base if want is None else results.normalize(want(base))
        pd.testing.assert_frame_equal(got, expected)

    return check


# --- the cases --------------------------------------------------------------------------------

# Content edits of one valid table: (id, edit, message after "{file}: "). Row k is game k; pair p
# is rows 2p and 2p + 1. Games 6 and 7 are 4-0 draws (2 kills + 2 Red Zone deaths of team B).
CONTENT: list[tuple[str, Mutate, str]] = [
    ("win at 0-0", _set(0, result="win"), _row(0, "result does not follow from points_a")),
    (
        "win at 0-20 (winning_score 20)",
        _set(2, result="win", points_b=20, winning_score=20),
        _row(2, "result does not follow"),
    ),
    ("loss at 5-0", _set(6, result="loss", points_a=5), _row(6, "result does not follow")),
    ("draw at 5-0", _set(6, points_a=5), _row(6, "result does not follow")),
    ("negative points_a", _set(1, points_a=-1), _row(1, r"points_a must be >= 0, got -1")),
    ("negative b_deaths", _set(3, b_deaths=-2), _row(3, r"b_deaths must be >= 0, got -2")),
    ("negative seed", _set_all(seed=-7), _row(0, r"seed must be >= 0, got -7")),
    ("negative game number", _set(5, game=-5), _row(5, r"game must be >= 0", game=-5)),
    ("ticks beyond tick_limit", _set(4, ticks=41), _row(4, "ticks exceed tick_limit")),
    ("ticks 0", _set(4, ticks=0), _row(4, r"ticks must be >= 1, got 0")),
    ("tick_limit 0", _set(9, tick_limit=0), _row(9, r"tick_limit must be >= 1, got 0")),
    ("winning_score 0", _set(9, winning_score=0), _row(9, r"winning_score must be >= 1")),
    ("draw ended early", _set(8, ticks=30), _row(8, "ended before tick_limit with no team")),
    ("points 15 at winning_score 5", _set(0, points_a=15), _row(0, "points beyond one tick")),
    ("unknown map 99", _set(10, map=99), _row(10, r"unknown map 99; shipped maps are 0-")),
    ("map -5", _set(10, map=-5), _row(10, r"unknown map -5")),
    (
        "map 0 with map 12's hash",
        _set(2, map_hash=_shipped(12).content_hash),
        _row(2, "map_hash does not match the shipped map"),
    ),
    ("map_hash not hex", _set(3, map_hash="not-a-hash-at-al"), _row(3, "map_hash must be 16 hex")),
    ("map_hash in capitals", _set(3, map_hash="EF115A0E0C15CDC4"), _row(3, "map_hash must be")),
    ("map_hash of 15 digits", _set(3, map_hash="ef115a0e0c15cdc"), _row(3, "map_hash must be")),
    ("pair with one game", _drop_rows(1), _row(0, "pair_id holds one game; its spawn-swapped")),
    (
        "pair with three games",
        _append_copy(0, game=16),
        _row(0, "pair_id holds more than two games"),
    ),
    ("pair with one a_spawn", _set(1, a_spawn="left"), _row(0, "both games of a pair have the")),
    (
        "pair on two maps",
        _set(1, map=12, map_name="Picket Line", map_hash=_shipped(12).content_hash),
        _row(0, "a pair's games differ in map"),
    ),
    (
        "pair with two rosters",
        _set(5, roster_b="MWHRR"),
        _row(4, "a pair's games differ in roster_b"),
    ),
    ("the same game twice", _append_copy(0), _row(16, r"the same game twice \(same seed", game=0)),
    ("empty system_a", _set(3, system_a=""), _row(3, "system_a is empty")),
    ("blank system_b", _set(3, system_b="   "), _row(3, "system_b is empty")),
    ("empty slot name", _set(7, system_a_slot2=""), _row(7, "system_a_slot2 is empty")),
    ("tab slot name", _set(7, system_b_slot4="\t"), _row(7, "system_b_slot4 is empty")),
    ("empty map_name", _set(11, map_name=""), _row(11, "map_name is empty")),
    ("roster MWX", _set(0, roster_a="MWX"), _row(0, "roster_a must be 1-5 class letters of")),
    ("roster of 6", _set(0, roster_a="MWHRPM"), _row(0, "roster_a must be 1-5 class letters")),
    ("roster in lower case", _set(0, roster_b="mwhrp"), _row(0, "roster_b must be 1-5 class")),
    ("empty roster", _set(0, roster_b=""), _row(0, "roster_b must be 1-5 class letters")),
    ("result victory", _set(2, result="victory"), _col("result", r"values \['victory'\] are")),
    ("result Win", _set(2, result="Win"), _col("result", r"values \['Win'\] are not in")),
    ("a_spawn center", _set(2, a_spawn="center"), _col("a_spawn", r"values \['center'\]")),
    ("mode chess", _set_all(mode="chess"), _col("mode", r"mode: unknown mode 'chess'")),
    ("mode alias", _set_all(mode="tdm"), _col("mode", "expected the versioned id 'tdm-v2'")),
    (
        "two modes in one table",
        _set(3, mode="two-bridge-v1"),
        r"^{file}: column 'mode': a table holds games of one mode",
    ),
    (
        "TDM rows called Two-Bridge",
        _set_all(mode="two-bridge-v1"),
        r"^{file}: missing column\(s\) \['outcome', 'return'\]",
    ),
    ("a_kills != b_deaths", _set(1, b_deaths=3), _row(1, "a_kills differs from b_deaths")),
    ("b_kills != a_deaths", _set(1, a_deaths=5), _row(1, "b_kills differs from a_deaths")),
    ("3 points for 1 kill", _set(1, points_a=3), _row(1, r"points_a must be 1 or 2 per kill")),
    (
        "Red Zone deaths that do not add up to the points",
        _miscount_red_zone_deaths(1),
        _row(1, r"points_a != a_kills \+ b_red_zone_deaths"),
    ),
    (
        "more Red Zone deaths than deaths",
        _set(0, a_red_zone_deaths=1),
        _row(0, "a_red_zone_deaths exceed a_deaths"),
    ),
    ("basics beyond 5 x ticks", _set(0, a_basics_used=201), _row(0, "a_basics_used exceeds 5")),
    ("rejections beyond 5 x ticks", _set(0, b_rejected_actions=201), _row(0, "b_rejected_act")),
    (
        "NaN damage",
        _set(5, a_damage_dealt=np.nan),
        _col("a_damage_dealt", "expected (finite )?num"),
    ),
    ("inf healing", _set(5, b_healing_done=np.inf), _col("b_healing_done", "expected finite")),
    ("-inf excess", _set(5, a_excess_healing=-np.inf), _col("a_excess_healing", "expected fin")),
    (
        "a metric column missing",
        _drop_cols("a_damage_dealt"),
        r"^{file}: metric column\(s\) \['a_damage_dealt'\] missing: a table holds every column "
        r"of one metric level or none \(1 missing of the 12 of level 'priority'\)",
    ),
    ("ticks missing", _drop_cols("ticks"), r"^{file}: missing column\(s\) \['ticks'\]"),
    (
        "roster_a and result missing",
        _drop_cols("roster_a", "result"),
        r"^{file}: missing column\(s\) \['result', 'roster_a'\]",
    ),
    ("an extra column", _set_all(comment="x"), r"^{file}: unknown column\(s\) \['comment'\]"),
    ("trajectory not hex", _set(3, trajectory="not-a-fingerprint"), _row(3, "trajectory must be")),
    ("trajectory in capitals", _set(3, trajectory="ABCDEF0123456789"), _row(3, "trajectory must")),
    ("trajectory of 17 digits", _set(3, trajectory="0" * 17), _row(3, "trajectory must be 16 hex")),
    ("trajectory blank", _set(3, trajectory=" "), _row(3, "trajectory must be 16 hex")),
    (
        "trajectory as numbers",
        _set_all(trajectory=12),
        r"^{file}: (column 'trajectory': expected text|row 0 \(game 0\): trajectory must be)",
    ),
    (
        "one trajectory, two endings",
        lambda df: _set(0, trajectory=df.loc[6, "trajectory"])(df),  # a 0-0 and a 4-0 draw
        _row(0, "games with one trajectory differ in points_a"),
    ),
    ("no rows", lambda df: df.iloc[:0], r"^{file}: no games$"),
]


def _content_cases() -> list[Case]:
    cases = []
    for what, mutate, expect in CONTENT:
        for fmt in ("csv", "parquet"):
            regex = expect.replace("{file}", re.escape(f"g.{fmt}"))
            cases.append(Case(f"{fmt}: {what}", "error", _load_plain(fmt, mutate), regex))
    return cases


def _csv_text_cases() -> list[Case]:
    """Literal CSV text no frame can hold: numbers out of range, not numbers, broken lines."""
    G = r"^g\.csv: "
    cells = [
        ("game 10**20", (0, "game"), "1" + "0" * 20, G + "column 'game': expected integers$"),
        ("points_a -2**63 - 1", (1, "points_a"), str(-(2**63) - 1), G + "column 'points_a'"),
        ("ticks 40.0", (2, "ticks"), "40.0", G + "column 'ticks': expected integers"),
        ("ticks 1.5", (2, "ticks"), "1.5", G + "column 'ticks': expected integers"),
        ("a_kills empty", (3, "a_kills"), "", G + "column 'a_kills': expected integers"),
        ("map 0x0", (3, "map"), "0x0", G + "column 'map': expected integers"),
        ("a_basics_used abc", (4, "a_basics_used"), "abc", G + "column 'a_basics_used'"),
        ("damage nan", (5, "a_damage_dealt"), "nan", G + "column 'a_damage_dealt': expected fin"),
        ("damage NaN", (5, "a_damage_dealt"), "NaN", G + "column 'a_damage_dealt': expected fin"),
        ("damage inf", (5, "b_damage_dealt"), "inf", G + "column 'b_damage_dealt': expected fin"),
        ("damage 1e400", (5, "b_damage_dealt"), "1e400", G + "column 'b_damage_dealt': expected"),
        ("damage empty", (6, "a_healing_done"), "", G + "column 'a_healing_done': expected numb"),
        ("damage 1,5", (6, "a_healing_done"), "1,5", G + "column 'a_healing_done': expected num"),
    ]
    cases = [
        Case(
            f"csv text: {what}",
            "error",
            _load_text(lambda b, c=cell, t=text: _csv_cells(b, {c: t})),
            rx,
        )
        for what, cell, text, rx in cells
    ]

    def repeated(base: Frame) -> str:
        head, *lines = base.to_csv(index=False, lineterminator="\n").splitlines()
        return "\n".join([head + ",ticks", *(line + ",40" for line in lines)]) + "\n"

    def extra_field(base: Frame) -> str:
        lines = base.to_csv(index=False, lineterminator="\n").splitlines()
        lines[4] += ",7"
        return "\n".join(lines) + "\n"

    def missing_field(base: Frame) -> str:
        lines = base.to_csv(index=False, lineterminator="\n").splitlines()
        lines[4] = lines[4].rsplit(",", 1)[0]
        return "\n".join(lines) + "\n"

    cases += [
        Case(
            "csv text: repeated column",
            "error",
            _load_text(repeated),
            G + r"repeated column\(s\) \['ticks'\]",
        ),
        Case(
            "csv text: a row with an extra field",
            "error",
            _load_text(extra_field),
            r"^path: cannot read '.*g\.csv': ParserError",
        ),
        Case(
            "csv text: a row with a missing field",
            "error",
            _load_text(missing_field),
            G + "column 'b_ultimates_used': expected integers",
        ),
        Case(
            "csv text: header only",
            "error",
            _load_text(lambda b: b.to_csv(index=False, lineterminator="\n").splitlines()[0] + "\n"),
            G + "no games$",
        ),
        Case(
            "csv text: empty file",
            "error",
            _load_text(lambda b: ""),
            r"^path: cannot read '.*g\.csv': EmptyDataError",
        ),
        Case(
            "csv text: not UTF-8",
            "error",
            _load_text(lambda b: b.assign(system_a="Zoë").to_csv(index=False).encode("latin-1")),
            r"^path: cannot read '.*g\.csv': UnicodeDecodeError",
        ),
        Case(
            "csv text: a Parquet file named .csv",
            "error",
            _load_text(lambda b: b.to_parquet(index=False)),
            r"^path: cannot read '.*g\.csv': UnicodeDecodeError",
        ),
        Case(
            "parquet: a CSV file named .parquet",
            "error",
            _load_text(lambda b: b.to_csv(index=False), name="g.parquet"),
            r"^path: cannot read '.*g\.parquet': ArrowInvalid",
        ),
        Case(
            "parquet: empty file",
            "error",
            _load_text(lambda b: b"", name="g.parquet"),
            r"^path: cannot read '.*g\.parquet'",
        ),
    ]
    return cases


def _body_lines(text: str) -> tuple[str, list[str]]:
    """An old CSV's record line and its other lines (header first), each with its line end."""
    first, _, rest = text.partition("\n")
    return first + "\n", rest.splitlines(keepends=True)


def _keep_lines(n: int) -> Callable[[str], str]:
    """The record, the header and the first `n` games (a cut exactly at a line end)."""

    def edit(text: str) -> str:
        record, lines = _body_lines(text)
        return record + "".join(lines[: n + 1])

    return edit


def _cut_in_line(k: int, fraction: float = 0.5) -> Callable[[str], str]:
    """Cut inside line k after the record (0: the header, 1: game 0, ...)."""

    def edit(text: str) -> str:
        record, lines = _body_lines(text)
        line = lines[k]
        return record + "".join(lines[:k]) + line[: max(1, int(len(line) * fraction))]

    return edit


def _without_lines(*games: int) -> Callable[[str], str]:
    def edit(text: str) -> str:
        record, lines = _body_lines(text)
        return record + "".join(x for i, x in enumerate(lines) if i - 1 not in games)

    return edit


def _edit_cells(edits: dict[tuple[int, str], str]) -> Callable[[str], str]:
    """Replace cells of an old CSV (keeping its record) by literal text."""

    def edit(text: str) -> str:
        record, lines = _body_lines(text)
        return record + _cells(edits)("".join(lines))

    return edit


def _cells(edits: dict[tuple[int, str], str]) -> Callable[[str], str]:
    """Replace cells of a CSV's text (header first; row k is game k) by literal text."""

    def edit(text: str) -> str:
        rows = list(csv.reader(io.StringIO(text)))
        for (row, col), value in edits.items():
            rows[row + 1][rows[0].index(col)] = value
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(rows)
        return out.getvalue()

    return edit


def _swap_lines(a: int, b: int) -> Callable[[str], str]:
    def edit(text: str) -> str:
        record, lines = _body_lines(text)
        lines[a + 1], lines[b + 1] = lines[b + 1], lines[a + 1]
        return record + "".join(lines)

    return edit


def _new_record(record: Callable[[Frame], Any]) -> Callable[[Path, Frame], Path]:
    def make(tmp: Path, base: Frame) -> Path:
        return _with_record(tmp, base, record(base))

    return make


def _no_metrics(df: Frame) -> Frame:
    return df.drop(columns=[c for c in results.metric_columns("tdm") if c in df.columns])


def _score_20(df: Frame) -> Frame:
    """Still valid: every game a draw at the tick limit, no team near 20 points; every line now
    ends in a two-digit number (winning_score is the last column without metrics and
    fingerprints)."""
    return _no_metrics(_unhashed(df)).assign(winning_score=20)


def _integrity_cases() -> list[Case]:
    G = r"^g\.csv: "
    return [
        Case(
            "old csv: cut inside the record line",
            "error",
            _load_old_text(lambda t: t[:30]),
            G + "the integrity record is not JSON",
        ),
        Case(
            "old csv: cut inside the header",
            "error",
            _load_old_text(_cut_in_line(0)),
            G + r"the last line is cut \(no line end\)",
        ),
        Case(
            "old csv: cut inside game 0",
            "error",
            _load_old_text(_cut_in_line(1, 0.3)),
            G + "the last line is cut",
        ),
        Case(
            "old csv: cut inside game 9",
            "error",
            _load_old_text(_cut_in_line(10, 0.8)),
            G + "the last line is cut",
        ),
        Case(
            "old csv: cut after one byte of game 15",
            "error",
            _load_old_text(_cut_in_line(16, 0.0)),
            G + "the last line is cut",
        ),
        Case(
            "old csv: final line end removed",
            "error",
            _load_old_text(lambda t: t[:-1]),
            G + "the last line is cut",
        ),
        Case(
            "old csv: cut inside the last number (20 -> 2)",
            "error",
            _load_old_text(lambda t: t[:-2], df=_score_20),
            G + "the last line is cut",
        ),
        Case(
            "old csv: cut inside the last number, no integrity check",
            "error",
            _load_old_text(lambda t: t[:-2], check=False, df=_score_20),
            G + "the last line is cut",
        ),
        Case(
            "old csv: last number lost a digit, line end kept",
            "error",
            _load_old_text(lambda t: t[:-2] + "\n", df=_score_20),
            G + "checksum mismatch: the games were changed after writing",
        ),
        Case(
            "old csv: cut at a line end, 8 games left",
            "error",
            _load_old_text(_keep_lines(8)),
            G + r"the file says 16 games but holds 8 \(cut or edited",
        ),
        Case(
            "old csv: cut at a line end, 9 games left",
            "error",
            _load_old_text(_keep_lines(9)),
            G + r"row 8 \(game 8\): pair_id holds one game",
        ),
        Case(
            "old csv: a pair deleted",
            "error",
            _load_old_text(_without_lines(2, 3)),
            G + "the file says 16 games but holds 14",
        ),
        Case(
            "old csv: a game deleted",
            "error",
            _load_old_text(_without_lines(5)),
            G + r"row 4 \(game 4\): pair_id holds one game",
        ),
        Case(
            "old csv: a digit of a damage edited",
            "error",
            _load_old_text(_edit_cells({(0, "a_damage_dealt"): "256.4000549316407"})),
            G + "checksum mismatch",
        ),
        Case(
            "old csv: a count edited",
            "error",
            _load_old_text(_edit_cells({(0, "a_basics_used"): "0"})),  # random play uses some
            G + "checksum mismatch",
        ),
        Case(
            "old csv: two games swapped",
            "error",
            _load_old_text(_swap_lines(0, 1)),
            G + "checksum mismatch",
        ),
        Case(
            "old csv: record line removed",
            "error",
            _load_old_text(lambda t: t.partition("\n")[2]),
            G + r"no integrity record \(g\.csv\.meta\.json is missing; written by another tool",
        ),
        Case(
            "old csv: record line without its space",
            "error",
            _load_old_text(lambda t: "#" + t[2:]),
            G + r"missing column\(s\) \['game'",
        ),
        Case(
            "record: not JSON",
            "error",
            _load_made(_new_record(lambda b: "hello")),
            G + "the integrity record is not JSON: 'hello'",
        ),
        Case(
            "record: a JSON list",
            "error",
            _load_made(_new_record(lambda b: [1, 2])),
            G
            + re.escape(
                "integrity record is not one of ['marl-bgs-results-v1', 'marl-bgs-results-v2']"
            ),
        ),
        Case(
            "record: another format",
            "error",
            _load_made(_new_record(lambda b: _record_json(b, format="other-v2"))),
            G
            + re.escape(
                "integrity record is not one of ['marl-bgs-results-v1', 'marl-bgs-results-v2']"
            ),
        ),
        Case(
            "record: null",
            "error",
            _load_made(_new_record(lambda b: None)),
            G + "no integrity record",
        ),
        Case(
            "record: 15 games",
            "error",
            _load_made(_new_record(lambda b: _record_json(b, games=15))),
            G + "the file says 15 games but holds 16",
        ),
        Case(
            "record: the count as text",
            "error",
            _load_made(_new_record(lambda b: _record_json(b, games="16"))),
            G + "the file says '16' games but holds 16",
        ),
        Case(
            "record: no sha256",
            "error",
            _load_made(_new_record(lambda b: {"format": results.FORMAT, "games": 16})),
            G + "checksum mismatch",
        ),
        Case(
            "record: wrong sha256",
            "error",
            _load_made(_new_record(lambda b: _record_json(b, sha256="0" * 64))),
            G + "checksum mismatch",
        ),
    ]


def _first_lines(n: int) -> Callable[[str], str]:
    """The header and the first `n` games of a saved CSV (a cut at a line end)."""
    return lambda text: "".join(text.splitlines(keepends=True)[: n + 1])


def _side_file_cases() -> list[Case]:
    """A saved CSV and its side file `g.csv.meta.json`: each missing, cut, edited or replaced."""
    G, S = r"^g\.csv: ", r"^g\.csv\.meta\.json: "

    def other_record(text: str) -> str:  # the record of another table (15 games)
        return json.dumps({**json.loads(text), "games": 15})

    def remove(meta: Path, text: str) -> None:
        meta.unlink()

    def folder(meta: Path, text: str) -> None:
        meta.unlink()
        meta.mkdir()

    def another_table(tmp: Path, base: Frame) -> Any:  # the side file of other games, 16 too
        other = results.meta_path(ev.save(_flipped(base), tmp / "f.csv"))
        return _load_saved(side=_side(lambda t: other.read_text(encoding="utf-8")))(tmp, base)

    def old_and_new(tmp: Path, base: Frame) -> Any:
        path = ev.save(base, tmp / "g.csv")
        record = results.meta_path(path).read_text(encoding="utf-8")
        _write(tmp, "g.csv", f"# {record}" + path.read_text(encoding="utf-8"))
        return ev.load(path)

    return [
        Case(
            "side file: missing",
            "error",
            _load_saved(side=remove),
            G + r"no integrity record \(g\.csv\.meta\.json is missing; written by another",
        ),
        Case(
            "side file: empty",
            "error",
            _load_saved(side=_side(lambda t: "")),
            S + "the integrity record is not JSON: ''",
        ),
        Case(
            "side file: cut in half",
            "error",
            _load_saved(side=_side(lambda t: t[: len(t) // 2])),
            S + "the integrity record is not JSON",
        ),
        Case(
            "side file: a JSON list",
            "error",
            _load_saved(side=_side(lambda t: "[1, 2]")),
            G
            + re.escape(
                "integrity record is not one of ['marl-bgs-results-v1', 'marl-bgs-results-v2']"
            ),
        ),
        Case(
            "side file: null",
            "error",
            _load_saved(side=_side(lambda t: "null")),
            G + r"no integrity record \(written by another tool\?\)",
        ),
        Case(
            "side file: the record of 15 games",
            "error",
            _load_saved(side=_side(other_record)),
            G + r"the file says 15 games but holds 16 \(cut or edited",
        ),
        Case(
            "side file: the record of another table",
            "error",
            another_table,
            G + "checksum mismatch: the games were changed after writing",
        ),
        Case(
            "side file: a folder",
            "error",
            _load_saved(side=folder),
            S + r"expected a file holding the integrity record of g\.csv",
        ),
        Case(
            "side file: 70 KiB",
            "error",
            _load_saved(side=_side(lambda t: t + " " * 70_000)),
            S + r"\d{2},\d{3} bytes; a record is under 64 KiB",
        ),
        Case(
            "side file: not UTF-8",
            "error",
            _load_saved(side=_side(lambda t: b"\xff\xfe" + t.encode())),
            S + "cannot read it: UnicodeDecodeError",
        ),
        Case(
            "side file and a record line",
            "error",
            old_and_new,
            G + r"two integrity records, its first line and g\.csv\.meta\.json",
        ),
        Case(
            "saved csv: cut at a line end, 8 games left",
            "error",
            _load_saved(csv_text=_first_lines(8)),
            G + r"the file says 16 games but holds 8",
        ),
        Case(
            "saved csv: cut inside game 9",
            "error",
            _load_saved(csv_text=lambda t: _first_lines(10)(t)[:-20]),
            G + r"the last line is cut \(no line end\)",
        ),
        Case(
            "saved csv: a count edited",
            "error",
            _load_saved(csv_text=_cells({(0, "a_basics_used"): "0"})),  # random play uses some
            G + "checksum mismatch",
        ),
        Case(
            "saved csv: two games swapped",
            "error",
            _load_saved(csv_text=lambda t: "".join(_swap(t.splitlines(keepends=True), 1, 2))),
            G + "checksum mismatch",
        ),
    ]


def _swap(lines: list[str], a: int, b: int) -> list[str]:
    lines[a], lines[b] = lines[b], lines[a]
    return lines


def _parquet_cases() -> list[Case]:
    P = r"^g\.parquet: "

    def meta(raw: Callable[[Frame], bytes | None], rows: Mutate | None = None):
        def make(tmp: Path, base: Frame) -> Path:
            return _parquet_with_meta(tmp, base if rows is None else rows(base), raw(base))

        return make

    def table(build: Callable[[Frame], pa.Table]) -> Callable[[Path, Frame], Path]:
        def make(tmp: Path, base: Frame) -> Path:
            pq.write_table(build(base), tmp / "g.parquet")
            return tmp / "g.parquet"

        return make

    def arrow(base: Frame) -> pa.Table:
        return pa.Table.from_pandas(base, preserve_index=False)

    def replaced(col: str, array: Callable[[Frame], pa.Array]) -> Callable[[Frame], pa.Table]:
        def build(base: Frame) -> pa.Table:
            t = arrow(base)
            return t.set_column(t.column_names.index(col), col, array(base))

        return build

    def truncated(tmp: Path, base: Frame) -> Path:
        path = ev.save(base, tmp / "g.parquet")
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        return path

    def record(base: Frame, **changes: Any) -> bytes:
        return json.dumps(_record_json(base, **changes)).encode()

    def nulls(values: list[Any], kind: pa.DataType) -> Callable[[Frame], pa.Array]:
        return lambda b: pa.array(values + [None] * (len(b) - len(values)), kind)

    ticks = lambda b: pa.array(b["ticks"].tolist(), pa.int64())  # noqa: E731
    return [
        Case(
            "parquet: no record",
            "error",
            _load_made(meta(lambda b: None)),
            P + "no integrity record",
        ),
        Case(
            "parquet: record not JSON",
            "error",
            _load_made(meta(lambda b: b"{oops")),
            P + "the integrity record is not JSON",
        ),
        Case(
            "parquet: record says 17 games",
            "error",
            _load_made(meta(lambda b: record(b, games=17))),
            P + "the file says 17 games but holds 16",
        ),
        Case(
            "parquet: record kept, 8 games left",
            "error",
            _load_made(meta(lambda b: record(b), rows=lambda b: b.iloc[:8])),
            P + "the file says 16 games but holds 8",
        ),
        Case(
            "parquet: record kept, a count edited",
            "error",
            _load_made(meta(lambda b: record(b), rows=_set(0, a_basics_used=0))),
            P + "checksum mismatch",
        ),
        Case(
            "parquet: cut in half",
            "error",
            _load_made(truncated),
            r"^path: cannot read '.*g\.parquet': ArrowInvalid",
        ),
        Case(
            "parquet: repeated column",
            "error",
            _load_made(table(lambda b: arrow(b).append_column("ticks", ticks(b))), check=False),
            P + r"repeated column\(s\) \['ticks'\]",
        ),
        Case(
            "parquet: ticks as floats",
            "error",
            _load_made(table(replaced("ticks", lambda b: pa.array(b["ticks"] * 1.0))), check=False),
            P + "column 'ticks': expected integers, got dtype float64",
        ),
        Case(
            "parquet: a null count",
            "error",
            _load_made(table(replaced("a_kills", nulls([0], pa.int64()))), check=False),
            P + "column 'a_kills': expected integers",
        ),
        Case(
            "parquet: a null name",
            "error",
            _load_made(table(replaced("system_a", nulls(["mixed"], pa.string()))), check=False),
            P + "column 'system_a': expected text in every row",
        ),
        Case(
            "parquet: a metric as booleans",
            "error",
            _load_made(
                table(replaced("a_damage_dealt", lambda b: pa.array([True] * len(b)))), check=False
            ),
            P + "column 'a_damage_dealt': expected numbers, got dtype bool",
        ),
        Case(
            "parquet: ticks as timestamps",
            "error",
            _load_made(
                table(replaced("ticks", lambda b: pa.array(pd.to_datetime(b["ticks"])))),
                check=False,
            ),
            P + "column 'ticks': expected integers, got dtype datetime64",
        ),
    ]


def _path_cases() -> list[Case]:
    def make(name: str, folder: bool = False, content: bool = True):
        def build(tmp: Path, base: Frame) -> Path:
            path = tmp / name
            if folder:
                path.mkdir()
            elif content:
                path.write_text(base.to_csv(index=False))
            return path

        return build

    return [
        Case(
            "path: .txt suffix",
            "error",
            _load_made(make("g.txt")),
            r"^path: expected a \.parquet or \.csv file, got '.*g\.txt'",
        ),
        Case(
            "path: no suffix",
            "error",
            _load_made(make("g")),
            r"^path: expected a \.parquet or \.csv file",
        ),
        Case(
            "path: .CSV in capitals",
            "error",
            _load_made(make("g.CSV")),
            r"^path: expected a \.parquet or \.csv file",
        ),
        Case(
            "path: a folder named .parquet",
            "error",
            _load_made(make("d.parquet", folder=True)),
            r"^path: '.*d\.parquet' is a folder",
        ),
        Case(
            "path: a folder without suffix",
            "error",
            _load_made(make("d", folder=True)),
            r"^path: expected a \.parquet",
        ),
        Case(
            "path: missing file",
            "error",
            _load_made(make("absent.csv", content=False)),
            r"^path: results file '.*absent\.csv' does not exist",
        ),
    ]


def _flipped(base: Frame) -> Frame:
    """The same games seen from the other side: other game numbers and Systems, a valid table."""
    flipped = base.assign(
        system_a="random", system_b="mixed", game=base["game"] + 16, pair_id=base["pair_id"] + 8
    )
    flipped["result"] = flipped["result"].map({"win": "loss", "loss": "win", "draw": "draw"})
    return flipped


def _combine(files: Callable[[Path, Frame], list[Path]]):
    def run(tmp: Path, base: Frame) -> Any:
        return results.combine([(p.name, ev.load(p)) for p in files(tmp, base)])

    return run


def _combine_cases() -> list[Case]:
    same = r"^results: the game \(seed=7, system_a=mixed, system_b=random, game={g}\) is in both "
    return [
        Case(
            "combine: the same file twice",
            "error",
            _combine(lambda d, b: [ev.save(b, d / "g.csv")] * 2),
            same.format(g=0) + r"g\.csv and g\.csv",
        ),
        Case(
            "combine: a .csv and a .parquet of the same games",
            "error",
            _combine(lambda d, b: [ev.save(b, d / "g.csv"), ev.save(b, d / "g.parquet")]),
            same.format(g=0) + r"g\.csv and g\.parquet",
        ),
        Case(
            "combine: one pair in both files",
            "error",
            _combine(
                lambda d, b: [ev.save(b.iloc[:6], d / "a.csv"), ev.save(b.iloc[4:], d / "b.csv")]
            ),
            same.format(g=4) + r"a\.csv and b\.csv",
        ),
        Case("combine: no files", "error", _combine(lambda d, b: []), r"^results: no files given$"),
        Case(
            "combine: two files of different games",
            "accepted",
            _combine(lambda d, b: [ev.save(b, d / "g.csv"), ev.save(_flipped(b), d / "f.parquet")]),
            _equals(lambda b: pd.concat([b, _flipped(b)], ignore_index=True)),
        ),
        Case(
            "combine: a file without fingerprints and one with them",
            "accepted",
            _combine(
                lambda d, b: [ev.save(_unhashed(_flipped(b)), d / "o.csv"), ev.save(b, d / "n.csv")]
            ),
            _equals(lambda b: pd.concat([_unhashed(_flipped(b)), b], ignore_index=True)),
        ),
    ]


def _unhashed(df: Frame) -> Frame:
    """A table as written before trajectory fingerprints: no such column."""
    return df.drop(columns=results.TRAJECTORY)


def _validate_cases() -> list[Case]:
    F = r"^frame: "

    def with_col(col: str, values: Callable[[Frame], Any]) -> Callable[[Frame], Frame]:
        return lambda b: b.assign(**{col: values(b)})

    def repeated(base: Frame) -> Frame:
        return pd.concat([base, base[["ticks"]]], axis=1)

    return [
        Case(
            "frame: a Series",
            "error",
            _validate(lambda b: b["ticks"]),
            F + "expected a pandas DataFrame, got Series",
        ),
        Case(
            "frame: repeated column",
            "error",
            _validate(repeated),
            F + r"repeated column\(s\) \['ticks'\]",
        ),
        Case(
            "frame: complex damage",
            "error",
            _validate(with_col("a_damage_dealt", lambda b: b["a_damage_dealt"] + 1j)),
            F + "column 'a_damage_dealt': expected numbers, got dtype complex128",
        ),
        Case(
            "frame: nullable ticks with a gap",
            "error",
            _validate(with_col("ticks", lambda b: pd.array([None, *b["ticks"][1:]], "Int64"))),
            F + "column 'ticks': expected integers in every row, some are missing",
        ),
        Case(
            "frame: ticks as booleans",
            "error",
            _validate(with_col("ticks", lambda b: True)),
            F + "column 'ticks': expected integers, got dtype bool",
        ),
        Case(
            "frame: a name None",
            "error",
            _validate(with_col("system_b", lambda b: [None, *b["system_b"][1:]])),
            F + "column 'system_b': expected text in every row",
        ),
        Case(
            "frame: half pair, complete",
            "error",
            _validate(lambda b: b.iloc[:3]),
            F + r"row 2 \(game 2\): pair_id holds one game",
        ),
        Case(
            "frame: half pair, complete=False (a journal)",
            "accepted",
            _validate(lambda b: b.iloc[:3], complete=False),
            _equals(lambda b: b.iloc[:3]),
        ),
        Case(
            "frame: nullable ticks without a gap",
            "accepted",
            _validate(with_col("ticks", lambda b: b["ticks"].astype("Int64"))),
            _equals(),
        ),
        Case(
            "frame: fingerprints missing for an older table's games",
            "accepted",
            _validate(lambda b: pd.concat([_unhashed(b.iloc[:8]), b.iloc[8:]], ignore_index=True)),
            _equals(lambda b: pd.concat([_unhashed(b.iloc[:8]), b.iloc[8:]], ignore_index=True)),
        ),
    ]


# --- the journal: a cut last line is the documented repair ------------------------------------

JOURNAL = r"^g\.parquet\.journal\.csv: "


def _journal(edit: Callable[[bytes], bytes], games: Mutate | None = None):
    """Journal the games as a run does, edit the journal's bytes, read it back."""

    def run(tmp: Path, base: Frame) -> Any:
        journal = Journal(journal_path(tmp / "g.parquet"))
        df = base if games is None else games(base)
        for start in range(0, len(df), 4):  # as the run hands them over: a few at a time
            journal.append(df.iloc[start : start + 4])
        journal.path.write_bytes(edit(journal.path.read_bytes()))
        read, dropped = journal.read()
        return read, dropped, journal.path.read_bytes()

    return run


def _cut_journal(line: int, fraction: float = 0.5) -> Callable[[bytes], bytes]:
    """Cut inside line `line` of the journal (0: the header, 1: game 0, ...)."""

    def edit(data: bytes) -> bytes:
        lines = data.splitlines(keepends=True)
        keep = b"".join(lines[:line])
        return keep + lines[line][: max(1, int(len(lines[line]) * fraction))]

    return edit


def _repaired(n: int | None, games: Mutate | None = None) -> Callable[[Any, Frame], None]:
    """Repair: the first `n` games kept (None: no game), one cut line dropped and cut from the
    file, so the games a resumed run appends start on a line of their own."""

    def check(got: Any, base: Frame) -> None:
        read, dropped, data = got
        df = base if games is None else games(base)
        assert dropped == 1
        assert data == b"" or data.endswith(b"\n")
        if n is None:
            assert read is None
        else:
            pd.testing.assert_frame_equal(read, results.normalize(df.iloc[:n]))
            assert data.count(b"\n") == n + 1

    return check


def _journal_ok(n: int | None) -> Callable[[Any, Frame], None]:
    def check(got: Any, base: Frame) -> None:
        read, dropped, _ = got
        assert dropped == 0
        if n is None:
            assert read is None
        else:
            pd.testing.assert_frame_equal(read, results.normalize(base.iloc[:n]))

    return check


def _unicode(df: Frame) -> Frame:
    return df.assign(system_b="ランダム", system_b_slot0="ランダム")


def _journal_cases() -> list[Case]:
    last_char = lambda d: d[: d.rfind("ラ".encode()) + 1]  # noqa: E731 - one of its 3 bytes
    return [
        Case(
            "journal: cut inside the header", "repair", _journal(_cut_journal(0)), _repaired(None)
        ),
        Case("journal: cut inside game 0", "repair", _journal(_cut_journal(1)), _repaired(None)),
        Case(
            "journal: cut inside game 3 (a half pair kept)",
            "repair",
            _journal(_cut_journal(4, 0.2)),
            _repaired(3),
        ),
        Case("journal: cut inside game 8", "repair", _journal(_cut_journal(9, 0.9)), _repaired(8)),
        Case("journal: cut inside game 15", "repair", _journal(_cut_journal(16)), _repaired(15)),
        Case(
            "journal: cut after the last comma", "repair", _journal(lambda d: d[:-3]), _repaired(15)
        ),
        Case(
            "journal: cut inside a character",
            "repair",
            _journal(last_char, games=_unicode),
            _repaired(15, games=_unicode),
        ),
        Case("journal: whole", "accepted", _journal(lambda d: d), _journal_ok(16)),
        Case(
            "journal: a half pair",
            "accepted",
            _journal(lambda d: d, games=lambda b: b.iloc[:3]),
            _journal_ok(3),
        ),
        Case(
            "journal: header only",
            "accepted",
            _journal(lambda d: d.splitlines(keepends=True)[0]),
            _journal_ok(None),
        ),
        Case(
            "journal: not UTF-8",
            "error",
            _journal(lambda d: d.replace(b"random", "Zoë".encode("latin-1"), 1)),
            JOURNAL + "the journal is not UTF-8 text",
        ),
        Case(
            "journal: a result victory",
            "error",
            _journal(lambda d: d.replace(b",draw,", b",victory,", 1)),
            JOURNAL + r"column 'result': values \['victory'\]",
        ),
        Case(
            "journal: the same game twice",
            "error",
            _journal(lambda d: d + d.splitlines(keepends=True)[1]),
            JOURNAL + r"row 16 \(game 0\): the same game twice",
        ),
        Case(
            "journal: a row with an extra field",
            "error",
            _journal(lambda d: d + d.splitlines()[1] + b",1\n"),
            JOURNAL + "cannot read the journal",
        ),
    ]


# --- valid edge cases -------------------------------------------------------------------------


def _round_trip(name: str, df: Mutate | None = None, check: bool = True):
    def run(tmp: Path, base: Frame) -> Any:
        return ev.load(ev.save(base if df is None else df(base), tmp / name), check_integrity=check)

    return run


def _custom_map(df: Frame) -> Frame:
    """Pairs 6 and 7 on a custom map (recorded as id -1 with its own name and hash)."""
    df = df.copy()
    df.loc[12:, "map"] = CUSTOM_MAP_ID
    df.loc[12:, "map_name"] = "Fuzz"
    df.loc[12:, "map_hash"] = "0123456789abcdef"
    return df


def _a_win(df: Frame) -> Frame:
    """Pair 0 becomes a 5-0 and a 5-2 win for team A at tick 30 (points = kills)."""
    df = df.copy()
    cols = ["points_a", "a_kills", "b_deaths", "b_red_zone_deaths", "ticks"]
    df.loc[0:1, cols] = [5, 5, 5, 0, 30]
    df.loc[0:1, "result"] = "win"
    return df


def _names(df: Frame) -> Frame:
    return df.assign(
        system_a='Zoë, "the" ランダム',
        system_a_slot0="host,\nfirst",
        system_b="NA",
        system_b_slot1="nan",
        system_b_slot2="123",
        map_name="null",
    )


def _read_csv_plainly(tmp: Path, base: Frame) -> Frame:
    """What a user gets from a saved CSV with nothing but `pandas.read_csv`."""
    return results.normalize(pd.read_csv(ev.save(base, tmp / "g.csv")))


def _accepted_cases() -> list[Case]:
    same = _equals()
    crlf_text = lambda t: t.replace("\n", "\r\n")  # noqa: E731
    shuffled = lambda b: b.sample(frac=1.0, random_state=3)  # noqa: E731
    crlf = _load_old_text(lambda t: t.replace("\n", "\r\n"))
    bom = _load_old_text(lambda t: "\ufeff" + t)  # as some editors save it
    blank = _load_old_text(lambda t: t.replace("\n", "\n\n", 5))
    quoted = lambda b: b.to_csv(index=False, lineterminator="\n", quoting=csv.QUOTE_ALL)  # noqa: E731

    def padded(base: Frame) -> str:
        return _csv_cells(
            base, {(k, c): f" {base.loc[k, c]} " for k in range(16) for c in ("ticks", "points_a")}
        )

    def int32(tmp: Path, base: Frame) -> Path:
        counts = [
            c for c, k in results.schema("tdm").items() if k == results.INT and c in base.columns
        ]
        return _plain_parquet(tmp, base.astype(dict.fromkeys(counts, "int32")))

    return [
        Case("round trip: csv", "accepted", _round_trip("g.csv"), same),
        Case("saved csv: plain pandas.read_csv", "accepted", _read_csv_plainly, same),
        Case("saved csv: CRLF line ends, side file", "accepted", _load_saved(crlf_text), same),
        Case(
            "saved csv: side file missing, check_integrity=False",
            "accepted",
            _load_saved(side=lambda meta, text: meta.unlink(), check=False),
            same,
        ),
        Case(
            "saved csv: side file not JSON, check_integrity=False",
            "accepted",
            _load_saved(side=_side(lambda t: "{"), check=False),
            same,
        ),
        Case("old csv: whole", "accepted", _load_old_text(lambda t: t), same),
        Case("round trip: parquet", "accepted", _round_trip("g.parquet"), same),
        Case(
            "round trip: csv without metrics",
            "accepted",
            _round_trip("g.csv", _no_metrics),
            _equals(_no_metrics),
        ),
        Case(
            "round trip: parquet without metrics",
            "accepted",
            _round_trip("g.parquet", _no_metrics),
            _equals(_no_metrics),
        ),
        Case(
            "round trip: csv, winning_score 20",
            "accepted",
            _round_trip("g.csv", _score_20),
            _equals(_score_20),
        ),
        Case(
            "round trip: csv, a custom map",
            "accepted",
            _round_trip("g.csv", _custom_map),
            _equals(_custom_map),
        ),
        Case(
            "round trip: parquet, a custom map",
            "accepted",
            _round_trip("g.parquet", _custom_map),
            _equals(_custom_map),
        ),
        Case("round trip: csv, wins", "accepted", _round_trip("g.csv", _a_win), _equals(_a_win)),
        Case(
            "round trip: csv without fingerprints (an older file)",
            "accepted",
            _round_trip("g.csv", _unhashed),
            _equals(_unhashed),
        ),
        Case(
            "round trip: parquet without fingerprints (an older file)",
            "accepted",
            _round_trip("g.parquet", _unhashed),
            _equals(_unhashed),
        ),
        Case(
            "no record: csv, fingerprints left empty (unknown)",
            "accepted",
            _load_plain("csv", _set_all(trajectory="")),
            _equals(_set_all(trajectory="")),
        ),
        Case(
            "round trip: csv, odd names", "accepted", _round_trip("g.csv", _names), _equals(_names)
        ),
        Case(
            "round trip: parquet, odd names",
            "accepted",
            _round_trip("g.parquet", _names),
            _equals(_names),
        ),
        Case(
            "round trip: csv, shuffled rows",
            "accepted",
            _round_trip("g.csv", shuffled),
            _equals(shuffled),
        ),
        Case(
            "round trip: a str path",
            "accepted",
            lambda d, b: ev.load(str(ev.save(b, d / "g.csv"))),
            same,
        ),
        Case(
            "no record: csv, check_integrity=False",
            "accepted",
            _load_plain("csv", lambda b: b),
            same,
        ),
        Case(
            "no record: parquet, check_integrity=False",
            "accepted",
            _load_plain("parquet", lambda b: b),
            same,
        ),
        Case(
            "no record: csv without metrics",
            "accepted",
            _load_plain("csv", _no_metrics),
            _equals(_no_metrics),
        ),
        Case(
            "old csv: record line removed, check_integrity=False",
            "accepted",
            _load_old_text(lambda t: t.partition("\n")[2], check=False),
            same,
        ),
        Case(
            "old csv: cut at a line end, 8 games left, check_integrity=False",
            "accepted",
            _load_old_text(_keep_lines(8), check=False),
            _equals(lambda b: b.iloc[:8]),
        ),
        Case("old csv: CRLF line ends", "accepted", crlf, same),
        Case("old csv: byte order mark", "accepted", bom, same),
        Case(
            "csv text: byte order mark",
            "accepted",
            _load_text(lambda b: "\ufeff" + b.to_csv(index=False)),
            same,
        ),
        Case("old csv: blank lines", "accepted", blank, same),
        Case("csv text: every field quoted", "accepted", _load_text(quoted), same),
        Case("csv text: numbers padded with spaces", "accepted", _load_text(padded), same),
        Case("parquet: int32 counts", "accepted", _load_made(int32, check=False), same),
    ]


CASES: list[Case] = (
    _content_cases()
    + _csv_text_cases()
    + _integrity_cases()
    + _side_file_cases()
    + _parquet_cases()
    + _path_cases()
    + _combine_cases()
    + _validate_cases()
    + _journal_cases()
    + _accepted_cases()
)


def test_there_are_enough_malformed_results_files() -> None:
    errors = [c for c in CASES if c.outcome == "error"]
    assert len(errors) >= 50
    assert len([c for c in CASES if c.outcome == "accepted"]) >= 10
    assert len([c for c in CASES if c.outcome == "repair"]) >= 5
    assert {c.outcome for c in CASES} == {"error", "repair", "accepted"}
    assert all(isinstance(c.expect, str) == (c.outcome == "error") for c in CASES)
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_results_files(tmp_path, base_games, record_property, case: Case) -> None:
    record_property("outcome", case.outcome)
    if case.outcome == "error":
        assert isinstance(case.expect, str)
        with pytest.raises(ev.EvalError, match=case.expect):
            case.run(tmp_path, base_games)
    else:
        assert callable(case.expect)
        case.expect(case.run(tmp_path, base_games), base_games)


def test_a_journal_holds_half_pairs_that_a_results_file_refuses(base_games) -> None:
    """`complete=False` (the journal of a run in progress) accepts a pair whose second game is
    still to come; `complete=True` (a results file) refuses it, naming the row."""
    half = base_games.iloc[:5]
    pd.testing.assert_frame_equal(ev.validate(half, complete=False), half)
    with pytest.raises(ev.EvalError, match=r"^results: row 4 \(game 4\): pair_id holds one game"):
        ev.validate(half, complete=True)
    # Both still refuse what is wrong in any table.
    for complete in (False, True):
        with pytest.raises(ev.EvalError, match=r"pair_id holds more than two games"):
            ev.validate(_append_copy(0, game=16)(half), complete=complete)


def test_save_refuses_an_invalid_table_and_writes_nothing(tmp_path, base_games) -> None:
    bad = _set(0, result="win")(base_games)
    for name in ("g.csv", "g.parquet"):
        with pytest.raises(ev.EvalError, match=r"^results: row 0 \(game 0\): result does not"):
            ev.save(bad, tmp_path / name)
    assert list(tmp_path.iterdir()) == []
