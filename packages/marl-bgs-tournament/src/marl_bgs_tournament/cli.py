"""The `marl-bgs-tournament` command line: export, check, schedule, season, challenge, teamwork,
zero-shot, release, season0, serve."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

import marl_bgs_eval as ev  # its names import on first use
from marl_bgs_eval import console as ui
from marl_bgs_eval.cli import Plugins, load_plugins
from marl_bgs_tournament.errors import TournamentError

if TYPE_CHECKING:  # imported where a command runs, so --help needs neither JAX nor pandas
    import pandas as pd

    from marl_bgs_tournament import season as seasons

app = ui.App("marl-bgs-tournament", errors=(TournamentError,),
             help="Run MARL-BattleGrounds tournament seasons.", no_args_is_help=True)  # fmt: skip
console = ui.out

# The documented reduced size of `season --size reduced` (docs/tournament.md): every test map, two
# spawn-swapped pairs per map, short games; minutes on a CPU instead of a GPU's full season. These
# settings replace those of the full size (`season.Settings()`).
REDUCED: dict[str, Any] = {"pairs_per_map": 2, "tick_limit": 120, "winning_score": 5,
                           "batch_size": 16, "bootstrap": 1000, "replays": 2}  # fmt: skip


def _map_ids(text: str, field: str, mode: str = "tdm") -> list[int]:
    """`--maps`-like text through the mode's layout grammar (`47,48`, `0-39`, a split name,
    `all`, names); or `none`."""
    return [] if text.strip() == "none" else ui.layouts(text, mode, field)


def _batch_sizes(text: str) -> list[int]:
    """`--batch-sizes` text (`1,16,128,512`) as sizes."""
    try:
        return [int(b) for b in text.split(",")]
    except ValueError:
        raise TournamentError(
            f"batch_sizes: expected sizes like '1,16,128,512', got {text!r}"
        ) from None


@app.command()
def export(
    system: Annotated[
        str, typer.Argument(help="A registered System name (e.g. tdm-beta, ckpt:RUN)")
    ],
    out: Annotated[Path, typer.Option(help="The System file to write (*.mbgs)")],
    team: Annotated[str, typer.Option(help="The submitting team")],
    name: Annotated[
        str | None, typer.Option(help="The entrant's name (default: the System's)")
    ] = None,
    trained_on_maps: Annotated[
        str | None, typer.Option(help="Maps training used: '0-39', a split name, or 'none'")
    ] = None,
    trained_on_scenarios: Annotated[
        list[str] | None, typer.Option(help="Scenarios training used")
    ] = None,
    batch_sizes: Annotated[str, typer.Option(help="Batch sizes to compile for")] = "1,16,128,512",
    plugin: Plugins = None,
) -> None:
    """Export a pure-JAX System to a portable file (programs and weights, no Python)."""
    from marl_bgs_tournament import portable

    load_plugins(plugin)
    try:
        if out.suffix != portable.SUFFIX:
            raise TournamentError(f"out: expected a {portable.SUFFIX} file, got {str(out)!r}")
        training, sys = None, ev.get_system(system)
        if trained_on_maps is not None:
            training = {"maps": _map_ids(trained_on_maps, "--trained-on-maps", sys.mode),
                        "scenarios": list(trained_on_scenarios or [])}  # fmt: skip
        manifest = portable.export_system(sys, out, team=team, name=name, training=training,
                                          batch_sizes=_batch_sizes(batch_sizes))  # fmt: skip
    except ValueError as err:  # the export's own refusals too (all are ValueErrors)
        ui.fail(err)
    console.print(f"wrote {out} ({out.stat().st_size:,} bytes): {manifest['name']} of team "
                  f"{manifest['team']}, mode {manifest['mode']}, batch sizes "
                  f"{manifest['batch_sizes']}")  # fmt: skip


@app.command()
def check(
    file: Annotated[Path, typer.Argument(help="A System file (*.mbgs)")],
    tick_limit: Annotated[
        int | None, typer.Option(help="Ticks of the full_games check (the rulebook's 300)")
    ] = None,
) -> None:
    """Run the rulebook's automated checks on a System file in the sandbox (a child process
    under the rulebook's time and memory limits); exit 1 if one fails or a limit ends it."""
    from marl_bgs_tournament import portable, rulebook, sandbox
    from marl_bgs_tournament import season as seasons

    try:
        manifest = portable.read_manifest(file)
        ticks = rulebook.TICK_LIMIT if tick_limit is None else tick_limit
        report = sandbox.check_file(file, tick_limit=ticks, progress=True)
    except sandbox.RefusedError as err:  # a verdict on the file, not an input error
        console.print(f"[red]refused:[/red] {escape(err.reason)}", highlight=False)
        raise typer.Exit(code=1) from None
    console.print(ui.table(report, f"Rulebook {seasons.RULEBOOK}: {manifest['name']}"))
    if not bool(report["passed"].all()):
        raise typer.Exit(code=1)


@app.command("schedule")
def show_schedule(
    field: Annotated[list[str], typer.Option(help="Field members in seat order (repeat)")],
    challenger: Annotated[str | None, typer.Option(help="Also a challenger's blocks")] = None,
    pairs_per_map: Annotated[
        int | None, typer.Option(help="Spawn-swapped pairs per map (default: the rulebook's)")
    ] = None,
    mode: ui.Mode = "tdm",
) -> None:
    """Print the numbered blocks of games: the field's round robin, then a challenger's."""
    import pandas as pd

    from marl_bgs_tournament import modes, schedule

    pairs_per_map = schedule.PAIRS_PER_MAP if pairs_per_map is None else pairs_per_map
    maps = modes.season_layouts(mode)
    n = len(maps)
    plan = schedule.field_schedule(field, n, pairs_per_map)
    if challenger:
        plan = pd.concat([plan, schedule.challenger_schedule(challenger, field, n,
                                                             pairs_per_map)])  # fmt: skip
    console.print(ui.table(plan, f"Schedule on maps {list(maps)}"))


SIZES = ("auto", "reduced", "full")


def _settings(size: str, overrides: dict[str, Any]) -> seasons.Settings:
    """The base size (auto: reduced on a CPU, full on an accelerator) with `overrides`."""
    import jax

    from marl_bgs_tournament import season as seasons

    if size not in SIZES:
        raise TournamentError(f"size: expected one of {list(SIZES)}, got {size!r}")
    if size == "auto":
        size = "reduced" if jax.default_backend() == "cpu" else "full"
    base = REDUCED if size == "reduced" else {}
    given = {k: v for k, v in overrides.items() if v is not None}
    if "maps" in given:
        given["maps"] = tuple(_map_ids(given["maps"], "--maps", given.get("mode", "tdm")))
    return seasons.Settings(**{**base, **given, "progress": True})


SeasonOut = Annotated[Path, typer.Option(help="The season folder to write (new or empty)")]
Size = Annotated[str, typer.Option(help="auto (reduced on a CPU, full on a GPU), reduced or full")]
Maps = Annotated[str | None, typer.Option(help="Maps: 47,48, 0-39, a split name (default: test)")]
PairsPerMap = Annotated[int | None, typer.Option(help="Spawn-swapped pairs per map")]
TickLimit = Annotated[int | None, typer.Option(help="Draw at this tick")]
WinningScore = Annotated[int | None, typer.Option(help="First to this many kills wins")]
BatchSize = Annotated[int | None, typer.Option(help="Games at once")]
Bootstrap = Annotated[int | None, typer.Option(help="Refits for the Elo intervals")]
Replays = Annotated[int | None, typer.Option(help="Games to record as replays")]
RootSeed = Annotated[int | None, typer.Option(help="Root seed (default: drawn, published)")]
Checks = Annotated[
    str | None, typer.Option(help="Rulebook checks of System files, comma-separated (all)")
]


@app.command()
def season(
    field: Annotated[
        list[str], typer.Option(help="A member: a registered name or a System file (repeat)")
    ],
    out: SeasonOut,
    size: Size = "auto",
    maps: Maps = None,
    pairs_per_map: PairsPerMap = None,
    tick_limit: TickLimit = None,
    winning_score: WinningScore = None,
    batch_size: BatchSize = None,
    bootstrap: Bootstrap = None,
    bootstrap_scheme: Annotated[
        str | None,
        typer.Option(
            help="pairs (the rulebook's): resample pairs within pairing and map; "
            "maps: resample the maps, then pairs within each"
        ),
    ] = None,
    replays: Replays = None,
    root_seed: RootSeed = None,
    checks: Checks = None,
    mode: ui.Mode = "tdm",
    plugin: Plugins = None,
) -> None:
    """Play a season's round robin and publish its folder (ratings, games, measures, replays)."""
    import pandas as pd

    from marl_bgs_tournament import season as seasons

    load_plugins(plugin)
    settings = _settings(size, {
        "maps": maps, "pairs_per_map": pairs_per_map, "tick_limit": tick_limit,
        "winning_score": winning_score, "batch_size": batch_size, "bootstrap": bootstrap,
        "bootstrap_scheme": bootstrap_scheme, "replays": replays,
        "checks": None if checks is None else tuple(c for c in checks.split(",") if c),
        "mode": mode,
    })  # fmt: skip
    record = seasons.run_season(field, out, settings, root_seed=root_seed)
    ratings = pd.read_csv(out / "ratings.csv")
    from marl_bgs_eval import results

    ratings["repeats"] = ["yes" if r else "" for r in ratings["repeats"].tolist()]
    cols = ["rank", "system", "team", "elo", "elo_low", "elo_high", "tier", "wins", "draws",
            "losses", "distinct_games", "repeats"]  # fmt: skip
    console.print(ui.table(ratings.loc[:, cols], f"Season {record['season']} (root seed "
                                        f"{record['root_seed']})"))  # fmt: skip
    _notes(record, ratings, results.load(out / "games.parquet"))
    _show_tokens(record["tokens"])
    console.print(f"season folder: {out}  (serve it: marl-bgs-tournament serve {out})")


def _show_tokens(tokens: dict[str, str]) -> None:
    """Each new team token, once: it is stored nowhere in clear."""
    for team, token in tokens.items():
        console.print(f"team {team}: token {token}", highlight=False, markup=False)
    if tokens:
        console.print("Keep each token and give it to its team: it is shown only now, and every "
                      "later entry of that team needs it (--token).")  # fmt: skip


def _notes(record: dict[str, Any], ratings: pd.DataFrame, games: pd.DataFrame) -> None:
    """Under a ratings table: where the intervals' width comes from, what a zero width means
    (when one is), and every pairing whose games repeat."""
    from marl_bgs_eval.distinct import interval_notes, repeats_lines

    scheme = str(record.get("bootstrap_scheme", "pairs"))
    for line in [*interval_notes(ratings, record["bootstrap"], scheme), *repeats_lines(games)]:
        console.print(line, highlight=False, markup=False)


@app.command()
def challenge(
    folder: Annotated[Path, typer.Argument(help="A season folder")],
    entrant: Annotated[str, typer.Argument(help="A System file (*.mbgs) or a registered name")],
    team: Annotated[
        str | None, typer.Option(help="The submitting team (default: the file's)")
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="MARL_BGS_TEAM_TOKEN",
            help="Your team's token: printed when the team's first entry was accepted (a new "
            "team gives none and is issued one)",
        ),
    ] = None,
    root_seed: Annotated[int | None, typer.Option(help="Root seed (default: drawn now)")] = None,
    plugin: Plugins = None,
) -> None:
    """Play a challenger against the field; admit it if its Elo beats the lowest member's."""
    import pandas as pd

    from marl_bgs_eval import results
    from marl_bgs_tournament import season as seasons

    load_plugins(plugin)
    d = seasons.challenge(folder, entrant, team=team, token=token, root_seed=root_seed,
                          progress=True)  # fmt: skip
    verdict = f"admitted (replaces {d['leaves']})" if d["admitted"] else "not admitted"
    elo = f"Elo {d['elo']:.0f} [{d['elo_low']:.0f}, {d['elo_high']:.0f}]"
    lowest = f"lowest member {d['lowest_member']} {d['lowest_elo']:.0f}"
    console.print(f"{d['name']}: {elo} vs {lowest}: {verdict}")
    mine = folder / "challengers" / d["name"]
    record = seasons.read_season(folder)
    _notes(record, pd.read_csv(mine / "ratings.csv"), results.load(mine / "games.csv"))
    _show_tokens({d["team"]: d["token"]} if d["token"] else {})


@app.command()
def teamwork(
    folder: Annotated[Path, typer.Argument(help="A season folder")],
    orderings: Annotated[
        int | None,
        typer.Option(help="Random orderings of the ratings for fields over 10 Systems (100,000)"),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of those orderings")] = 0,
    team_measures: Annotated[
        bool,
        typer.Option(help="Also screen every team-level measure of the games (full metrics)"),
    ] = True,
) -> None:
    """The teamwork screen: every team measure against the field's Elo (Spearman's rho, exact p,
    Holm and Westfall-Young max-t), written to FOLDER/studies/teamwork.csv and .png."""
    from marl_bgs_tournament import studies

    table, csv, png = studies.teamwork(folder, orderings=orderings, seed=seed,
                                       team_measures=team_measures)  # fmt: skip
    shown = table.loc[table["varies"].to_numpy(bool)].sort_values(by="p")
    cols = ["measure", "rho", "p", "p_holm", "p_maxt", "systems"]
    console.print(ui.table(shown.loc[:, cols], "Teamwork screen", floats=".3g"))
    console.print(f"wrote {csv} and {png}")


@app.command()
def release(
    population: Annotated[
        Path, typer.Argument(help="A population folder (marl-bgs-train population)")
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            help="The release folder (default: where pop: names look, "
            "$MARL_BGS_POPULATION or ~/.local/share/marl-bgs/population)"
        ),
    ] = None,
    batch_sizes: Annotated[str, typer.Option(help="Batch sizes to compile for")] = "1,16,128,512",
) -> None:
    """Release a trained population: each learner's best checkpoint and its milestone one as
    System files with their training records (release.json), usable as pop:<member>."""
    from marl_bgs_tournament import population as pop

    index = pop.release(population, out, batch_sizes=_batch_sizes(batch_sizes))
    folder = pop.user_folder() if out is None else out
    rows = [{"member": f"pop:{m}", "kind": e["record"]["kind"], "steps": e["record"]["steps"],
             "seed": e["record"]["seed"], "bytes": e["bytes"]}
            for m, e in index["members"].items()]  # fmt: skip
    import pandas as pd

    console.print(ui.table(pd.DataFrame(rows), f"Population ({index['budget']}) in {folder}"))
    if out is not None:
        console.print(f"pop: names read it with MARL_BGS_POPULATION={out}")


@app.command()
def wheel(
    release_folder: Annotated[
        Path, typer.Argument(help="A release folder (marl-bgs-tournament release)")
    ],
    out: Annotated[Path, typer.Option(help="Where the wheel goes")] = Path("dist"),
    version: Annotated[
        str | None, typer.Option(help="The wheel's version (default: this package's)")
    ] = None,
) -> None:
    """Build the release as the data wheel marl-bgs-population: pip install it and pop: names
    find the population without MARL_BGS_POPULATION."""
    from marl_bgs_tournament.population_wheel import build_wheel

    built = build_wheel(release_folder, out, version)
    console.print(f"built {built} ({built.stat().st_size:,} bytes)", soft_wrap=True)
    console.print(f"install it: pip install {built}", soft_wrap=True)


@app.command()
def season0(
    out: SeasonOut,
    population: Annotated[
        Path | None,
        typer.Option(help="A release folder (default: where pop: names look)"),
    ] = None,
    size: Size = "auto",
    maps: Maps = None,
    pairs_per_map: PairsPerMap = None,
    tick_limit: TickLimit = None,
    winning_score: WinningScore = None,
    batch_size: BatchSize = None,
    bootstrap: Bootstrap = None,
    replays: Replays = None,
    root_seed: RootSeed = None,
    checks: Checks = None,
) -> None:
    """Season 0: the Big Nine (the released population's six learners, each its best
    checkpoint, and the three scripted teams) in a round robin on the test maps at rulebook v1
    (the full size on a GPU, the documented reduced size on a CPU), published as a season
    folder."""
    from marl_bgs_tournament import population as pop

    season(field=pop.big_nine(population), out=out, size=size, maps=maps,
           pairs_per_map=pairs_per_map, tick_limit=tick_limit, winning_score=winning_score,
           batch_size=batch_size, bootstrap=bootstrap, replays=replays, root_seed=root_seed,
           checks=checks)  # fmt: skip


@app.command("zero-shot")
def zero_shot(
    folder: Annotated[Path, typer.Argument(help="A season folder")],
    base: Annotated[
        str | None, typer.Option(help="The base team (default: the top-rated learner)")
    ] = None,
    opponent: Annotated[
        list[str] | None,
        typer.Option(help="A field member to play (repeatable; default: the whole field)"),
    ] = None,
    games_per_map: Annotated[
        int | None, typer.Option(help="Games per map and opponent (default: the season's)")
    ] = None,
    classes: Annotated[
        str | None, typer.Option(help="The classes a stranger takes, e.g. MP (default: all)")
    ] = None,
    batch_size: BatchSize = None,
    bootstrap: Annotated[int, typer.Option(help="Resamples of seed pairs for intervals")] = 2000,
) -> None:
    """The zero-shot coordination study: each other learner of the field (and a random agent)
    in each class of the top learner's team, every team against the field, seed-paired with the
    team alone; written to FOLDER/studies/zero_shot.csv and .png."""
    from marl_bgs_tournament import studies

    table, csv, png = studies.zero_shot(folder, base=base, opponents=opponent or [],
                                        games_per_map=games_per_map,
                                        classes=classes, batch_size=batch_size,
                                        bootstrap=bootstrap, progress=True)  # fmt: skip
    cols = ["stranger", "stranger_elo", "class", "games", "margin_change", "low", "high",
            "distance_added"]  # fmt: skip
    console.print(ui.table(table.loc[:, cols], f"Zero-shot coordination: {table['base'].iat[0]}",
                           floats=".2f"))  # fmt: skip
    console.print(f"wrote {csv} and {png}")


def submission_checker(path: Path) -> None:
    """An upload's checks before it is queued: a valid System file for this engine whose
    training is declared and stayed off the test maps and scenarios."""
    from marl_bgs_tournament import portable
    from marl_bgs_tournament.rulebook import training_declared

    manifest = portable.read_manifest(path)
    row = training_declared(manifest)
    if not row.passed:
        raise TournamentError(f"manifest.training: {row.detail}")


def submission_runner(folder: Path, path: Path, team: str, token: str | None) -> None:
    """A queued upload's challenge (the worker runs one at a time) with its team's token."""
    from marl_bgs_tournament import season as seasons

    seasons.challenge(folder, path, team=team, token=token)


@app.command()
def serve(
    folder: Annotated[Path, typer.Argument(help="A season folder")],
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1")] = 8000,
    host: Annotated[str, typer.Option(help="A loopback address only")] = "127.0.0.1",
    submissions: Annotated[bool, typer.Option(help="Accept uploaded System files")] = True,
) -> None:
    """Serve a season folder's leaderboard (and its submission endpoint) on this machine."""
    from marl_bgs_tournament.web import serve as run

    extra: dict[str, Any] = {}
    if submissions:
        extra = {"checker": submission_checker, "runner": submission_runner}
    run(folder, host=host, port=port, **extra)


def main() -> None:  # pragma: no cover - the console script
    app()
