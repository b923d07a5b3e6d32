"""The journal of a run in progress: finished games appended as they end, so nothing is lost.

`marl-bgs-eval play --out results.parquet` writes every finished game at once to
`results.parquet.journal.csv` (one flushed CSV line per game). If the run stops (Ctrl-C, a crash,
a lost machine), the games already played stay there, and the same command with `--resume`
plays only the rest: each game's actions come from its own keys, so the resumed run's games are
the ones the whole run would have played. On success the results file is written and the
journal removed.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pandas as pd

from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.results import normalize, validate

SUFFIX = ".journal.csv"


def journal_path(out: Path) -> Path:
    """Where the journal of a run writing `out` lives."""
    return out.with_name(out.name + SUFFIX)


class Journal:
    """Append-only CSV of finished games (validated rows; flushed and synced per write)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, games: pd.DataFrame) -> None:
        """Add finished games (a results frame) to the end of the journal."""
        if games.empty:
            return
        new = not self.path.exists() or self.path.stat().st_size == 0
        text = normalize(games).to_csv(index=False, header=new, lineterminator="\n")
        with self.path.open("a", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())

    def read(self) -> tuple[pd.DataFrame | None, int]:
        """The journal's games (None if it holds none) and how many cut lines were dropped (a
        line being written when the run stopped; that game is simply played again). A cut line
        is also removed from the file, so the games appended next start on a line of their own."""
        if not self.path.is_file():
            return None, 0
        data = self.path.read_bytes()
        dropped = 0
        if data and not data.endswith(b"\n"):  # cut on bytes: the cut may split a character
            data, dropped = data[: data.rfind(b"\n") + 1], 1
            with self.path.open("r+b") as f:  # so the resumed run's games start on a new line
                f.truncate(len(data))
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise EvalError(f"{self.path.name}: the journal is not UTF-8 text: {err}") from None
        lines = text.count("\n")
        if lines <= 1:
            return None, dropped
        try:
            df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
        except Exception as err:
            raise EvalError(f"{self.path.name}: cannot read the journal: {err}") from None
        return validate(df, source=self.path.name, complete=False), dropped

    def remove(self) -> None:
        """Delete the journal (after the results file is written)."""
        self.path.unlink(missing_ok=True)
