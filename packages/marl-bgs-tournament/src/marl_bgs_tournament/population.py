"""A released population: the System files of a trained population (`marl-bgs-train
population`), each with its training record, usable as `pop:<member>` wherever a System name is
(`marl-bgs-eval play pop:ippo-rnn tdm-beta`, `--frozen pop:qmix`, the BattleClient).

A release folder holds `release.json` and one `<member>.mbgs` per member: each learner's best
checkpoint on validation as `<learner>` and its milestone checkpoint (the paper's 40M-step one)
as `<learner>-at-<steps>` (`ippo-rnn-at-40m`). `release.json` lists every member's file with its
size and sha256 (checked before a file is opened) and its record: learner, budget, seed, update,
game steps, source commit, settings, learning curve and validation table.

`pop:` names read the release folder in `MARL_BGS_POPULATION`, else the user's data folder
(`$XDG_DATA_HOME/marl-bgs/population`, by default `~/.local/share/marl-bgs/population`), where
`marl-bgs-tournament release POPULATION` writes unless told otherwise.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from marl_bgs_eval import EvalError, System
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable import BATCH_SIZES, SUFFIX, export_system, load_system
from marl_bgs_tournament.portable.format import sha256

RELEASE_FILE = "release.json"
RELEASE_FORMAT = "marl-bgs-population"
RELEASE_VERSION = 1
RELEASE_KEYS = ("format", "version", "mode", "budget", "members")
MEMBER_KEYS = ("file", "bytes", "sha256", "record")
RECORD_KEYS = ("learner", "kind", "budget", "seed", "update", "steps", "commit", "settings",
               "curve", "validation")  # fmt: skip
MAX_RELEASE_BYTES = 8 * 2**20  # release.json (records with curves and validation tables)
MAX_MEMBERS = 64
CURVE_POINTS = 200  # rows of a record's learning curve (evenly spaced updates)
POPULATION_ENV = "MARL_BGS_POPULATION"
TEAM = "marl-bgs"  # the team the released Systems are entered under
BEST_KIND, MILESTONE_KIND = "best on validation", "milestone"  # a record's `kind`
_MEMBER = re.compile(r"^[a-z0-9][a-z0-9-]{0,47}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def default_folder() -> Path:
    """Where `pop:` names look: `MARL_BGS_POPULATION`, else the user's data folder."""
    given = os.environ.get(POPULATION_ENV)
    if given:
        return Path(given)
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "marl-bgs" / "population"


def steps_label(steps: int) -> str:
    """Game steps as a member's suffix: 40000000 -> 40m, 160000 -> 160k, 16 -> 16."""
    for unit, size in (("m", 10**6), ("k", 10**3)):
        if steps >= size and steps % size == 0:
            return f"{steps // size}{unit}"
    return str(steps)


def _curve(run_dir: Path) -> list[list[float]]:
    """(game steps, win rate, reward per tick) at up to CURVE_POINTS evenly spaced updates."""
    from marl_bgs_train.runs import read_log

    rows = read_log(run_dir)
    every = max(1, math.ceil(len(rows) / CURVE_POINTS))
    picked = rows[every - 1 :: every] if rows else []
    return [[float(r["steps"]), float(r["win_rate"]), float(r["reward_per_tick"])] for r in picked]


def _record(run_dir: Path, copy: str, kind: str, population: dict[str, Any]) -> dict[str, Any]:
    from marl_bgs_train import checkpoints
    from marl_bgs_train.batch import load_batch
    from marl_bgs_train.config import to_dict
    from marl_bgs_train.runs import kept_update
    from marl_bgs_train.validation import VALIDATION_CSV

    config = checkpoints.load_config(run_dir)
    update = kept_update(run_dir / copy)
    seed = {r.name: r.seed for r in load_batch(run_dir.parent)}[run_dir.name]
    table = pd.read_csv(run_dir / VALIDATION_CSV)
    return {
        "learner": run_dir.parent.name, "kind": kind, "budget": population["budget"],
        "seed": seed, "update": update, "steps": int(update or 0) * config.steps_per_update,
        "commit": population["commit"], "settings": to_dict(config), "curve": _curve(run_dir),
        "validation": json.loads(str(table.to_json(orient="records"))),
    }  # fmt: skip


def _best_score(copy_dir: Path) -> float:
    """The validation score of a run's kept best checkpoint."""
    return float(json.loads((copy_dir / f"{copy_dir.name}.json").read_text())["score"])


def _trained_maps(settings: dict[str, Any]) -> list[int]:
    """The maps a run's game settings train on (its maps and its curriculum's)."""
    game = settings.get("game") or {}
    maps = list(game.get("maps") or [])
    for stage in game.get("curriculum") or []:
        maps += list(stage.get("maps") or [])
    return sorted({int(m) for m in maps})


def release(
    population: str | Path,
    out: str | Path | None = None,
    *,
    team: str = TEAM,
    batch_sizes: Sequence[int] = BATCH_SIZES,
) -> dict[str, Any]:
    """Export a trained population (`marl-bgs-train population`) to a release folder (default:
    `default_folder()`): each learner's best validated checkpoint, of its best-scoring seed, and
    that run's milestone checkpoint, each a System file, and `release.json`. Returns it."""
    try:
        from marl_bgs_train.population import MILESTONE, population_runs, read_population
        from marl_bgs_train.runs import kept_update, run_system
        from marl_bgs_train.validation import BEST
    except ImportError:
        raise TournamentError(
            "release: reading trained runs needs marl-bgs-train (pip install marl-bgs-train)"
        ) from None

    record = read_population(population)
    out = default_folder() if out is None else Path(out)
    if out.exists() and any(out.iterdir()):
        raise TournamentError(f"out: {out} is not empty; release into a new or empty folder")
    chosen = {}
    for learner, dirs in population_runs(population).items():
        scored = [d for d in dirs if kept_update(d / BEST) is not None]
        if not scored:
            raise TournamentError(f"population: {learner} has no validated checkpoint; train "
                                  "it to the end first")  # fmt: skip
        chosen[learner] = max(scored, key=lambda d: _best_score(d / BEST))
    out.mkdir(parents=True, exist_ok=True)
    members: dict[str, Any] = {}
    for learner, run_dir in chosen.items():
        copies = [(learner, BEST, BEST_KIND)]
        if kept_update(run_dir / MILESTONE) is not None:
            steps = _record(run_dir, MILESTONE, MILESTONE_KIND, record)["steps"]
            copies.append((f"{learner}-at-{steps_label(steps)}", MILESTONE, MILESTONE_KIND))
        for member, copy, kind in copies:
            info = _record(run_dir, copy, kind, record)
            path = out / f"{member}{SUFFIX}"
            training = {"maps": _trained_maps(info["settings"]), "scenarios": [],
                        "steps": info["steps"]}  # fmt: skip
            export_system(run_system(run_dir / copy), path, team=team, name=f"pop-{member}",
                          training=training, batch_sizes=batch_sizes)  # fmt: skip
            data = path.read_bytes()
            members[member] = {"file": path.name, "bytes": len(data), "sha256": sha256(data),
                               "record": info}  # fmt: skip
    index = {"format": RELEASE_FORMAT, "version": RELEASE_VERSION, "mode": record["mode"],
             "budget": record["budget"], "members": members}  # fmt: skip
    (out / RELEASE_FILE).write_text(json.dumps(index, indent=1) + "\n")
    return index


def read_release(folder: str | Path) -> dict[str, Any]:
    """`release.json` of a release folder, checked (a `TournamentError` naming the field)."""
    path = Path(folder) / RELEASE_FILE
    where = f"population: {path}"
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_RELEASE_BYTES + 1)
    except OSError as err:
        raise TournamentError(f"{where}: no release here ({err.strerror}); make one with "
                              "`marl-bgs-tournament release POPULATION` or set "
                              f"{POPULATION_ENV}") from None  # fmt: skip
    if len(raw) > MAX_RELEASE_BYTES:
        raise TournamentError(f"{where}: larger than {MAX_RELEASE_BYTES} bytes")
    try:
        data = json.loads(raw)
    except ValueError as err:
        raise TournamentError(f"{where}: not JSON ({err})") from None
    if not isinstance(data, dict) or sorted(data) != sorted(RELEASE_KEYS):
        raise TournamentError(f"{where}: expected the fields {list(RELEASE_KEYS)}")
    if data["format"] != RELEASE_FORMAT or data["version"] != RELEASE_VERSION:
        raise TournamentError(f"{where}: format: expected {RELEASE_FORMAT!r} version "
                              f"{RELEASE_VERSION}")  # fmt: skip
    for key in ("mode", "budget"):
        if not isinstance(data[key], str) or not 0 < len(data[key]) <= 64:
            raise TournamentError(f"{where}: {key}: expected text of 1-64 characters")
    members = data["members"]
    if not isinstance(members, dict) or not 0 < len(members) <= MAX_MEMBERS:
        raise TournamentError(f"{where}: members: expected 1-{MAX_MEMBERS} members")
    for name, entry in members.items():
        _check_member(name, entry, f"{where}: members.{str(name)[:48]}")
    return data


def _check_member(name: Any, entry: Any, where: str) -> None:
    if not isinstance(name, str) or not _MEMBER.match(name):
        raise TournamentError(f"{where}: a member's name is 1-48 lower-case letters, digits and -")
    if not isinstance(entry, dict) or sorted(entry) != sorted(MEMBER_KEYS):
        raise TournamentError(f"{where}: expected the fields {list(MEMBER_KEYS)}")
    if entry["file"] != f"{name}{SUFFIX}":
        raise TournamentError(f"{where}.file: expected {name}{SUFFIX}")
    size = entry["bytes"]
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise TournamentError(f"{where}.bytes: expected a positive whole number")
    if not isinstance(entry["sha256"], str) or not _SHA256.match(entry["sha256"]):
        raise TournamentError(f"{where}.sha256: expected 64 lower-case hex digits")
    record = entry["record"]
    if not isinstance(record, dict) or sorted(record) != sorted(RECORD_KEYS):
        raise TournamentError(f"{where}.record: expected the fields {list(RECORD_KEYS)}")


def member_file(member: str, folder: str | Path | None = None) -> Path:
    """A member's System file in a release folder (default `default_folder()`), its size and
    sha256 checked against `release.json`."""
    folder = default_folder() if folder is None else Path(folder)
    members = read_release(folder)["members"]
    if member not in members:
        raise TournamentError(f"pop:{member[:48]}: not a member of the release in {folder}; "
                              f"members: {sorted(members)}")  # fmt: skip
    entry, path = members[member], folder / members[member]["file"]
    try:
        size = path.stat().st_size
    except OSError as err:
        raise TournamentError(f"pop:{member}: {path}: {err.strerror}") from None
    if size != entry["bytes"]:
        raise TournamentError(f"pop:{member}: {path} holds {size} bytes, the release lists "
                              f"{entry['bytes']}")  # fmt: skip
    if sha256(path.read_bytes()) != entry["sha256"]:
        raise TournamentError(f"pop:{member}: {path}: sha256 differs from the release's")
    return path


def population_system(member: str) -> System:
    """`pop:<member>`: a released member's System (the `marl_bgs_eval.system_prefixes` entry)."""
    try:
        return load_system(member_file(member))
    except TournamentError as err:
        raise EvalError(f"system: {err}") from None


def big_nine(folder: str | Path | None = None) -> list[str]:
    """Season 0's field: the release's learners (each one's best checkpoint, as its System
    file, checked) and the three scripted teams."""
    from marl_bgs_eval.tdm.scenarios import SCRIPTED_TEAMS

    folder = default_folder() if folder is None else Path(folder)
    data = read_release(folder)
    if data["mode"] != "tdm":
        raise TournamentError(f"population: Season 0 is Team Deathmatch's; {folder} plays "
                              f"{data['mode']!r}")  # fmt: skip
    learners = [m for m, e in data["members"].items() if e["record"]["kind"] == BEST_KIND]
    return [*(str(member_file(m, folder)) for m in learners), *SCRIPTED_TEAMS]
