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
`marl-bgs-tournament release POPULATION` writes unless told otherwise, else the release of an
installed `marl-bgs-population` data wheel (`marl-bgs-tournament wheel RELEASE` builds one).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from marl_bgs.core.checks import shown
from marl_bgs.core.files import read_json
from marl_bgs_eval import EvalError, System
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable import (
    BATCH_SIZES,
    MAX_FILE_BYTES,
    SUFFIX,
    export_system,
    file_sha256,
    load_system,
)
from marl_bgs_tournament.teams import ORGANISERS

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
BEST_KIND, MILESTONE_KIND = "best on validation", "milestone"  # a record's `kind`
_MEMBER = re.compile(r"^[a-z0-9][a-z0-9-]{0,47}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def user_folder() -> Path:
    """Where `release` writes unless told otherwise: `MARL_BGS_POPULATION`, else the user's data
    folder."""
    given = os.environ.get(POPULATION_ENV)
    if given:
        return Path(given)
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "marl-bgs" / "population"


def default_folder() -> Path:
    """Where `pop:` names look: `user_folder()` when it holds a release (or is named by
    `MARL_BGS_POPULATION`), else the release inside an installed `marl-bgs-population` data
    wheel (`marl-bgs-tournament wheel`), else `user_folder()`."""
    folder = user_folder()
    if os.environ.get(POPULATION_ENV) or (folder / RELEASE_FILE).exists():
        return folder
    from marl_bgs_tournament.population_wheel import installed_release

    return installed_release() or folder


def steps_label(steps: int) -> str:
    """Game steps as a member's suffix: 40000000 -> 40m, 160000 -> 160k, 16 -> 16."""
    for unit, size in (("m", 10**6), ("k", 10**3)):
        if steps >= size and steps % size == 0:
            return f"{steps // size}{unit}"
    return str(steps)


def _curve(run_dir: Path, last: int) -> list[list[float]]:
    """(game steps, win rate, reward per tick) at up to CURVE_POINTS evenly spaced updates, up
    to update `last`."""
    from marl_bgs_train.runs import read_log

    rows = [r for r in read_log(run_dir) if r["update"] <= last]
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
    table = table[table["update"] <= (update or 0)]  # what was known when it was saved
    return {
        "learner": run_dir.parent.name, "kind": kind, "budget": population["budget"],
        "seed": seed, "update": update, "steps": int(update or 0) * config.steps_per_update,
        "commit": population["commit"], "settings": to_dict(config),
        "curve": _curve(run_dir, int(update or 0)),
        "validation": json.loads(str(table.to_json(orient="records"))),
    }  # fmt: skip


def release(
    population: str | Path,
    out: str | Path | None = None,
    *,
    team: str = ORGANISERS,
    batch_sizes: Sequence[int] = BATCH_SIZES,
) -> dict[str, Any]:
    """Export a trained population (`marl-bgs-train population`) to a release folder (default:
    `user_folder()`): each learner's best validated checkpoint, of its best-scoring seed, and
    that run's milestone checkpoint, each a System file, and `release.json`. The folder appears
    whole or not at all. Returns the index."""
    try:
        from marl_bgs_train import checkpoints
        from marl_bgs_train.modes import parts
        from marl_bgs_train.population import (
            BUDGETS,
            MILESTONE,
            population_runs,
            read_population,
        )
        from marl_bgs_train.runs import kept_info, kept_update, run_system
        from marl_bgs_train.validation import BEST
    except ImportError:
        raise TournamentError(
            "release: reading trained runs needs marl-bgs-train (pip install marl-bgs-train)"
        ) from None

    record = read_population(population)
    out = user_folder() if out is None else Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise TournamentError(f"out: {out} is not empty; release into a new or empty folder")
    label = steps_label(BUDGETS[record["budget"]].milestone)
    copies = {}
    for learner, dirs in population_runs(population).items():
        scored = [(float(i["score"]), d) for d in dirs if (i := kept_info(d / BEST)) is not None]
        if not scored:
            raise TournamentError(f"population: {learner} has no validated checkpoint; train "
                                  "it to the end first")  # fmt: skip
        run_dir = max(scored, key=lambda pair: pair[0])[1]
        wanted = record["milestones"][learner]
        if kept_update(run_dir / MILESTONE) != wanted:
            raise TournamentError(f"population: {run_dir} has no copy of its milestone "
                                  f"checkpoint (update {wanted}); run the population command "
                                  "again to make it while the checkpoint is kept")  # fmt: skip
        milestone = (f"{learner}-at-{label}", run_dir, MILESTONE, MILESTONE_KIND)
        copies[learner] = [(learner, run_dir, BEST, BEST_KIND), milestone]
    partial = out.with_name(f"{out.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    members: dict[str, Any] = {}
    for member, run_dir, copy, kind in (c for learner in copies.values() for c in learner):
        info = _record(run_dir, copy, kind, record)
        path = partial / f"{member}{SUFFIX}"
        config = checkpoints.load_config(run_dir / copy)
        maps = parts(config.mode).trained_layouts(config.game)
        training = {"maps": list(maps), "scenarios": [], "steps": info["steps"]}
        export_system(run_system(run_dir / copy), path, team=team, name=f"pop-{member}",
                      training=training, batch_sizes=batch_sizes)  # fmt: skip
        members[member] = {"file": path.name, "bytes": path.stat().st_size,
                           "sha256": file_sha256(path), "record": info}  # fmt: skip
    index = {"format": RELEASE_FORMAT, "version": RELEASE_VERSION, "mode": record["mode"],
             "budget": record["budget"], "members": members}  # fmt: skip
    (partial / RELEASE_FILE).write_text(json.dumps(index, indent=1) + "\n")
    if out.exists():
        out.rmdir()  # empty (checked above)
    partial.rename(out)
    return index


def read_release(folder: str | Path) -> dict[str, Any]:
    """`release.json` of a release folder, checked (a `TournamentError` naming the field)."""
    path = Path(folder) / RELEASE_FILE
    where = f"population: {path}"
    if not path.exists():
        raise TournamentError(f"{where}: no release here; make one with `marl-bgs-tournament "
                              f"release POPULATION`, set {POPULATION_ENV} or install the "
                              f"marl-bgs-population wheel")  # fmt: skip
    _, data = read_json(path, "population:", MAX_RELEASE_BYTES, error=TournamentError)
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
        _check_member(name, entry, where)
    return data


def _check_member(name: Any, entry: Any, where: str) -> None:
    if not isinstance(name, str) or not _MEMBER.match(name):
        raise TournamentError(f"{where}: a member's name is 1-48 lower-case letters, digits and "
                              f"-, got {shown(name)}")  # fmt: skip
    where = f"{where}: members.{name}"
    if not isinstance(entry, dict) or sorted(entry) != sorted(MEMBER_KEYS):
        raise TournamentError(f"{where}: expected the fields {list(MEMBER_KEYS)}")
    if entry["file"] != f"{name}{SUFFIX}":
        raise TournamentError(f"{where}.file: expected {name}{SUFFIX}")
    size = entry["bytes"]
    if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= MAX_FILE_BYTES:
        raise TournamentError(f"{where}.bytes: expected a whole number in 1-{MAX_FILE_BYTES}")
    if not isinstance(entry["sha256"], str) or not _SHA256.match(entry["sha256"]):
        raise TournamentError(f"{where}.sha256: expected 64 lower-case hex digits")
    _check_record(entry["record"], f"{where}.record")


def _whole(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and value >= 0


def _check_record(record: Any, where: str) -> None:
    """A member's training record: its fields and their kinds (the values are the trainer's)."""
    if not isinstance(record, dict) or sorted(record) != sorted(RECORD_KEYS):
        raise TournamentError(f"{where}: expected the fields {list(RECORD_KEYS)}")
    if record["kind"] not in (BEST_KIND, MILESTONE_KIND):
        raise TournamentError(f"{where}.kind: expected {BEST_KIND!r} or {MILESTONE_KIND!r}")
    for key in ("learner", "budget"):
        if not isinstance(record[key], str) or not 0 < len(record[key]) <= 64:
            raise TournamentError(f"{where}.{key}: expected text of 1-64 characters")
    if record["commit"] is not None and not (isinstance(record["commit"], str)
                                             and _COMMIT.match(record["commit"])):  # fmt: skip
        raise TournamentError(f"{where}.commit: expected a git commit (40 hex digits) or null")
    for key in ("seed", "update", "steps"):
        if not _whole(record[key]):
            raise TournamentError(f"{where}.{key}: expected a whole number")
    if not isinstance(record["settings"], dict):
        raise TournamentError(f"{where}.settings: expected an object")
    curve = record["curve"]
    if not isinstance(curve, list) or len(curve) > CURVE_POINTS or any(
        not isinstance(p, list) or len(p) != 3
        or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in p)
        for p in curve
    ):  # fmt: skip
        raise TournamentError(f"{where}.curve: expected up to {CURVE_POINTS} [steps, win rate, "
                              "reward per tick] rows")  # fmt: skip
    table = record["validation"]
    if not isinstance(table, list) or not all(isinstance(r, dict) for r in table):
        raise TournamentError(f"{where}.validation: expected a list of rows")


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
    if file_sha256(path) != entry["sha256"]:
        raise TournamentError(f"pop:{member}: {path}: sha256 differs from the release's")
    return path


def is_released(path: Path) -> bool:
    """Whether `path` is a member's System file of the release in its own folder (listed in
    that folder's `release.json`, its size and sha256 as listed)."""
    try:
        members = read_release(path.parent)["members"]
        return any(
            e["file"] == path.name and member_file(m, path.parent) == path
            for m, e in members.items()
        )
    except TournamentError:
        return False


def population_system(member: str) -> System:
    """`pop:<member>`: a released member's System (the `marl_bgs_eval.system_prefixes` entry)."""
    try:
        return load_system(member_file(member))
    except TournamentError as err:
        raise EvalError(f"system: {err}") from None


def big_nine(folder: str | Path | None = None) -> list[str]:
    """Season 0's field: the release's learners (each one's best checkpoint, as its System
    file, checked) and the three scripted teams."""
    from marl_bgs_eval import SCRIPTED_TEAMS

    folder = default_folder() if folder is None else Path(folder)
    data = read_release(folder)
    if data["mode"] != "tdm":
        raise TournamentError(f"population: Season 0 is Team Deathmatch's; {folder} plays "
                              f"{data['mode']!r}")  # fmt: skip
    learners = [m for m, e in data["members"].items() if e["record"]["kind"] == BEST_KIND]
    return [*(str(member_file(m, folder)) for m in learners), *SCRIPTED_TEAMS]
