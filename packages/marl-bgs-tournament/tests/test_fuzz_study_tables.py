"""Fuzz: damaged study tables of a season folder (`studies/teamwork.csv`,
`studies/zero_shot.csv`), as the leaderboard reads them.

Every input comes from a fixed seed per case: the teamwork screen of a real (synthetic) season,
or the zero-shot study's table as the study writes it, with bytes flipped, cut or appended, one
cell replaced by odd text or a random number, or random bytes. Each must end in exactly one of
two ways: `SeasonDataError` naming the file (and, for a bad cell, its row and column), or, when
the table is valid, exactly the cells that were written.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from marl_bgs_eval.fuzzing import flip_bytes, odd_text
from marl_bgs_tournament.web import tables
from marl_bgs_tournament.web.files import SeasonDataError

pytestmark = pytest.mark.fuzz_family("season study tables")
READERS = {"teamwork.csv": tables.teamwork, "zero_shot.csv": tables.zero_shot}


def _cell(rng: random.Random, data: bytes, value: Callable[[random.Random], str]) -> bytes:
    df = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    df.iat[rng.randrange(len(df)), rng.randrange(len(df.columns))] = value(rng)
    return df.to_csv(index=False).encode()


def _number(rng: random.Random) -> str:
    return rng.choice(["nan", "inf", "-inf", "1e400", "-3", "2", "0.5", "1e-30", "true", ""])


DAMAGE: dict[str, tuple[Callable[[random.Random, bytes], bytes], int]] = {
    "flip": (flip_bytes, 30),
    "cut": (lambda rng, d: d[: rng.randrange(len(d))], 12),
    "append": (lambda rng, d: d + rng.randbytes(rng.randint(1, 60)), 8),
    "odd cell": (lambda rng, d: _cell(rng, d, odd_text), 20),
    "number cell": (lambda rng, d: _cell(rng, d, _number), 20),
    "random bytes": (lambda rng, d: rng.randbytes(rng.randint(0, 400)), 6),
}
CASES = [(t, f, k) for t in READERS for f, (_, n) in DAMAGE.items() for k in range(n)]


def _same(got: Any, cell: str) -> bool:
    """The parsed value is the written cell: text as written (trimmed), numbers equal."""
    v = cell.strip()
    if got is None:
        return v in tables.NULLS
    if isinstance(got, str):
        return got == v
    if isinstance(got, bool):
        return v.lower() in (("true", "1") if got else ("false", "0"))
    return float(v) == got


@pytest.mark.parametrize(("table", "family", "case"), CASES,
                         ids=[f"{t[:-4]}-{f}-{k}" for t, f, k in CASES])  # fmt: skip
def test_a_damaged_study_table_is_refused_or_read_exactly(
    web_season_dir: Path, tmp_path: Path, table: str, family: str, case: int,
    record_property: Any,
) -> None:  # fmt: skip
    rng = random.Random(
        f"{family}-{case}" if table == "teamwork.csv" else f"{table}-{family}-{case}"
    )
    data = DAMAGE[family][0](rng, (web_season_dir / "studies" / table).read_bytes())
    path = tmp_path / table
    path.write_bytes(data)
    try:
        rows, said = READERS[table](path), None
    except SeasonDataError as err:
        rows, said = None, str(err)
    if said is not None:
        assert said.startswith(f"{table}: "), said
        record_property("outcome", "error")
        return
    assert rows is not None
    written = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    assert len(rows) == len(written)
    for row, (_, cells) in zip(rows, written.iterrows(), strict=True):
        for col, got in row.items():
            assert _same(got, str(cells[col])), (col, got, cells[col])
        if table == "teamwork.csv":
            assert row["rho"] is None or -1.0 <= row["rho"] <= 1.0
            assert all(row[k] is None or 0.0 <= row[k] <= 1.0 for k in ("p", "p_holm", "p_maxt"))
    record_property("outcome", "accepted")
