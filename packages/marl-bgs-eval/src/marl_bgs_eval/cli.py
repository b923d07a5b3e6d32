"""The `marl-bgs-eval` command line: play two Systems, rate results files, show the leaderboard,
check the rating intervals' coverage."""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.table import Table

from marl_bgs_eval import console as ui
from marl_bgs_eval.console import fail
from marl_bgs_eval.errors import EvalError

if TYPE_CHECKING:  # imported where a command runs, so --help needs neither JAX nor pandas
    import pandas as pd

app = ui.App(
    "marl-bgs-eval", help="Evaluate MARL-BattleGrounds Systems and rate them.", no_args_is_help=True
)
console = ui.out
Plugins = Annotated[
    list[str] | None, typer.Option("--plugin", help="Module that registers Systems")
]


def load_plugins(modules: list[str] | None) -> None:
    """Import each `--plugin` module (they register Systems); a failure ends the command."""
    for name in modules or []:
        try:
            importlib.import_module(name)
        except (ImportError, ValueError, TypeError) as err:  # "" and ".x" raise these two
            fail(EvalError(f"--plugin: cannot import {name!r}: {err}"))


def summarize(games: pd.DataFrame) -> pd.DataFrame:
    """Per map: games, distinct games (`distinct`: a game that repeats another's trajectory
    counts once), results, the means of the mode's summary columns (Team Deathmatch: points)
    and of the ticks."""
    import pandas as pd

    from marl_bgs_eval.distinct import repeated
    from marl_bgs_eval.modes import parts
    from marl_bgs_eval.results import mode_of

    means = [*parts(mode_of(games)).summary, "ticks"]
    rows = []
    games = games.assign(_repeat=repeated(games))
    for name, g in games.groupby("map_name", sort=False):
        result = cast(pd.Series, g["result"])
        rows.append(
            {
                "map": name,
                "games": len(g),
                "distinct": int((~cast(pd.Series, g["_repeat"])).sum()),
                "wins": int((result == "win").sum()),
                "draws": int((result == "draw").sum()),
                "losses": int((result == "loss").sum()),
                **{c: float(cast(pd.Series, g[c]).mean()) for c in means},
            }
        )
    return pd.DataFrame(rows)


@app.command()
def play(
    system_a: Annotated[str, typer.Argument(help="Team A's System name")],
    system_b: Annotated[
        str | None,
        typer.Argument(help="Team B's System name (none for a mode that plays team B itself)"),
    ] = None,
    mode: ui.Mode = "tdm",
    maps: Annotated[
        str | None,
        typer.Option(
            help="The mode's layouts: 47,48, 0-39, a split, all, names; .json map files "
            "(default: the test split, or all layouts of a mode without one)"
        ),
    ] = None,
    split: Annotated[str | None, typer.Option(help="Require maps from this split")] = None,
    games_per_map: Annotated[int, typer.Option(help="Games per map (even)")] = 40,
    seed: Annotated[int, typer.Option(help="Root seed")] = 0,
    batch_size: Annotated[int, typer.Option(help="Games played at once")] = 128,
    metrics: Annotated[str, typer.Option(help="none, priority or full")] = "priority",
    tick_limit: Annotated[
        int | None, typer.Option(help="End a game after this many ticks (default: the mode's)")
    ] = None,
    winning_score: Annotated[
        int | None, typer.Option(help="Points that win (Team Deathmatch; default 20)")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Save results: a .parquet or .csv file, or a folder (results.parquet)"),
    ] = None,
    replays: Annotated[
        int, typer.Option(min=0, help="Record the first N games as replays (needs --out)")
    ] = 0,
    resume: Annotated[
        bool, typer.Option(help="Finish an interrupted run from its journal next to --out")
    ] = False,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out file")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar")] = True,
    plugin: Plugins = None,
) -> None:
    """Play SYSTEM_A (team A) against SYSTEM_B in --mode and print the results per map (a
    mode that plays team B itself, such as two-bridge, takes no SYSTEM_B).

    With --out, every finished game is written at once to a journal beside the results file;
    if the run stops, the same command with --resume plays only the games still missing.
    """
    from marl_bgs_eval.progress import note

    # What needs no JAX is checked first, so these mistakes are answered at once.
    if replays and out is None:
        fail(EvalError("replays: needs --out (replays are saved beside the results)"))
    if resume and out is None:
        fail(EvalError("resume: needs --out (the journal lives beside the results file)"))
    refs = None if maps is None else ui.layouts(maps, mode, files=True)
    from marl_bgs import kit

    teams_of_mode = kit(mode).controlled_teams
    if (system_b is None) != (teams_of_mode == 1):
        fail(EvalError(
            f"system_b: mode {mode} has {teams_of_mode} team(s) for Systems to play; name "
            f"{'team B' if teams_of_mode == 2 else 'no team B'}"
        ))  # fmt: skip
    label = system_a if system_b is None else f"{system_a} vs {system_b}"
    if progress:
        note(f"{label}: setting up (the first batch also compiles)")
    from marl_bgs import ConfigError
    from marl_bgs_eval.distinct import distinct_games, repeats_lines
    from marl_bgs_eval.evaluate import as_system, evaluate
    from marl_bgs_eval.journal import Journal, journal_path
    from marl_bgs_eval.results import check_path, save

    load_plugins(plugin)
    journal, earlier, replay_dir = None, None, None
    try:
        if out is not None:
            out, replay_dir = _outputs(out)
            out = check_path(out, overwrite=overwrite or resume)
            journal = Journal(journal_path(out))
            if journal.path.exists() and not resume:
                raise EvalError(
                    f"out: {journal.path} holds games of an unfinished run; add --resume to "
                    "finish it, or delete it to start again"
                )
            earlier, dropped = journal.read() if resume else (None, 0)
            if dropped:
                console.print(f"dropped {dropped} cut line from {journal.path} (replayed)")
            if earlier is not None:
                console.print(f"resuming: {len(earlier)} games already played")
        names = (system_a,) if system_b is None else (system_a, system_b)
        teams = tuple(as_system(n, f"team_{t}", mode) for n, t in zip(names, "ab", strict=False))
        rules = {"tick_limit": tick_limit, "winning_score": winning_score}
        games = evaluate(
            *teams,
            mode=mode,
            maps=refs,
            split=split,
            games_per_map=games_per_map,
            seed=seed,
            batch_size=batch_size,
            metrics=metrics,
            progress=progress,
            on_games=None if journal is None else journal.append,
            resume=earlier,
            **{k: v for k, v in rules.items() if v is not None},
        )
        if out is not None and journal is not None:
            save(games, out)
            journal.remove()
        if replays and replay_dir is not None:
            _record(system_a, system_b, games, replays, replay_dir, refs, tick_limit)
    except (EvalError, ConfigError) as err:
        fail(err)
    except BaseException:
        if journal is not None and journal.path.exists():
            console.print(
                f"stopped: the finished games are kept in {journal.path}; run the same command "
                "with --resume to play the rest"
            )
        raise
    teams_text = f"{system_a} (A)" + ("" if system_b is None else f" vs {system_b} (B)")
    title = f"{teams_text}, seed {seed}: {len(games)} games, {distinct_games(games)} distinct"
    console.print(ui.table(summarize(games), title))
    console.print(
        "distinct: games whose trajectories (accepted actions, tick by tick) differ; mirror "
        "images and replays count once"
    )
    for line in repeats_lines(games):
        console.print(line, highlight=False)
    if out is not None:
        console.print(f"saved {len(games)} games to {out}")
    _usage(teams, games, out)


def _usage(teams: tuple[Any, ...], games: pd.DataFrame, out: Path | None) -> None:
    """Print the usage statistics of host Systems that keep them (LLM teams) and, with an
    output file, save their per-game table beside it (`<name>-usage-a.parquet`)."""
    import pandas as pd

    for team, s in enumerate(teams):
        if s.usage is None:
            continue
        row = s.usage.summary().drop(columns=["system"]).iloc[0]
        values = [f"{int(v):,}" if float(v).is_integer() else f"{v:.3g}" for v in row]
        shown = pd.DataFrame({"measure": row.index, "value": values})
        console.print(ui.table(shown, f"usage of {s.name} (team {'AB'[team]})"))
        if out is not None:
            path = out.with_name(f"{out.stem}-usage-{'ab'[team]}{out.suffix}")
            table = s.usage.per_game(games, team)
            table.to_csv(path, index=False) if path.suffix == ".csv" else table.to_parquet(path)
            console.print(f"saved usage per game to {path}")


def _outputs(out: Path) -> tuple[Path, Path]:
    """The results file and the replay folder of `--out`: a .parquet/.csv file (replays beside
    it in <name>-replays/) or a folder (created; results.parquet and replays/ inside)."""
    if out.suffix in (".parquet", ".csv"):
        return out, out.with_name(f"{out.stem}-replays")
    if out.suffix or (out.exists() and not out.is_dir()):
        raise EvalError(
            f"out: expected a .parquet or .csv file, or a folder (a name without a suffix); "
            f"got {str(out)!r}"
        )
    if not out.parent.is_dir():
        raise EvalError(f"out: folder {str(out.parent)!r} does not exist")
    out.mkdir(exist_ok=True)
    return out / "results.parquet", out / "replays"


def _record(
    system_a: str, system_b: str | None, games: pd.DataFrame, n: int, folder: Path,
    maps: list[int | str] | None, tick_limit: int | None,
) -> None:  # fmt: skip
    """Record the first `n` games (by game number) and save one replay file per game."""
    from marl_bgs_eval import replay_files
    from marl_bgs_eval.game_replays import record_games
    from marl_bgs_eval.progress import note

    picked = games.sort_values("game").head(n)
    note(f"recording {len(picked)} replay(s)")
    limit = {} if tick_limit is None else {"tick_limit": tick_limit}
    recorded = record_games(system_a, system_b, picked, maps=maps, **limit)
    folder.mkdir(exist_ok=True)
    for r in recorded:
        replay_files.save(r, folder / f"game-{r.header['game']}.replay.zip")
    console.print(f"saved {len(recorded)} replay(s) to {folder}")


def _rated(
    files: list[Path], bootstrap: int, seed: int, integrity: bool, scheme: str
) -> tuple[pd.DataFrame, list[str]]:
    """The ratings table of the files' games and the lines printed under it."""
    from marl_bgs_eval.distinct import interval_notes, repeats_lines
    from marl_bgs_eval.ratings import rate as rate_games
    from marl_bgs_eval.resampling import check_scheme
    from marl_bgs_eval.results import combine, load

    scheme = check_scheme(scheme)
    games = combine([(str(f), load(f, check_integrity=integrity)) for f in files])
    table = rate_games(games, bootstrap=bootstrap, seed=seed, scheme=scheme)
    marks = ["yes" if r else "" for r in table["repeats"].tolist()]
    notes = [*interval_notes(table, bootstrap, scheme), *repeats_lines(games)]
    return table.assign(repeats=marks), notes


Files = Annotated[list[Path], typer.Argument(help="Results files (.parquet or .csv)")]
Boot = Annotated[int, typer.Option(help="Resampled refits for the 95% intervals")]
Seed = Annotated[int, typer.Option(min=0, help="Seed of the resampling")]
Integrity = Annotated[
    bool, typer.Option(help="Require each file's game count and checksum (written by save)")
]
Scheme = Annotated[
    str,
    typer.Option(
        "--bootstrap-scheme",
        help="pairs: resample spawn-swapped pairs within pairing and map (the rulebook's); "
        "maps: resample the maps, then pairs within each",
    ),
]


def _notes(lines: list[str]) -> None:
    for line in lines:
        console.print(line, highlight=False)


@app.command()
def rate(
    files: Files, bootstrap: Boot = 5000, seed: Seed = 0, integrity: Integrity = True,
    bootstrap_scheme: Scheme = "pairs",
) -> None:  # fmt: skip
    """Fit Elo ratings (Bradley-Terry-Davidson) with 95% intervals to results files."""
    r, notes = _rated(files, bootstrap, seed, integrity, bootstrap_scheme)
    cols = ["rank", "system", "elo", "elo_low", "elo_high", "games", "distinct_games", "repeats"]
    cols += ["wins", "draws", "losses"]
    console.print(ui.table(r[cols], f"Elo (mean 1,200), draw nu = {r.attrs['nu']:.3f}"))
    _notes(notes)


@app.command()
def leaderboard(
    files: Files, bootstrap: Boot = 5000, seed: Seed = 0, integrity: Integrity = True,
    bootstrap_scheme: Scheme = "pairs",
) -> None:  # fmt: skip
    """The leaderboard: rank, tier and division, Elo with interval, win chance vs average."""
    r, notes = _rated(files, bootstrap, seed, integrity, bootstrap_scheme)
    r = r.assign(win_chance=(100 * r["win_chance"]).round(1))
    cols = ["rank", "system", "tier", "elo", "elo_low", "elo_high", "win_chance", "games"]
    console.print(ui.table(r[[*cols, "distinct_games", "repeats"]], "Leaderboard"))
    _notes(notes)


@app.command()
def calibrate(
    tournaments: Annotated[int, typer.Option(min=1, help="Synthetic tournaments per size")] = 500,
    bootstrap: Boot = 1000,
    seed: Seed = 0,
    sizes: Annotated[
        str, typer.Option(help="Games per pairing, comma-separated (multiples of 10: 5 maps)")
    ] = "40,200",
    methods: Annotated[
        str, typer.Option(help="Resampling methods, comma-separated: rescaled, plain, maps")
    ] = "rescaled,plain,maps",
    out: Annotated[Path | None, typer.Option(help="Also save the table (.csv or .parquet)")] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar")] = True,
) -> None:
    """Coverage of the 95% Elo intervals on synthetic Season 0 tournaments with known ratings,
    for the rescaled bootstrap (what rate uses), the plain one and the maps scheme."""
    import pandas as pd

    from marl_bgs_eval.calibration import coverage_study
    from marl_bgs_eval.results import check_path

    try:
        per_pairing = [int(t) for t in sizes.split(",")]
    except ValueError:
        fail(EvalError(f"--sizes: expected games per pairing like 40,200, got {sizes!r}"))
    start = time.perf_counter()
    if out is not None:
        out = check_path(out)
    table = coverage_study(tournaments, bootstrap, seed, per_pairing,
                           methods=methods.split(","), progress=progress)  # fmt: skip
    seconds = time.perf_counter() - start
    shown = pd.DataFrame(
        {
            "games/pairing": table["games_per_pairing"],
            "method": table["method"],
            "intervals": table["intervals"],
            "coverage %": 100 * table["coverage"],
            "95% CI": [f"{100 * lo:.1f}-{100 * hi:.1f}" for lo, hi in
                       zip(table["coverage_low"], table["coverage_high"], strict=True)],
            "mean width": table["mean_width"],
            "fit RMSE": table["rmse"],
        }
    )  # fmt: skip
    title = (
        f"Coverage of the 95% Elo intervals: {tournaments} tournaments per size, "
        f"{bootstrap} refits, {100 * table.attrs['draw_share']:.1f}% draws"
    )
    console.print(ui.table(shown, title))
    console.print(f"took {seconds:.0f} s")
    if out is not None:
        table.to_csv(out, index=False) if out.suffix == ".csv" else table.to_parquet(out)
        console.print(f"saved the table to {out}")


@app.command()
def metrics(
    query: Annotated[str | None, typer.Argument(help="Text to find in names and meanings")] = None,
    mode: ui.Mode = "tdm",
    doc: Annotated[
        Path | None, typer.Option(help="Write the metrics page (docs/metrics.md)")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, help="Rows to show")] = 40,
    plain: Annotated[
        bool, typer.Option(help="Print every matching name, one per line, and nothing else")
    ] = False,
) -> None:
    """Search the metric columns (column, level, topic, unit, meaning); --doc writes the page.
    Names are shown whole (folded over lines on a narrow terminal); --plain lists them for
    copying or a pipe."""
    from marl_bgs_eval.modes import parts, search_schema

    if doc is not None:
        page = parts(mode).metric_page()
        if page is None:
            fail(EvalError(f"doc: mode {mode} has no metrics page"))
        doc.write_text(page, encoding="utf-8")
        console.print(f"wrote {doc}")
        return
    schema = parts(mode).metric_schema()
    found = schema if query is None else search_schema(schema, query)
    if plain:
        typer.echo("\n".join(found["column"]))
        return
    title = f"{len(found)} metric column(s)" + ("" if query is None else f" matching {query!r}")
    if len(found) > limit:
        title += f"; the first {limit} (--limit)"
    console.print(_metric_table(found.head(limit), title, console.width))


def _metric_table(found: pd.DataFrame, title: str, width: int) -> Table:
    """Metric columns with their names whole: on one line when the terminal has room (the rest
    wraps), else folded over lines; never cut with an ellipsis."""
    longest = max((len(c) for c in found["column"]), default=0)
    table = Table(title=title)
    if width >= longest + 60:  # the other four columns keep about 44 characters
        table.add_column("column", no_wrap=True, width=longest)
    else:
        table.add_column("column", overflow="fold")
    for col in ("level", "topic", "unit", "meaning"):
        table.add_column(col)
    for row in found[["column", "level", "topic", "unit", "meaning"]].itertuples(index=False):
        table.add_row(*(str(v) for v in row))
    return table


@app.command()
def scenarios(
    system: Annotated[str, typer.Argument(help="Team A's System name")],
    games: Annotated[int, typer.Option(help="Games per scenario (even)")] = 256,
    seed: Annotated[int, typer.Option(min=0, help="Root seed")] = 20261006,
    only: Annotated[str | None, typer.Option(help="Scenario ids, comma-separated")] = None,
    batch_size: Annotated[int, typer.Option(help="Games played at once")] = 128,
    progress: Annotated[bool, typer.Option(help="Show a progress bar")] = True,
    plugin: Plugins = None,
) -> None:
    """Play SYSTEM as team A in the endgame scenarios; compare its wins with random play's."""
    from marl_bgs_eval import evaluate_scenarios

    load_plugins(plugin)
    try:
        chosen = None if only is None else [int(x) for x in only.split(",") if x.strip()]
    except ValueError:
        fail(EvalError(f"only: expected scenario ids like 3,6, got {only!r}"))
    table = evaluate_scenarios(
        system, n_games=games, seed=seed, scenarios=chosen, batch_size=batch_size,
        progress=progress,
    )  # fmt: skip
    shown = table.assign(p_value=table["p_value"].map(lambda p: f"{p:.3g}"))
    cols = ["scenario", "challenge", "opponent", "wins", "draws", "losses", "distinct",
            "distinct_wins", "reference_distinct_wins", "p_value"]  # fmt: skip
    console.print(ui.table(shown[cols], f"{system} as team A, {games} games per scenario"))


@app.command()
def systems(plugin: Plugins = None) -> None:
    """List the registered System names."""
    from marl_bgs_eval import registry

    load_plugins(plugin)
    for name in registry.names():
        console.print(name)


def main() -> None:  # pragma: no cover - the console script
    app()
