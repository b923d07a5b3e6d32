"""The season folder's JSON files, checked: season.json, replays.json and the challengers'
decision.json files. Each parser takes a path and returns plain JSON values the pages and the
API can show as they are, or raises SeasonDataError naming the file and field."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from marl_bgs_eval.resampling import SCHEMES
from marl_bgs_tournament.web import checks as ck
from marl_bgs_tournament.web.files import SeasonDataError, read_bytes

MAX_JSON_BYTES = 8 << 20
REPLAY_FILE = re.compile(r"replays/game-([0-9]{1,10})\.replay\.zip")
RESULTS = ("win", "draw", "loss")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_json(path: Path) -> Any:
    """The decoded JSON of `path` (strict: no NaN or Infinity, bounded size and depth)."""
    raw = read_bytes(path, MAX_JSON_BYTES)
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError) as err:
        raise SeasonDataError(f"{path.name}: not JSON ({type(err).__name__})") from None


def challenger(raw: Any, field: str) -> dict[str, Any]:
    """One admission decision: who, its Elo and interval, the lowest member, admitted or not."""
    d = ck.mapping(raw, field)
    out: dict[str, Any] = {
        "name": ck.text(d.get("name"), f"{field}.name"),
        "team": ck.text(d.get("team"), f"{field}.team"),
        **{k: ck.number(d.get(k), f"{field}.{k}") for k in ("elo", "elo_low", "elo_high")},
        "lowest_member": ck.text(d.get("lowest_member"), f"{field}.lowest_member"),
        "lowest_elo": ck.number(d.get("lowest_elo"), f"{field}.lowest_elo"),
        "admitted": ck.boolean(d.get("admitted"), f"{field}.admitted"),
    }
    for k in ("first_game", "first_seed_number", "root_seed"):
        out[k] = None if d.get(k) is None else ck.integer(d[k], f"{field}.{k}", 0)
    return out


def _entrants(raw: Any, field: str) -> dict[str, dict[str, Any]]:
    out = {}
    for name, e in ck.mapping(raw, field).items():
        where = f"{field}[{name!r}]"
        ck.text(name, f"{field} key")
        e = ck.mapping(e, where)
        sha = e.get("sha256")
        out[name] = {
            "team": ck.text(e.get("team"), f"{where}.team"),
            "source": ck.text(e.get("source"), f"{where}.source", 1000),
            "sha256": None if sha is None else ck.text(sha, f"{where}.sha256", 64),
        }
    return out


OPTIONAL_INTS = ("rating_seed", "bootstrap", "pairs_per_map", "tick_limit", "winning_score")
OPTIONAL_TEXTS = ("mode", "engine_version", "created", "bootstrap_scheme")


def season(path: Path) -> dict[str, Any]:
    """season.json: the record of the season (see the season format)."""
    d = ck.mapping(read_json(path), "season.json")
    f = "season.json."
    out: dict[str, Any] = {
        "rulebook": ck.text(d.get("rulebook"), f + "rulebook"),
        "season": ck.integer(d.get("season"), f + "season", 0),
        "maps": [ck.integer(m, f + "maps[]", -1) for m in ck.sequence(d.get("maps"), f + "maps")],
        "games_per_pairing": ck.integer(d.get("games_per_pairing"), f + "games_per_pairing", 0),
        "root_seed": ck.integer(d.get("root_seed"), f + "root_seed", 0),
        "field": [ck.text(n, f + "field[]") for n in ck.sequence(d.get("field"), f + "field")],
        "entrants": _entrants(d.get("entrants"), f + "entrants"),
        "challengers": [
            challenger(c, f"{f}challengers[{k}]")
            for k, c in enumerate(ck.sequence(d.get("challengers", []), f + "challengers"))
        ],
    }
    for k in OPTIONAL_INTS:
        out[k] = None if d.get(k) is None else ck.integer(d[k], f + k, 0)
    for k in OPTIONAL_TEXTS:
        out[k] = None if d.get(k) is None else ck.text(d[k], f + k)
    if out["bootstrap_scheme"] not in (None, *SCHEMES):
        raise SeasonDataError(f"{f}bootstrap_scheme: expected one of {list(SCHEMES)}")
    return out


def replay_index(path: Path) -> list[dict[str, Any]]:
    """replays.json: the recorded games; each file must be `replays/game-<game>.replay.zip`."""
    out, seen = [], set()
    for k, raw in enumerate(ck.sequence(read_json(path), "replays.json", 10_000)):
        where = f"replays.json[{k}]"
        e = ck.mapping(raw, where)
        game = ck.integer(e.get("game"), f"{where}.game", 0, 2**31 - 1)
        file = ck.text(e.get("file"), f"{where}.file")
        match = REPLAY_FILE.fullmatch(file)
        if match is None or int(match.group(1)) != game:
            raise SeasonDataError(f"{where}.file: expected 'replays/game-{game}.replay.zip'")
        result = e.get("result")
        if result not in RESULTS:
            raise SeasonDataError(f"{where}.result: expected one of {list(RESULTS)}")
        if game in seen:
            raise SeasonDataError(f"{where}.game: game {game} is listed twice")
        seen.add(game)
        out.append({
            "game": game,
            "system_a": ck.text(e.get("system_a"), f"{where}.system_a"),
            "system_b": ck.text(e.get("system_b"), f"{where}.system_b"),
            "map": ck.integer(e.get("map"), f"{where}.map", -1, 2**31 - 1),
            "result": result,
            "file": file,
        })  # fmt: skip
    return out


def decision(path: Path) -> dict[str, Any]:
    """challengers/<name>/decision.json: one admission decision."""
    return challenger(read_json(path), f"challengers/{path.parent.name}/decision.json")
