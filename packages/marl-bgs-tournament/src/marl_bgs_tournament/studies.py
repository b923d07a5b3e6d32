"""Studies that read a season folder and write into its `studies/` folder.

`teamwork(folder)`: the teamwork screen (`marl_bgs_eval.screen`) of the current field: every
measure of the season's `measures.csv` and every team-level measure of its games against the
members' Elo in `ratings.csv`, as
`studies/teamwork.csv` and the chart `studies/teamwork.png`.

`zero_shot(folder)`: the zero-shot coordination study: a stranger (another learner of the
field, or a random agent) in each class of the top learner's team, every team against the
field, seed-paired with the team alone, as `studies/zero_shot.csv` and `studies/zero_shot.png`
(the paper's Table S15 and Figure S7).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from marl_bgs_eval import plot_zero_shot, results, system_metrics
from marl_bgs_eval import zero_shot as ev_zero_shot
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.modes import parts as mode_parts
from marl_bgs_eval.screen import ORDERINGS, plot_screen, teamwork_screen
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.season import member_system, read_season, settings_of

STUDIES = "studies"  # the season folder's subfolder of study outputs
TEAMWORK_TABLE = f"{STUDIES}/teamwork.csv"
TEAMWORK_CHART = f"{STUDIES}/teamwork.png"
ZERO_SHOT_TABLE = f"{STUDIES}/zero_shot.csv"
ZERO_SHOT_CHART = f"{STUDIES}/zero_shot.png"
ZERO_SHOT_COLUMNS = ("base", "stranger", "stranger_elo", "class", "games", "margin_change", "low",
                     "high", "distance", "base_distance", "distance_added")  # fmt: skip


def _table(folder: Path, name: str) -> pd.DataFrame:
    path = folder / name
    if not path.is_file():
        raise TournamentError(f"season: {name} not found in {str(folder)!r}")
    try:
        return pd.read_csv(path)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as err:
        raise TournamentError(f"season: {name} is not a CSV table ({type(err).__name__})") from None


def _publish(folder: Path, table: pd.DataFrame, name: str, chart: str,
             draw: Callable[[Path], Path]) -> tuple[Path, Path]:  # fmt: skip
    """Write a study's table and chart into the season folder's `studies/`."""
    (folder / STUDIES).mkdir(exist_ok=True)
    table.to_csv(folder / name, index=False)
    return folder / name, draw(folder / chart)


def teamwork(
    folder: str | Path, *, orderings: int | None = None, seed: int = 0, team_measures: bool = True
) -> tuple[pd.DataFrame, Path, Path]:  # fmt: skip
    """The field's teamwork screen, written to `folder/studies/`: (table, csv path, png path):
    the season's analysis measures (`measures.csv`) and every team-level measure of its mode
    (`EvalParts.team_measures`, from the full-metric games in `games.parquet`; `team_measures=
    False` screens `measures.csv` alone) against Elo. `orderings`: random orderings for fields
    over 10 Systems (None: the screen's `ORDERINGS`)."""
    folder = Path(folder)
    record = read_season(folder)
    ratings, measures = _table(folder, "ratings.csv"), _table(folder, "measures.csv")
    if team_measures:
        measures = pd.concat([measures, _team_measures(folder)], ignore_index=True)
    field = [str(s) for s in record["field"]]
    count = ORDERINGS if orderings is None else orderings
    try:
        table = teamwork_screen(measures, ratings, systems=field, orderings=count, seed=seed)
    except EvalError as err:
        raise TournamentError(f"season {str(folder)!r}: {err}") from None
    title = f"Season {record.get('season', '')}: teamwork screen"
    return table, *_publish(folder, table, TEAMWORK_TABLE, TEAMWORK_CHART,
                            lambda path: plot_screen(table, path, title=title))  # fmt: skip


def _team_measures(folder: Path) -> pd.DataFrame:
    """The season's games pooled into its mode's team-level measures (values only: the screen
    reads no intervals)."""
    path = folder / "games.parquet"
    if not path.is_file():
        raise TournamentError(f"season: games.parquet not found in {str(folder)!r}")
    try:
        games = results.load(path)
        names = list(mode_parts(results.mode_of(games)).team_measures())
        return system_metrics(games, names, bootstrap=1) if names else pd.DataFrame()
    except EvalError as err:
        raise TournamentError(f"season {str(folder)!r}: {err} (--no-team-measures screens "
                              f"measures.csv alone)") from None  # fmt: skip


def zero_shot(
    folder: str | Path,
    *,
    base: str | None = None,
    opponents: Sequence[str] = (),
    games_per_map: int | None = None,
    classes: str | None = None,
    batch_size: int | None = None,
    bootstrap: int = 2000,
    progress: bool = False,
) -> tuple[pd.DataFrame, Path, Path]:
    """The zero-shot coordination study of a season (`marl_bgs_eval.zero_shot`), written to
    `folder/studies/`: (table, csv path, png path). `base`: the team strangers join (default:
    the highest-rated member entered as a System file, the top learner); the strangers: every
    other member entered as a file, and a random agent; each team plays every member of the
    field (or of `opponents`, members of it) on the season's maps and rules, `games_per_map` a
    map (default: the season's pairs, twice), all with the season's root seed, so game n of
    every team starts alike."""
    folder = Path(folder)
    record = read_season(folder)
    settings = settings_of(record)
    ratings = _table(folder, "ratings.csv")
    field = [str(s) for s in record["field"]]
    learned = [n for n in field if str(record["entrants"][n]["source"]).startswith("file:")]
    elo = dict(zip(ratings["system"].astype(str), ratings["elo"].astype(float), strict=True))
    ranked = sorted(learned, key=lambda n: -elo.get(n, float("-inf")))
    if base is None:
        if not ranked:
            raise TournamentError(f"season {str(folder)!r}: no member was entered as a System "
                                  "file (a learner); name the base team with --base")  # fmt: skip
        base = ranked[0]
    if base not in field:
        raise TournamentError(f"base: {base!r} is not a member of the field {field}")
    strangers = [n for n in ranked if n != base]
    unknown = [n for n in opponents if n not in field]
    if unknown:
        raise TournamentError(f"opponents: {unknown[0]!r} is not a member of the field {field}")
    against = list(opponents) or field
    systems = {n: member_system(folder, n) for n in dict.fromkeys([base, *strangers, *against])}
    play: dict[str, Any] = {
        "maps": list(settings.maps), "games_per_map": games_per_map or 2 * settings.pairs_per_map,
        "batch_size": batch_size or settings.batch_size, "tick_limit": settings.tick_limit,
        "progress": progress,
    }  # fmt: skip
    if settings.winning_score is not None:
        play["winning_score"] = settings.winning_score
    if classes is not None:  # else every class
        play["classes"] = classes
    try:
        table, _ = ev_zero_shot(
            systems[base], [systems[n] for n in strangers], [systems[n] for n in against],
            bootstrap=bootstrap, seed=int(record["root_seed"]), **play,
        )  # fmt: skip
    except EvalError as err:
        raise TournamentError(f"season {str(folder)!r}: {err}") from None
    table["stranger_elo"] = [elo.get(s, float("nan")) for s in table["stranger"]]
    table = table.loc[:, list(ZERO_SHOT_COLUMNS)]
    title = f"Season {record.get('season', '')}"
    return table, *_publish(folder, table, ZERO_SHOT_TABLE, ZERO_SHOT_CHART,
                            lambda path: plot_zero_shot(table, path, title=title))  # fmt: skip
