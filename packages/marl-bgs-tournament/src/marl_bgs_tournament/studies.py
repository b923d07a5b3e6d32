"""Studies that read a season folder and write into its `studies/` folder.

`teamwork(folder)`: the teamwork screen (`marl_bgs_eval.screen`) of the current field: every
measure of the season's `measures.csv` against the members' Elo in `ratings.csv`, as
`studies/teamwork.csv` and the chart `studies/teamwork.png`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.screen import ORDERINGS, plot_screen, teamwork_screen
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.season import read_season

STUDIES = "studies"  # the season folder's subfolder of study outputs
TEAMWORK_TABLE = f"{STUDIES}/teamwork.csv"
TEAMWORK_CHART = f"{STUDIES}/teamwork.png"


def _table(folder: Path, name: str) -> pd.DataFrame:
    path = folder / name
    if not path.is_file():
        raise TournamentError(f"season: {name} not found in {str(folder)!r}")
    try:
        return pd.read_csv(path)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as err:
        raise TournamentError(f"season: {name} is not a CSV table ({type(err).__name__})") from None


def teamwork(
    folder: str | Path, *, orderings: int | None = None, seed: int = 0
) -> tuple[pd.DataFrame, Path, Path]:  # fmt: skip
    """The field's teamwork screen, written to `folder/studies/`: (table, csv path, png path).
    `orderings`: random orderings for fields over 10 Systems (None: the screen's `ORDERINGS`)."""
    folder = Path(folder)
    record = read_season(folder)
    ratings, measures = _table(folder, "ratings.csv"), _table(folder, "measures.csv")
    field = [str(s) for s in record["field"]]
    count = ORDERINGS if orderings is None else orderings
    try:
        table = teamwork_screen(measures, ratings, systems=field, orderings=count, seed=seed)
    except EvalError as err:
        raise TournamentError(f"season {str(folder)!r}: {err}") from None
    (folder / STUDIES).mkdir(exist_ok=True)
    csv = folder / TEAMWORK_TABLE
    table.to_csv(csv, index=False)
    season = record.get("season", "")
    png = plot_screen(table, folder / TEAMWORK_CHART, title=f"Season {season}: teamwork screen")
    return table, csv, png
