"""One season folder as the pages and the API read it: every file parsed on demand, cached
until it changes, and every name from a request looked up in the season's own lists before
any path is made from it."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

from marl_bgs_tournament.studies import (
    TEAMWORK_CHART,
    TEAMWORK_TABLE,
    ZERO_SHOT_CHART,
    ZERO_SHOT_TABLE,
)
from marl_bgs_tournament.web import season_files, tables
from marl_bgs_tournament.web.files import (
    FileCache,
    SeasonDataError,
    inside,
    is_plain_dir,
    read_bytes,
)
from marl_bgs_tournament.web.replay_json import read_replay

GAME_ID = re.compile(r"[0-9]{1,10}")
MAX_CHALLENGERS = 1000
REPLAYS_KEPT = 8
MAX_CHART_BYTES = 8 << 20
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png(path: Path) -> bytes:
    data = read_bytes(path, MAX_CHART_BYTES)
    if not data.startswith(PNG_MAGIC):
        raise SeasonDataError(f"{path.name}: not a PNG image")
    return data


class UnknownNameError(LookupError):
    """A name or game from a request is not in the season's lists."""


class SeasonStore:
    """Reads season folder `root` (see the season format); raises SeasonDataError for a file
    that is missing or bad, UnknownNameError for an unknown name or game."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.cache = FileCache()
        self.replay_cache = FileCache(max_entries=REPLAYS_KEPT)  # a long game's JSON is large

    def _get(self, name: str, parse: Any) -> Any:
        return self.cache.get(inside(self.root, name), parse)

    def season(self) -> dict[str, Any]:
        """season.json."""
        return self._get("season.json", season_files.season)

    def ratings(self) -> list[dict[str, Any]]:
        """ratings.csv, in rank order."""
        return self._get("ratings.csv", tables.ratings)

    def matchups(self) -> dict[str, Any]:
        """matchups.csv."""
        return self._get("matchups.csv", tables.matchups)

    def measures(self) -> list[dict[str, Any]]:
        """measures.csv."""
        return self._get("measures.csv", tables.measures)

    def teamwork(self) -> list[dict[str, Any]] | None:
        """studies/teamwork.csv (None while the study has not been run on this folder)."""
        if not (self.root / TEAMWORK_TABLE).exists():
            return None
        return self._get(TEAMWORK_TABLE, tables.teamwork)

    def teamwork_chart(self) -> bytes:
        """studies/teamwork.png's bytes (SeasonDataError if missing or too large)."""
        return self.cache.get(inside(self.root, TEAMWORK_CHART), _png)

    def zero_shot(self) -> list[dict[str, Any]] | None:
        """studies/zero_shot.csv (None while the study has not been run on this folder)."""
        if not (self.root / ZERO_SHOT_TABLE).exists():
            return None
        return self._get(ZERO_SHOT_TABLE, tables.zero_shot)

    def zero_shot_chart(self) -> bytes:
        """studies/zero_shot.png's bytes (SeasonDataError if missing or too large)."""
        return self.cache.get(inside(self.root, ZERO_SHOT_CHART), _png)

    def records(self) -> dict[str, list[dict[str, Any]]]:
        """Each System's record against each opponent, from games.csv."""
        return self._get("games.csv", tables.records)

    def replays(self) -> list[dict[str, Any]]:
        """replays.json."""
        return self._get("replays.json", season_files.replay_index)

    def replay_entry(self, game: str) -> dict[str, Any]:
        """The index entry of `game` (text from a request), or UnknownNameError."""
        if GAME_ID.fullmatch(game) is None:
            raise UnknownNameError(f"game: {game[:40]!r} is not a game number")
        for entry in self.replays():
            if entry["game"] == int(game):
                return entry
        raise UnknownNameError(f"game: no replay of game {int(game)} in this season")

    def replay(self, game: str) -> dict[str, Any]:
        """The viewer's JSON of the replay of `game` (its file as the index names it)."""
        entry = self.replay_entry(game)
        path = inside(self.root, entry["file"])
        if not path.is_relative_to(self.root / "replays"):
            raise SeasonDataError(f"replays.json: game {entry['game']}: file outside replays/")
        return {"game": entry["game"], **self.replay_cache.get(path, read_replay)}

    def challengers(self) -> tuple[list[dict[str, Any]], list[str]]:
        """Every admission decision: season.json's list, then any challengers/<name>/
        decision.json (newer: it replaces a same-named one). Returns (decisions, problems):
        a bad decision file is reported, not fatal."""
        problems: list[str] = []
        try:
            found = {c["name"]: c for c in self.season()["challengers"]}
        except SeasonDataError as err:
            found, problems = {}, [str(err)]
        folder = self.root / "challengers"
        if is_plain_dir(folder):
            for sub in sorted(folder.iterdir())[:MAX_CHALLENGERS]:
                if not is_plain_dir(sub) or not (sub / "decision.json").exists():
                    continue
                try:
                    d = self.cache.get(inside(self.root, sub / "decision.json"),
                                       season_files.decision)  # fmt: skip
                except SeasonDataError as err:
                    problems.append(str(err))
                    continue
                found[d["name"]] = d
        return list(found.values()), problems

    def names(self) -> set[str]:
        """Every System the season knows: rated, entered or challenging."""
        known: set[str] = set()
        for read in (
            lambda: {r["system"] for r in self.ratings()},
            lambda: set(self.season()["entrants"]),
            lambda: {c["name"] for c in self.challengers()[0]},
        ):
            with contextlib.suppress(SeasonDataError):
                known |= read()
        return known

    def entrant(self, name: str) -> dict[str, Any]:
        """Everything about System `name` (UnknownNameError unless the season knows it): its
        rating row, team and source, record per opponent, measures and replays. Parts whose
        file is missing or bad are None, with the problem in `problems`."""
        if name not in self.names():
            raise UnknownNameError(f"name: no System {name[:60]!r} in this season")
        out: dict[str, Any] = {"name": name, "problems": []}
        parts = {
            "rating": lambda: next((r for r in self.ratings() if r["system"] == name), None),
            "entry": lambda: self.season()["entrants"].get(name),
            "record": lambda: self.records().get(name, []),
            "measures": lambda: [m for m in self.measures() if m["system"] == name],
            "replays": lambda: [
                r for r in self.replays() if name in (r["system_a"], r["system_b"])
            ],
        }
        for key, read in parts.items():
            try:
                out[key] = read()
            except SeasonDataError as err:
                out[key] = None
                out["problems"].append(str(err))
        out["team"] = (out["rating"] or out["entry"] or {}).get("team")
        return out
