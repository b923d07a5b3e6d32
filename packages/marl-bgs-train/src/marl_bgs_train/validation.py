"""Validation against a panel on the validation maps, and the best checkpoint it picks.

A checkpoint plays every panel member (by default the mode's: Team Deathmatch's scripted teams;
any held-out learned model by its System name, e.g. `ckpt:runs/other`) on the validation layouts
(by default the mode's: Team Deathmatch's maps 42, 43, 44, 46), spawn ends swapped in pairs,
through `marl_bgs_eval.evaluate`. Its score is the margin averaged over the layout x opponent
cells (the mode's `TrainParts.validation_games`: Team Deathmatch's point margin, with kills and
deaths beside it). `validate_run` scores a run's saved
checkpoints, appends them to `validation.csv` and keeps the best one, chosen on this score only,
as a run of its own in `RUN_DIR/best` (so `ckpt:RUN_DIR/best` is a System). Test maps are refused.
A run validated as it trains keeps its settings in `RUN_DIR/validation.json` (`record_settings`),
so that `resume` goes on validating it alike (`read_settings`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

import pandas as pd

import marl_bgs_eval as ev
from marl_bgs import ConfigError
from marl_bgs_train import checkpoints
from marl_bgs_train.config import ValidationSettings, typed
from marl_bgs_train.modes import parts
from marl_bgs_train.runs import keep_copy, kept_update, run_system

VALIDATION_CSV = "validation.csv"
ENV = "env"  # the opponent column's name for the env's own team B
BEST = "best"
SETTINGS_JSON = "validation.json"  # how a run validated as it trains is validated


def settings_for(mode: str, settings: ValidationSettings, game: Any = None) -> ValidationSettings:
    """`settings` with the mode's own layouts (else the layouts of the run's `game` section) and
    panel where they are empty, and greedy play if the mode scores that way (a `ConfigError` for
    a mode without a validation panel)."""
    own = parts(mode).validation
    if own is None:
        raise ConfigError(f"mode: {mode!r} has no validation panel (its training parts name none)")
    maps = settings.maps or own.maps or parts(mode).own_layouts(game)
    return dataclasses.replace(
        settings, maps=maps, panel=settings.panel or own.panel,
        greedy=settings.greedy or own.greedy,
    )  # fmt: skip


def panel_cells(run_dir: str | Path, step: int, settings: ValidationSettings) -> pd.DataFrame:
    """One checkpoint against the panel: a row per (opponent, layout) cell with its games,
    wins, draws, losses and mean margin (and the mean of each measure the mode adds: Team
    Deathmatch's kills and deaths, Two-Bridge's outcome shares); team A is the checkpoint. An
    empty panel is the env's own team B (Two-Bridge's enemies), named `env`. Test layouts are
    refused."""
    config = checkpoints.load_config(run_dir)
    mode = config.mode
    settings = settings_for(mode, settings, config.game)
    parts(mode).check_layouts(settings.maps)
    learner = run_system(run_dir, step, greedy=settings.greedy)
    limit: dict[str, Any] = (
        {} if settings.tick_limit is None else {"tick_limit": settings.tick_limit}
    )
    frames = []
    for opponent in settings.panel or (None,):
        games = ev.evaluate(
            learner, opponent, maps=list(settings.maps), games_per_map=settings.games_per_map,
            seed=settings.seed, metrics="none", batch_size=settings.batch_size, mode=mode,
            **limit,
        )  # fmt: skip
        games["opponent"] = opponent or ENV
        frames.append(parts(mode).validation_games(games))
    games = pd.concat(frames, ignore_index=True)
    for result in ("win", "draw", "loss"):
        games[result] = games["result"] == result
    measures = [c for c in parts(mode).measures if c in games.columns]
    return (
        games.groupby(["opponent", "map"], sort=False)
        .agg(
            games=("game", "size"),
            wins=("win", "sum"),
            draws=("draw", "sum"),
            losses=("loss", "sum"),
            margin=("margin", "mean"),
            **{m: (m, "mean") for m in measures},
        )
        .reset_index()
    )


def score(cells: pd.DataFrame) -> dict[str, float]:
    """A checkpoint's validation row: the mean margin over cells (the score), the mean of each
    measure the mode adds (kills and deaths, outcome shares), W-D-L totals and the mean margin
    against each opponent."""
    fixed = ("opponent", "map", "games", "wins", "draws", "losses", "margin")
    row = {
        "score": float(cast(pd.Series, cells["margin"]).mean()),
        **{m: float(cast(pd.Series, cells[m]).mean()) for m in cells if m not in fixed},
        **{k: int(cast(pd.Series, cells[k]).sum()) for k in ("wins", "draws", "losses")},
    }
    margins = cast(pd.Series, cells.groupby("opponent", sort=False)["margin"].mean())
    for opponent, margin in margins.items():
        row[f"margin_{opponent}"] = float(margin)
    return row


def validate_run(
    run_dir: str | Path, settings: ValidationSettings, steps: list[int] | None = None
) -> pd.DataFrame:
    """Score the run's checkpoints not yet in `validation.csv` (or `steps`), append them, and
    save the best scored checkpoint so far as `RUN_DIR/best`. Returns the whole table."""
    run_dir = Path(run_dir)
    path = run_dir / VALIDATION_CSV
    table = pd.read_csv(path) if path.exists() else pd.DataFrame({"update": []})
    saved = checkpoints.manager(run_dir, keep=None).all_steps()
    todo = [s for s in (steps if steps is not None else saved) if s not in set(table["update"])]
    rows = [{"update": s, **score(panel_cells(run_dir, s, settings))} for s in todo]
    if rows:
        table = pd.concat([table, pd.DataFrame(rows)], ignore_index=True).sort_values("update")
        table["update"] = table["update"].astype(int)
        table.to_csv(path, index=False)
    if len(table):
        _keep_best(run_dir, table)
    return table


def _keep_best(run_dir: Path, table: pd.DataFrame) -> None:
    """Copy the best-scoring checkpoint (earliest on ties) to `RUN_DIR/best` if it changed."""
    best = table.loc[table["score"].idxmax()]
    step = int(best["update"])
    if kept_update(run_dir / BEST) != step:
        keep_copy(run_dir, step, BEST, score=float(best["score"]))


MAX_GAMES_PER_MAP = 100_000  # per layout and opponent: far past any validation's need


def check_settings(
    settings: ValidationSettings, mode: str, game: Any = None,
    names: Mapping[str, str] | None = None,
) -> ValidationSettings:  # fmt: skip
    """`settings` checked for a run of `mode` (a `ConfigError` naming the field as `names` call
    it, else `validation.<field>`): games in spawn-swapped pairs (2 to 100,000), a positive
    batch, a seed in [0, 2**63), known Systems on the panel, the mode's layouts and never a test
    one, and a tick limit the run's `game` section would take (the mode's own check)."""
    name = lambda field: (names or {}).get(field, f"validation.{field}")  # noqa: E731
    games, batch, seed = settings.games_per_map, settings.batch_size, settings.seed
    if not 2 <= games <= MAX_GAMES_PER_MAP or games % 2:
        raise ConfigError(
            f"{name('games_per_map')}: an even number of games from 2 to {MAX_GAMES_PER_MAP:,}, "
            f"got {games}"
        )
    if batch < 1:
        raise ConfigError(f"{name('batch_size')}: a positive number of games, got {batch}")
    if not 0 <= seed < 2**63:
        raise ConfigError(f"{name('seed')}: a non-negative integer below 2**63, got {seed}")
    for system in settings.panel:
        try:
            ev.get_system(system)
        except (ConfigError, ev.EvalError) as err:
            raise ConfigError(f"{name('panel')}: {err}") from None
    own = parts(mode)
    try:
        own.check_layouts(settings.maps)  # empty: the mode's (or the run's) own layouts
    except ConfigError as err:
        raise ConfigError(f"{name('maps')}: {err}") from None
    if settings.tick_limit is not None:
        section = own.settings() if game is None else game
        try:
            own.check(dataclasses.replace(section, tick_limit=settings.tick_limit))
        except ConfigError as err:
            said = str(err).removeprefix("game.tick_limit: ")
            raise ConfigError(f"{name('tick_limit')}: {said}") from None
    return settings


def record_settings(run_dir: str | Path, settings: ValidationSettings | None) -> None:
    """Record how the run is validated as it trains (`RUN_DIR/validation.json`; None: it is
    not, and a record of an earlier run in the folder is removed)."""
    path = Path(run_dir) / SETTINGS_JSON
    if settings is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dataclasses.asdict(settings), indent=2) + "\n")  # tuples: lists


def read_settings(run_dir: str | Path) -> ValidationSettings | None:
    """The settings the run is validated with as it trains (None: it is not), every field
    present and of its type, then `check_settings` against the run's config (a `ConfigError`
    naming the field and the file)."""
    path = Path(run_dir) / SETTINGS_JSON
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError) as err:
        raise ConfigError(f"validation: {path} is not readable JSON ({err})") from None
    config = checkpoints.load_config(run_dir)
    try:
        settings = typed(data, ValidationSettings, "validation")
        return check_settings(settings, config.mode, config.game)
    except ConfigError as err:
        raise ConfigError(f"{err} ({path})") from None


def validating(run_dir: str | Path, settings: ValidationSettings) -> Callable[[int], object]:
    """What validates each checkpoint of the run as it is saved (`train_run`'s `on_save`)."""
    return lambda update: validate_run(run_dir, settings, [update])
