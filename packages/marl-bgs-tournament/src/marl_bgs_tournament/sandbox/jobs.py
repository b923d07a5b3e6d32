"""What the child process does with a submitted program: the rulebook's checks of one System
file, or a season's games between entrants. Runs only inside the child (`sandbox.child`): every
result is written to its working folder for the service to read and check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

import marl_bgs_eval as ev
from marl_bgs_eval import play as play_programs
from marl_bgs_eval import results
from marl_bgs_tournament import matches, rulebook
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable import file_sha256, load_system, read_manifest
from marl_bgs_tournament.sandbox.report import Report

GAMES_FILE = "games.parquet"


def system_of(source: str) -> ev.System:
    """An entrant's System from its source: `builtin:<registered name>`, or
    `file:<sha256>:<path>`, loaded only if the file is still the one the service checked."""
    kind, _, where = source.partition(":")
    if kind == "file":
        sha, _, name = where.partition(":")
        if file_sha256(name) != sha:
            raise TournamentError(f"{Path(name).name}: changed since the service checked it")
        return load_system(Path(name))
    if kind == "builtin":
        return ev.get_system(where)
    raise TournamentError(
        f"source: expected builtin:<name> or file:<sha256>:<path>, got {source[:80]!r}"
    )


def check(job: dict[str, Any], report: Report) -> dict[str, Any]:
    """The rulebook's checks of job["file"]: {"table": rows}."""
    report.phase("loading and vetting the System file")
    path = Path(job["file"])
    manifest = read_manifest(path)
    system = load_system(path)
    table = rulebook.check_entrant(
        system, manifest, checks=tuple(job["checks"]), tick_limit=int(job["tick_limit"]),
        seed=int(job["seed"]), watch=report.tick,
        before=lambda name: report.phase(f"rulebook check {name}"),
    )  # fmt: skip
    return {"table": table.to_dict("records")}


def play(job: dict[str, Any], report: Report) -> dict[str, Any]:
    """The pairings of job["plan"] between job["systems"] (name -> source), saved as
    GAMES_FILE, and replays of the first `job["replays"]` pairings under replays/; also how
    many play programs were built (Systems of one architecture share them)."""
    report.phase("loading the entrants")
    systems = {name: system_of(source) for name, source in job["systems"].items()}
    from marl_bgs_tournament.season import Settings  # (season runs jobs through this package)

    settings = Settings.from_dict(job["settings"])
    plan = pd.DataFrame(job["plan"])

    def before(a: str, b: str, tick_limit: int) -> None:
        report.games(f"{a} vs {b}", tick_limit)
        report.phase(f"compiling and playing {a} vs {b}")

    compiled = len(play_programs._PROGRAMS)
    games = matches.play_pairings(plan, systems, settings, int(job["root_seed"]),
                                  watch=report.tick, before=before)  # fmt: skip
    compiled = len(play_programs._PROGRAMS) - compiled
    results.save(games, Path(GAMES_FILE))
    index = []
    if job["replays"]:
        report.phase("recording replays")
        index = matches.record_replays(Path("."), games, systems, int(job["replays"]))
    return {"replays": index, "programs": compiled}


JOBS = {"check": check, "play": play}
