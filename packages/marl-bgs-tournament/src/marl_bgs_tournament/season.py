"""A season: the field's round robin, one joint Elo fit, challengers, and every result published.

`run_season(field, out)` plays every pairing of the field (see `schedule`), fits Elo with 95%
intervals to all games at once, and writes the season folder (`docs/tournament.md` lists its
files). `challenge(folder, entrant)` plays a challenger as team A against every member, fits the
field's games and the challenger's together, and admits it only if its Elo beats the lowest
member's; that member leaves (or, if the challenger's team already holds a seat, that seat's
entrant leaves: one seat per submitting team; a team proves who it is with its token, see
`teams`). Each challenger's games, ratings and decision are published, admitted or not. A season
plays one two-team mode (`Settings.mode`, Team Deathmatch by default; its maps are that mode's
layouts); only its games on the season's maps enter the fit: scenario results never feed Elo.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

import marl_bgs
import marl_bgs_eval as ev
from marl_bgs_eval import results
from marl_bgs_eval.crossplay import matchups
from marl_bgs_eval.progress import note
from marl_bgs_eval.resampling import check_scheme
from marl_bgs_tournament import jobs, matches, modes, rulebook, sandbox
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable import SUFFIX, check_name, file_sha256, load_system, read_manifest
from marl_bgs_tournament.portable.format import mode_of
from marl_bgs_tournament.schedule import (
    PAIRS_PER_MAP,
    challenger_schedule,
    draw_root_seed,
    field_schedule,
    games_per_pairing,
)
from marl_bgs_tournament.teams import ORGANISERS, claim, issue

RULEBOOK = "v1"
RECORD = "season.json"
ALL_GAMES = "all-games.parquet"  # every game ever played in the season, members' and challengers'


@dataclass(frozen=True)
class Settings:
    """What a season plays and how it rates (rulebook v1 at full size by default). `mode`: a
    two-team mode (id or alias; kept as its versioned id); `maps`: its layout indices (empty:
    its test layouts, Team Deathmatch's 47-51); `winning_score`: None, the mode's own default
    (Team Deathmatch's 20; a mode without one takes none); `checks`: the rulebook checks every
    System file must pass (None: all of the mode's)."""

    mode: str = "tdm"
    maps: tuple[int, ...] = ()
    pairs_per_map: int = PAIRS_PER_MAP
    tick_limit: int = rulebook.TICK_LIMIT
    winning_score: int | None = None
    batch_size: int = 128
    bootstrap: int = 5000
    bootstrap_scheme: str = "pairs"  # the rulebook's; "maps": resample maps, then pairs
    rating_seed: int = 0
    metrics: str = "full"
    replays: int = 3  # games recorded as replays (the first game of the first pairings)
    checks: tuple[str, ...] | None = None
    progress: bool = False

    def __post_init__(self) -> None:
        kit = modes.kit(self.mode)
        if kit.controlled_teams != 2:
            raise TournamentError(
                f"mode: a season's round robin needs a two-team mode; {kit.id} plays its second "
                "team itself"
            )
        fill = {"mode": kit.id, "checks": rulebook.check_names(kit.id, self.checks)}
        fill["maps"] = tuple(self.maps) or modes.season_layouts(kit.id)
        for key, value in fill.items():
            object.__setattr__(self, key, value)

    def rules(self) -> dict[str, Any]:
        """The mode's settings each game of the season takes (`evaluate`'s keywords)."""
        given = {"winning_score": self.winning_score}
        return {"tick_limit": self.tick_limit, **{k: v for k, v in given.items() if v is not None}}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Settings:
        """Settings from `dataclasses.asdict`'s form after a JSON round trip (lists: tuples)."""
        plain: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v
                                 for k, v in values.items()}  # fmt: skip
        return cls(**plain)


@dataclass(frozen=True)
class Entrant:
    """A System with where it came from: a registered name (`system` loaded: the organisers'
    own code) or a System file (`path`; its programs are loaded only in the sandbox)."""

    name: str
    team: str
    source: str
    sha256: str | None
    system: ev.System | None = field(repr=False, compare=False)
    path: Path | None = None  # the System file, if any

    def play_source(self) -> str:
        """Where the sandbox's child finds it: `file:<sha256>:<path>` (the file as it was
        checked here) or `builtin:<name>`."""
        if self.path is None:
            return self.source
        return f"file:{self.sha256}:{self.path.resolve()}"

    def store(self, folder: Path) -> None:
        """Keep a System file in the season folder (entrants/<name>.mbgs), so a later challenge
        reloads it; an entrant's stored file is never replaced."""
        if self.path is not None:
            (folder / "entrants").mkdir(exist_ok=True)
            target = folder / "entrants" / self.source.removeprefix("file:")
            if target.exists() and file_sha256(target) != self.sha256:
                raise TournamentError(f"challenger: another file for {self.name!r} is stored")
            shutil.copyfile(self.path, target)


def entrant(ref: str | Path, team: str | None = None, mode: str = "tdm") -> Entrant:
    """A System file (`*.mbgs`: name and team from its manifest, which is checked here; its
    programs are loaded only in the sandbox; `pop:<member>` is the released member's file) or a
    registered System name (team `organisers`
    unless given), either playing `mode` (the season's). Only built-in Systems and released
    members (`pop:` names, or a member's file in its release folder) play for the organisers'
    team, which is exempt from tokens and the one-seat rule: any other System file whose
    manifest or `team` names it is refused."""
    text = str(ref)
    mode_id = modes.kit(mode).id
    if text.startswith("pop:"):  # a released member enters as its (checked) System file
        from marl_bgs_tournament.population import member_file

        text = str(member_file(text.removeprefix("pop:")))
    if text.endswith(SUFFIX):
        from marl_bgs_tournament.population import is_released

        e = _file_entrant(Path(text), team, mode_id)
        if e.team == ORGANISERS and not is_released(Path(text)):
            raise TournamentError(
                f"field: {e.name!r}'s team is {ORGANISERS!r}, kept for the built-in Systems and "
                "the released population; a System file enters under its own team"
            )
        return e
    try:
        sys = ev.get_system(text).for_mode(mode_id)
    except ev.EvalError as err:
        raise TournamentError(f"field: {err}") from None
    if sys.host:
        raise TournamentError(
            f"field: {text!r} is a host System (Python per tick); the tournament plays pure-JAX "
            "Systems only"
        )
    return Entrant(sys.name, check_name(team or ORGANISERS, "team"), f"builtin:{text}", None, sys)


def _file_entrant(path: Path, team: str | None, mode_id: str) -> Entrant:
    """A System file as an entrant (its manifest checked; `team` or the manifest's)."""
    manifest = read_manifest(path)
    name = check_name(manifest["name"], "name")
    if manifest["mode"] != mode_id:
        raise TournamentError(
            f"field: {name!r} plays {manifest['mode']}; this season plays {mode_id}"
        )
    source = f"file:{name}{SUFFIX}"  # stored under its (unique) entrant name
    return Entrant(name, check_name(team or manifest["team"], "team"), source,
                   file_sha256(path), None, path)  # fmt: skip


def _write(path: Path, write: Callable[[Path], Any]) -> None:
    """Write through a temporary file, so a reader sees the old file or the new one, whole."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _json(path: Path, value: Any) -> None:
    _write(path, lambda p: p.write_text(json.dumps(value, indent=1, default=_plain) + "\n"))


def _plain(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"not JSON: {type(x).__name__}")


def _play(
    plan: pd.DataFrame, entrants: dict[str, Entrant], settings: Settings, root_seed: int,
    out: Path | None = None, replays: int = 0,
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:  # fmt: skip
    """The pairings of `plan` and replays of the first `replays` (saved under out/replays/):
    in the sandbox's child process when any entrant is a System file, else here (built-in
    Systems are the organisers' own code)."""
    if any(e.path is not None for e in entrants.values()):
        sources = {name: e.play_source() for name, e in entrants.items()}
        played = sandbox.play_games(plan, sources, settings, root_seed, out=out, replays=replays)
        return played.games, played.replays
    systems = {name: cast(ev.System, e.system) for name, e in entrants.items()}
    games = matches.play_pairings(plan, systems, settings, root_seed)
    index = matches.record_replays(out, games, systems, replays) if out and replays else []
    return games, index


def vet(e: Entrant, settings: Settings, report: Path) -> None:
    """Run the season's rulebook checks on a System file entrant in the sandbox and publish the
    table at `report`; refuse the entrant if a check fails or the sandbox ended it (its reason).
    Built-in entrants (organisers) are exempt."""
    if e.path is None or not settings.checks:
        return
    try:
        table = sandbox.check_file(e.path, checks=settings.checks, tick_limit=settings.tick_limit,
                                   progress=settings.progress)  # fmt: skip
    except sandbox.RefusedError as err:
        raise TournamentError(f"{e.name}: refused: {err.reason}") from None
    report.parent.mkdir(parents=True, exist_ok=True)
    _write(report, lambda p: table.to_csv(p, index=False))
    failed = table.loc[~table["passed"].astype(bool), "check"].tolist()
    if failed:
        raise TournamentError(
            f"{e.name}: the rulebook refuses it: {failed} failed (see {report.name})"
        )


def one_seat_per_team(entrants: Sequence[Entrant]) -> None:
    """Refuse a field with two entrants of one submitting team (organisers excepted)."""
    teams = [e.team for e in entrants if e.team != ORGANISERS]
    twice = sorted({t for t in teams if teams.count(t) > 1})
    if twice:
        raise TournamentError(f"field: one seat per team; {twice} hold more than one")


def elo_games(games: pd.DataFrame, maps: Sequence[int]) -> pd.DataFrame:
    """The games that may feed Elo: games of the season's mode on its maps. Scenario results (or
    any other table) are refused, never silently dropped."""
    if "scenario" in games.columns:
        raise TournamentError("games: scenario results never feed Elo; pass the season's games")
    games = results.validate(games, "games")
    off = sorted(set(games["map"].astype(int)) - set(maps))
    if off:
        raise TournamentError(f"games: maps {off} are not the season's maps {list(maps)}")
    return games


def ratings_table(
    games: pd.DataFrame, members: Sequence[str], teams: dict[str, str], settings: Settings
) -> pd.DataFrame:
    """The joint fit's leaderboard with divisions, membership and teams."""
    table = ev.rate(games, bootstrap=settings.bootstrap, seed=settings.rating_seed,
                    scheme=settings.bootstrap_scheme)  # fmt: skip
    div = [ev.division(float(e)) for e in table["elo"]]
    table["division_tier"] = [d[0] for d in div]
    table["division"] = pd.array([d[1] for d in div], dtype="Int64")
    table["member"] = table["system"].isin(list(members))
    table["team"] = [teams[str(s)] for s in table["system"]]
    return table


def _publish(
    out: Path, games: pd.DataFrame, members: list[str], teams: dict[str, str], settings: Settings
) -> pd.DataFrame:
    """games, ratings, matchups and measures of the current field into `out`."""
    table = ratings_table(games, members, teams, settings)
    results.save(games, out / "games.csv")  # each written whole or not at all
    results.save(games, out / "games.parquet")
    _write(out / "ratings.csv", lambda p: table.to_csv(p, index=False))
    _json(out / "ratings.json", json.loads(str(table.to_json(orient="records"))))
    matrix = matchups(games).reindex(index=members, columns=members)
    _write(out / "matchups.csv", lambda p: matrix.to_csv(p, index_label="system_a"))
    measures = ev.system_metrics(games, bootstrap=min(settings.bootstrap, 2000),
                                 seed=settings.rating_seed,
                                 scheme=settings.bootstrap_scheme)  # fmt: skip
    _write(out / "measures.csv", lambda p: measures.to_csv(p, index=False))
    return table


def run_season(
    field_refs: Sequence[str | Path],
    out: str | Path,
    settings: Settings | None = None,
    *,
    root_seed: int | None = None,
    season: int = 0,
) -> dict[str, Any]:
    """Play the field's round robin and publish the season folder `out`; returns its record and,
    under `tokens`, each System file team's new token (`teams.issue`: shown once, in no file)."""
    out = Path(out)
    settings = Settings() if settings is None else settings
    try:
        check_scheme(settings.bootstrap_scheme)
    except ev.EvalError as err:
        raise TournamentError(str(err)) from None
    entrants = [entrant(r, mode=settings.mode) for r in field_refs]
    names = [e.name for e in entrants]
    if len(set(names)) != len(names):
        raise TournamentError(f"field: names must be unique, got {names}")
    one_seat_per_team(entrants)
    if jobs.lead_refuses(not (out.exists() and any(out.iterdir()))):
        raise TournamentError(f"out: {str(out)!r} is not empty; a season folder is written once")
    out = jobs.own_folder(out)
    out.mkdir(parents=True, exist_ok=True)
    for e in entrants:
        vet(e, settings, out / "entrants" / f"{e.name}.rulebook.csv")
        e.store(out)
    root = jobs.shared_seed(draw_root_seed() if root_seed is None else int(root_seed))
    plan = field_schedule(names, len(settings.maps), settings.pairs_per_map)
    played, index = _play(plan, {e.name: e for e in entrants}, settings, root, out,
                          settings.replays)  # fmt: skip
    games = elo_games(played, settings.maps)
    teams = {e.name: e.team for e in entrants}
    if settings.progress:
        note(f"rating {len(games)} games ({settings.bootstrap} refits) into {out}")
    _publish(out, games, names, teams, settings)
    results.save(games, out / ALL_GAMES)
    _json(out / "replays.json", index)
    record = {
        "rulebook": RULEBOOK,
        "season": int(season),
        "mode": settings.mode,
        "engine_version": marl_bgs.__version__,
        "root_seed": root,
        "rating_seed": settings.rating_seed,
        "bootstrap": settings.bootstrap,
        "bootstrap_scheme": settings.bootstrap_scheme,
        "maps": list(settings.maps),
        "pairs_per_map": settings.pairs_per_map,
        "games_per_pairing": games_per_pairing(len(settings.maps), settings.pairs_per_map),
        "tick_limit": settings.tick_limit,
        "winning_score": _rule(games, "winning_score", settings.winning_score),
        "batch_size": settings.batch_size,
        "metrics": settings.metrics,
        "checks": list(settings.checks or ()),
        "field": names,
        "entrants": {
            e.name: {"team": e.team, "source": e.source, "sha256": e.sha256} for e in entrants
        },
        "challengers": [],
        "schedule": json.loads(str(plan.to_json(orient="records"))),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    tokens = issue(out, [e.team for e in entrants if e.path is not None])
    _json(out / RECORD, record)
    jobs.discard_copy(out)
    return {**record, "tokens": tokens}


def _rule(games: pd.DataFrame, column: str, given: int | None) -> int | None:
    """A rule value the season set, else the one its games record (the mode's default), else
    None (a mode without that rule)."""
    if given is not None or column not in games.columns or games.empty:
        return given
    return int(games[column].iat[0])


def settings_of(record: dict[str, Any], **overrides: Any) -> Settings:
    """The Settings a season folder was played with (`overrides`: e.g. progress)."""
    keys = {k: record[k] for k in ("pairs_per_map", "tick_limit", "winning_score", "batch_size",
                                   "bootstrap", "rating_seed", "metrics")}  # fmt: skip
    checks = record.get("checks")  # seasons written before the option ran every check
    try:  # seasons written before the option used the default
        scheme = check_scheme(record.get("bootstrap_scheme", "pairs"))
    except ev.EvalError as err:
        raise TournamentError(f"season: {RECORD}: {err}") from None
    return Settings(mode=record["mode"], maps=tuple(record["maps"]),
                    checks=None if checks is None else tuple(checks), bootstrap_scheme=scheme,
                    **keys, **overrides)  # fmt: skip


def read_season(folder: str | Path) -> dict[str, Any]:
    """A season folder's record (season.json), checked for the fields a challenge needs."""
    path = Path(folder) / RECORD
    if not path.is_file():
        raise TournamentError(f"season: {str(path)!r} not found (run `marl-bgs-tournament season`)")
    try:
        record = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as err:
        raise TournamentError(f"season: {path.name} is not JSON ({type(err).__name__})") from None
    need = {"field", "entrants", "maps", "pairs_per_map", "challengers", "root_seed", "mode"}
    if not isinstance(record, dict) or need - set(record):
        missing = sorted(need - set(record)) if isinstance(record, dict) else sorted(need)
        raise TournamentError(f"season: {path.name} lacks {missing}")
    try:
        mode_of(record["mode"], "mode")
    except TournamentError:
        raise TournamentError(
            f"season: {path.name} was played in mode {str(record['mode'])[:80]!r}, which this "
            "engine does not play: its games cannot join an Elo fit of this engine's games"
        ) from None
    return record


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One challenge at a time per season folder (the command line and the web worker alike)."""
    with (folder / ".lock").open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TournamentError(
                f"season: {folder} is busy with another challenge; try again when it ends"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def challenge(
    folder: str | Path,
    ref: str | Path,
    *,
    team: str | None = None,
    token: str | None = None,
    root_seed: int | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Play a challenger against every member and decide its admission; publishes its games,
    ratings and decision under challengers/<name>/ and, if admitted, the new field's tables.
    Every game ever played in the season stays in all-games.parquet. A registered team must give
    its `token` before any game is played (`teams.claim`); the returned decision adds `token`:
    a new team's token, issued by this challenge (shown once, in no file), else None."""
    folder = Path(folder)
    with _locked(folder):
        return _challenge(folder, ref, team, token, root_seed, progress)


def _challenge(
    folder: Path,
    ref: str | Path,
    team: str | None,
    token: str | None,
    root_seed: int | None,
    progress: bool,
) -> dict[str, Any]:
    record = read_season(folder)
    settings = settings_of(record, progress=progress)
    new = entrant(ref, team, settings.mode)
    mine_dir = folder / "challengers" / new.name
    if new.name in record["entrants"] or (mine_dir / "decision.json").exists():
        raise TournamentError(f"challenger: the name {new.name!r} has already entered this season")
    entered = {str(e["team"]) for e in record["entrants"].values()}
    with claim(folder, new.team, token, entered=entered) as issued:
        return {**_decide(folder, record, settings, new, root_seed), "token": issued}


def _decide(
    folder: Path, record: dict[str, Any], settings: Settings, new: Entrant, root_seed: int | None
) -> dict[str, Any]:
    """The challenger's games, the joint fit and its admission, published."""
    mine_dir = folder / "challengers" / new.name
    vet(new, settings, mine_dir / "rulebook.csv")
    members: list[str] = list(record["field"])
    field = {name: _member(folder, name, record) for name in members} | {new.name: new}
    root = draw_root_seed() if root_seed is None else int(root_seed)
    plan = challenger_schedule(new.name, members, len(settings.maps), settings.pairs_per_map)
    mine = elo_games(_play(plan, field, settings, root)[0], settings.maps)
    games = pd.concat([results.load(folder / "games.parquet"), mine], ignore_index=True)
    teams = {n: record["entrants"][n]["team"] for n in members} | {new.name: new.team}
    if settings.progress:
        note(f"rating {len(games)} games ({settings.bootstrap} refits)")
    table = ratings_table(games, members, teams, settings)
    elo = dict(zip(table["system"], table["elo"], strict=True))
    admitted, lowest, leaves = admission(elo, members, teams, new.name)
    row = table.set_index("system").loc[new.name]
    decision = {
        "name": new.name, "team": new.team, "source": new.source, "sha256": new.sha256,
        "elo": float(row["elo"]), "elo_low": float(row["elo_low"]),
        "elo_high": float(row["elo_high"]), "lowest_member": lowest,
        "lowest_elo": float(elo[lowest]), "admitted": bool(admitted), "leaves": leaves,
        "root_seed": root, "first_game": int(plan["first_game"].to_numpy().min()),
        "first_seed_number": int(plan["first_seed_number"].to_numpy().min()),
        "decided": datetime.now(UTC).isoformat(timespec="seconds"),
    }  # fmt: skip
    new.store(folder)
    mine_dir.mkdir(parents=True, exist_ok=True)
    results.save(mine, mine_dir / "games.csv")
    _write(mine_dir / "ratings.csv", lambda p: table.to_csv(p, index=False))
    archive = pd.concat([results.load(folder / ALL_GAMES), mine], ignore_index=True)
    results.save(archive, folder / ALL_GAMES)
    if leaves is not None:
        members[members.index(leaves)] = new.name
        both = games["system_a"].isin(members) & games["system_b"].isin(members)
        kept = cast(pd.DataFrame, games[both]).sort_values("game", ignore_index=True)
        _publish(folder, kept, members, {m: teams[m] for m in members}, settings)
        record["field"] = members
    record["entrants"][new.name] = {"team": new.team, "source": new.source, "sha256": new.sha256}
    record["challengers"].append(decision)
    _json(mine_dir / "decision.json", decision)  # the decision, then the record: written last
    _json(folder / RECORD, record)
    return decision


def admission(
    elo: dict[str, float], members: Sequence[str], teams: dict[str, str], challenger: str
) -> tuple[bool, str, str | None]:
    """(admitted, lowest member, who leaves): the challenger enters only if its Elo beats the
    lowest member's; then the lowest member leaves, unless the challenger's team already holds
    a seat, which it then takes over (one seat per submitting team; organisers are exempt)."""
    lowest = min(members, key=lambda m: (elo[m], m))
    if not elo[challenger] > elo[lowest]:
        return False, lowest, None
    team = teams[challenger]
    own = [m for m in members if teams[m] == team and team != ORGANISERS]
    return True, lowest, own[0] if own else lowest


def member_system(folder: str | Path, name: str) -> ev.System:
    """A member of a season folder as a System in this process: its registered System, or its
    stored file (unchanged since it entered) through `load_system`, every program vetted. For
    the organiser's studies; the service plays files only in the sandbox."""
    record = read_season(folder)
    if name not in record["entrants"]:
        raise TournamentError(f"season: {name!r} is not an entrant; entrants: "
                              f"{sorted(record['entrants'])}")  # fmt: skip
    e = _member(Path(folder), name, record)
    return cast(ev.System, e.system) if e.path is None else load_system(e.path)


def _member(folder: Path, name: str, record: dict[str, Any]) -> Entrant:
    """A member again: its registered name, or its stored System file (unchanged since it
    entered)."""
    info = record["entrants"][name]
    kind, _, where = str(info["source"]).partition(":")
    if kind == "builtin":
        return entrant(where, info["team"], record["mode"])
    path = folder / "entrants" / where
    if not path.is_file():
        raise TournamentError(f"season: member {name!r}'s file {where!r} is not in entrants/")
    if file_sha256(path) != info["sha256"]:
        raise TournamentError(f"season: member {name!r}'s file changed since it entered")
    return _file_entrant(path, info["team"], modes.kit(record["mode"]).id)  # admitted already
