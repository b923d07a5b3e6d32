"""The sandboxed jobs as the tournament calls them: check one System file, play games."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from marl_bgs_eval import EvalError, replay_files, results
from marl_bgs_tournament import rulebook
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable import read_manifest
from marl_bgs_tournament.sandbox.jobs import GAMES_FILE
from marl_bgs_tournament.sandbox.limits import LIMITS, Limits
from marl_bgs_tournament.sandbox.run import RefusedError, run_job

INDEX_KEYS = ("game", "system_a", "system_b", "map", "result", "file")


class Played(NamedTuple):
    """What `play_games` returns."""

    games: pd.DataFrame  # one row per game (`marl_bgs_eval.results`)
    replays: list[dict[str, Any]]  # the replays saved: replays.json's rows
    programs: int  # play programs the child built (one per pairing shape and architecture)


def check_file(
    path: str | Path, *, checks: Sequence[str] | None = None,
    tick_limit: int = rulebook.TICK_LIMIT, seed: int = 0, limits: Limits = LIMITS,
    progress: bool = False,
) -> pd.DataFrame:  # fmt: skip
    """The rulebook's checks of a System file, run in a child process under `limits`: the
    table of `rulebook.check_entrant` (`checks`: None, every check of the file's mode);
    RefusedError when a limit ended the child."""
    path = Path(path)
    manifest = read_manifest(path)
    checks = rulebook.check_names(manifest["mode"], checks)
    if set(checks) <= set(rulebook.MANIFEST_CHECKS):  # no program runs: no child is needed
        run = {"training_declared": lambda: rulebook.training_declared(manifest)}
        return _table([run[c]()._asdict() for c in checks], checks)
    job = {"kind": "check", "file": str(path.resolve()), "checks": list(checks),
           "tick_limit": int(tick_limit), "seed": int(seed)}  # fmt: skip

    def collect(result: dict[str, Any], _: Path) -> pd.DataFrame:
        return _table(result.get("table"), checks)

    return run_job(job, collect, who=str(manifest["name"]),
                   tick_limit=tick_limit, limits=limits, progress=progress)  # fmt: skip


def _table(rows: Any, checks: Sequence[str]) -> pd.DataFrame:
    """The rulebook table from its rows, which must be exactly `checks`' in order."""
    if not isinstance(rows, list) or not all(
        isinstance(r, dict) and set(r) == set(rulebook.COLUMNS) for r in rows
    ) or [r["check"] for r in rows] != list(checks):  # fmt: skip
        raise RefusedError("the sandbox's child returned no rulebook table")
    table = pd.DataFrame(rows, columns=list(rulebook.COLUMNS))
    table["passed"] = table["passed"].astype(bool)
    return table


def play_games(
    plan: pd.DataFrame, sources: dict[str, str], settings: Any, root_seed: int, *,
    out: Path | None = None, replays: int = 0, limits: Limits = LIMITS,
) -> Played:  # fmt: skip
    """The pairings of `plan` between entrants given by source (`builtin:<name>` or
    `file:<sha256>:<path>`), played in a child process under `limits`. The replays of the first
    `replays` pairings are checked and saved under out/replays/."""
    if replays and out is None:
        raise TournamentError("out: the folder for replays is needed when replays > 0")
    first = plan.iloc[0] if len(plan) else {"system_a": "team A", "system_b": "team B"}
    job = {
        "kind": "play", "systems": dict(sources), "plan": plan.to_dict("records"),
        "settings": dataclasses.asdict(settings) | {"progress": False},
        "root_seed": int(root_seed), "replays": int(replays),
    }  # fmt: skip

    def collect(result: dict[str, Any], folder: Path) -> Played:
        try:
            games = results.load(folder / GAMES_FILE)
        except EvalError as err:
            raise RefusedError(f"the sandbox's child returned unreadable games: {err}") from None
        index = result.get("replays")
        if not isinstance(index, list) or len(index) > replays:
            raise RefusedError("the sandbox's child returned no replay index")
        for row in index:
            _save_replay(row, folder, out, games)
        programs = result.get("programs")
        if isinstance(programs, bool) or not isinstance(programs, int) or programs < 0:
            raise RefusedError("the sandbox's child did not say how many programs it built")
        return Played(games, index, programs)

    return run_job(job, collect, who=f"{first['system_a']} vs {first['system_b']}",
                   tick_limit=settings.tick_limit, limits=limits,
                   progress=settings.progress)  # fmt: skip


def _save_replay(row: Any, folder: Path, out: Path | None, games: pd.DataFrame) -> None:
    """Check one replay the child recorded against its games and save it under out/."""
    ok = isinstance(row, dict) and set(row) == set(INDEX_KEYS) and isinstance(row["game"], int)
    if not ok or row["file"] != f"replays/game-{row['game']}.replay.zip" or out is None:
        raise RefusedError("the sandbox's child returned a malformed replay index")
    if row["game"] not in set(games["game"].astype(int)):
        raise RefusedError(f"the sandbox's child recorded game {row['game']}, not one it played")
    try:
        replay = replay_files.load(folder / row["file"])
    except EvalError as err:
        raise RefusedError(f"the sandbox's child recorded an unreadable replay: {err}") from None
    (out / "replays").mkdir(exist_ok=True)
    replay_files.save(replay, out / row["file"])
