"""Shared fixtures of the web tests: one small season folder (synthetic ratings and one real
replay, recorded once per session), real uvicorn servers on 127.0.0.1, and headless Chromium."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import uvicorn

CHROMIUM = Path("/usr/bin/chromium")
SYSTEMS = ["alpha", "bravo", "random", "idle", "delta"]
TEAMS = {"alpha": "Team Alpha", "bravo": "Bravo & Co", "random": "Baselines",
         "idle": "Baselines", "delta": "Delta <Labs>"}  # fmt: skip
TICK_LIMIT = 40
MAGIC = b"MBGS-SYSTEM\n"


def _quiet_pair() -> pd.DataFrame:
    """The results rows of one spawn-swapped pair of short random-vs-idle games on map 47 in
    which nobody scores (what such a game does in TICK_LIMIT ticks), without playing them."""
    import marl_bgs_eval as ev
    from marl_bgs.tdm.maps import load as load_map

    spec = load_map(47)
    rows = []
    for game, spawn in enumerate(("left", "right")):
        rows.append({
            "game": game, "pair_id": 0, "seed_number": 0, "seed": 0, "map": 47,
            "map_name": spec.name, "map_hash": spec.content_hash, "a_spawn": spawn,
            "system_a": "random", "system_b": "idle",
            **{f"system_{t}_slot{i}": n for t, n in (("a", "random"), ("b", "idle"))
               for i in range(5)},
            "roster_a": "MWHRP", "roster_b": "MWHRP", "result": "draw", "points_a": 0,
            "points_b": 0, **dict.fromkeys(ev.base_columns(), 0), "ticks": TICK_LIMIT,
            "tick_limit": TICK_LIMIT, "winning_score": 20,
        })  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture(scope="session")
def web_recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One short real game (random vs idle on map 47): its replay, game-<n>.replay.zip, and
    its results table, games.csv (written by `marl_bgs_eval.save`: the real format). The game
    is recorded from its expected row (one compile, not two); only if it ends otherwise is the
    pair evaluated first."""
    import marl_bgs_eval as ev
    from marl_bgs_eval import replay_files
    from marl_bgs_eval.tdm import replays

    folder = tmp_path_factory.mktemp("recorded")
    a, b = ev.random_system(), ev.idle_system()
    games = _quiet_pair()
    try:
        (replay,) = replays.record(a, b, games.head(1))
    except ev.EvalError:  # the game scored after all: play the pair for its true rows
        games = ev.evaluate(a, b, maps=[47], games_per_map=2, tick_limit=TICK_LIMIT,
                            metrics="none", batch_size=2)  # fmt: skip
        (replay,) = replays.record(a, b, games.head(1))
    replay_files.save(replay, folder / f"game-{int(games['game'].iat[0])}.replay.zip")
    ev.save(games, folder / "games.csv")
    return folder


def _synthetic(folder: Path) -> None:
    """games.csv, ratings, matchups and measures of a synthetic five-System field."""
    import marl_bgs_eval as ev
    from marl_bgs_eval.synthetic import synthetic_games

    games = synthetic_games([1500, 1350, 1200, 1100, 950], maps=5, pairs_per_map=4, seed=3)
    names = dict(zip([f"s{k}" for k in range(5)], SYSTEMS, strict=True))
    games["system_a"] = [names[n] for n in games["system_a"]]
    games["system_b"] = [names[n] for n in games["system_b"]]
    games.insert(0, "game", np.arange(len(games)))
    record = {"format": "marl-bgs-results-v1", "games": len(games), "sha256": "0" * 64}
    games.to_csv(folder / "games.csv", index=False, lineterminator="\n")  # as `results.save`
    (folder / "games.csv.meta.json").write_text(json.dumps(record) + "\n")

    ratings = ev.rate(games, bootstrap=200, seed=0)
    divisions = [ev.division(e) for e in ratings["elo"]]
    ratings["division_tier"] = [d[0] for d in divisions]
    ratings["division"] = pd.array([d[1] for d in divisions], dtype="Int64")
    ratings["member"] = ratings["system"] != ratings["system"].iat[-1]
    ratings["team"] = [TEAMS[n] for n in ratings["system"]]
    # idle plays one game over and over: its pairings repeat (what `rate` says of such a System)
    ratings["repeats"] = ratings["system"] == "idle"
    ratings.to_csv(folder / "ratings.csv", index=False)
    (folder / "ratings.json").write_text(ratings.to_json(orient="records") or "[]")

    points = {"win": 1.0, "draw": 0.5, "loss": 0.0}
    games["score"] = [points[r] for r in games["result"]]
    matrix = games.pivot_table(index="system_a", columns="system_b", values="score")
    matrix = matrix.reindex(index=SYSTEMS, columns=SYSTEMS)
    matrix.index.name = "system_a"
    matrix.to_csv(folder / "matchups.csv")

    rng = np.random.default_rng(0)
    rows = []
    for name in SYSTEMS:
        for measure, kind, unit in (("kills_per_minute", "rate", "kills per minute"),
                                    ("focus_fire", "share", ""),
                                    ("teammate_distance", "mean", "map units")):  # fmt: skip
            value = float(rng.uniform(1, 5))
            rows.append({"system": name, "measure": measure, "kind": kind, "unit": unit,
                         "value": value, "low": value - 0.5, "high": value + 0.25,
                         "games": 160})  # fmt: skip
    rows.append({"system": "idle", "measure": "heal_share", "kind": "share", "unit": "",
                 "value": np.nan, "low": np.nan, "high": np.nan, "games": 160})  # fmt: skip
    pd.DataFrame(rows).to_csv(folder / "measures.csv", index=False)


def _season_json(folder: Path, ratings: pd.DataFrame) -> None:
    members = [s for s, m in zip(ratings["system"], ratings["member"], strict=True) if m]
    low = ratings[ratings["member"]].iloc[-1]
    season = {
        "rulebook": "v1", "season": 0, "mode": "tdm-v2", "engine_version": "0.1.0",
        "root_seed": 20260707, "rating_seed": 0, "bootstrap": 200, "maps": [47, 48, 49, 50, 51],
        "pairs_per_map": 4, "games_per_pairing": 40, "tick_limit": TICK_LIMIT,
        "winning_score": 20, "field": members,
        "entrants": {s: {"team": TEAMS[s], "source": f"builtin:{s}", "sha256": None}
                     for s in SYSTEMS},
        "challengers": [
            {"name": "delta", "team": TEAMS["delta"], "elo": 951.5, "elo_low": 900.0,
             "elo_high": 1001.0, "lowest_member": str(low["system"]),
             "lowest_elo": float(low["elo"]), "admitted": False, "first_game": 800,
             "first_seed_number": 40, "root_seed": 20260707},
            {"name": "bravo", "team": TEAMS["bravo"], "elo": 1350.0, "elo_low": 1300.0,
             "elo_high": 1400.0, "lowest_member": "idle", "lowest_elo": 1100.0,
             "admitted": True, "first_game": 400, "first_seed_number": 20, "root_seed": 1},
        ],
        "created": "2026-07-07T12:00:00Z",
    }  # fmt: skip
    (folder / "season.json").write_text(json.dumps(season, indent=1))


def _zero_shot(folder: Path) -> None:
    """studies/zero_shot.csv and .png as the study writes them, for a made-up summary (the
    study itself needs learned System files: test_population.py runs it)."""
    from marl_bgs_eval.tdm.zero_shot import plot_zero_shot
    from marl_bgs_tournament.studies import ZERO_SHOT_CHART, ZERO_SHOT_COLUMNS, ZERO_SHOT_TABLE

    rows = [("alpha", "bravo", 1210.5, "M", 40, -2.5, -4.0, -1.0, 2.4, 2.1, 0.3),
            ("alpha", "bravo", 1210.5, "P", 40, -1.25, -3.0, 0.5, 2.8, 2.7, 0.1),
            ("alpha", "random", None, "M", 40, -9.0, -11.5, -6.5, 4.1, 2.1, 2.0),
            ("alpha", "random", None, "P", 40, -7.5, -10.0, -5.0, 3.9, 2.7, 1.2)]  # fmt: skip
    table = pd.DataFrame(rows, columns=list(ZERO_SHOT_COLUMNS))
    table.to_csv(folder / ZERO_SHOT_TABLE, index=False)
    plot_zero_shot(table, folder / ZERO_SHOT_CHART, title="Season 3")


@pytest.fixture(scope="session")
def web_season_dir(web_recorded: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A season folder as the season runner writes it, plus one corrupt replay (game 999)."""
    import marl_bgs_eval as ev

    folder = tmp_path_factory.mktemp("season")
    (folder / "replays").mkdir()
    games = ev.load(web_recorded / "games.csv")
    game = int(games["game"].iat[0])
    name = f"game-{game}.replay.zip"
    shutil.copyfile(web_recorded / name, folder / "replays" / name)
    _synthetic(folder)
    _season_json(folder, pd.read_csv(folder / "ratings.csv"))
    from marl_bgs_tournament.studies import teamwork

    teamwork(folder, team_measures=False)  # studies/teamwork.csv and .png (synthetic games)
    _zero_shot(folder)
    (folder / "replays" / "game-999.replay.zip").write_bytes(b"PK\x03\x04 not really a zip")
    index = [
        {"game": game, "system_a": "random", "system_b": "idle", "map": 47,
         "result": str(games["result"].iat[0]), "file": f"replays/game-{game}.replay.zip"},
        {"game": 999, "system_a": "alpha", "system_b": "idle", "map": 48, "result": "win",
         "file": "replays/game-999.replay.zip"},
    ]  # fmt: skip
    (folder / "replays.json").write_text(json.dumps(index))
    return folder


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def _running(app: Any) -> Iterator[str]:
    """Serve `app` with uvicorn on 127.0.0.1 in a thread; yields its base URL."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="session")
def web_running() -> Callable[[Any], Any]:
    """`with web_running(app) as url:` serves `app` with uvicorn on 127.0.0.1 in a thread."""
    return _running


@pytest.fixture
def serve() -> Any:
    """`with serve(app) as url:` a real server of any app on 127.0.0.1."""
    return _running


@pytest.fixture(scope="session")
def web_site(web_season_dir: Path) -> Iterator[str]:
    """A real server of the season folder with submissions closed."""
    from marl_bgs_tournament.web import create_app

    with _running(create_app(web_season_dir)) as url:
        yield url


class FakeRunner:
    """A runner for tests: waits for `gate`, then for a file naming `name=<x>` writes
    challengers/<x>/decision.json and adds <x> to ratings.csv; a file holding FAIL raises, one
    holding LEAK fails as a careless runner would: naming the file by its server path."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self.calls: list[tuple[Path, Path, str, str | None]] = []

    def __call__(self, season_dir: Path, path: Path, team: str, token: str | None) -> None:
        from marl_bgs_tournament.errors import TournamentError

        self.calls.append((season_dir, path, team, token))
        self.gate.wait(30)
        text = path.read_bytes()[len(MAGIC) :].decode()
        if "FAIL" in text:
            raise TournamentError("runner: the System crashed in game 3")
        if "LEAK" in text:
            raise FileNotFoundError(2, "No such file or directory", str(season_dir / "entrants"))
        if not text.startswith("name="):
            return
        name = text.removeprefix("name=").strip()
        folder = season_dir / "challengers" / name
        folder.mkdir(parents=True, exist_ok=True)
        decision = {"name": name, "team": team, "elo": 1600.0, "elo_low": 1550.0,
                    "elo_high": 1650.0, "lowest_member": "idle", "lowest_elo": 1100.0,
                    "admitted": True}  # fmt: skip
        (folder / "decision.json").write_text(json.dumps(decision))
        ratings = pd.read_csv(season_dir / "ratings.csv")
        row = {**ratings.iloc[0].to_dict(), "system": name, "team": team, "elo": 1600.0,
               "elo_low": 1550.0, "elo_high": 1650.0}  # fmt: skip
        ratings = pd.concat([ratings, pd.DataFrame([row])]).sort_values("elo", ascending=False)
        ratings["rank"] = np.arange(1, len(ratings) + 1)
        tmp = season_dir / ".ratings.csv.tmp"
        ratings.to_csv(tmp, index=False)
        tmp.replace(season_dir / "ratings.csv")


def check_magic(path: Path) -> None:
    """A checker for tests: a System file starts with MAGIC."""
    from marl_bgs_tournament.errors import TournamentError

    with open(path, "rb") as f:
        if f.read(len(MAGIC)) != MAGIC:
            raise TournamentError("file: not a System file (it lacks the System file header)")


@contextmanager
def _upload_site(source: Path, folder: Path, **options: Any) -> Iterator[tuple[str, Path, Any]]:
    from marl_bgs_tournament.web import create_app

    shutil.copytree(source, folder)
    runner = FakeRunner()
    app = create_app(folder, checker=check_magic, runner=runner,
                     **{"max_upload_bytes": 64 << 10, "max_queue": 3, **options})  # fmt: skip
    with _running(app) as url:
        yield url, folder, runner
        runner.gate.set()


@pytest.fixture
def web_upload_site(web_season_dir: Path, tmp_path: Path) -> Iterator[tuple[str, Path, FakeRunner]]:
    """A real server of a copy of the season folder that takes uploads: 64 KiB at most, three
    waiting at once. Yields (URL, its season folder, its runner)."""
    with _upload_site(web_season_dir, tmp_path / "season") as site:
        yield site


@pytest.fixture
def web_upload_site_with(web_season_dir: Path, tmp_path: Path) -> Callable[..., Any]:
    """`with web_upload_site_with(**create_app_options) as (url, folder, runner):` the upload
    site with other limits."""
    return lambda **options: _upload_site(web_season_dir, tmp_path / "season", **options)


@pytest.fixture(scope="session")
def web_shots_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the browser tests leave their screenshots."""
    return tmp_path_factory.mktemp("screenshots")


def _chromium(url: str, *args: str) -> str:
    """Headless Chromium on `url` with `args` (after the page's scripts ran); its stdout."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--hide-scrollbars", "--force-device-scale-factor=1",
             f"--user-data-dir={profile}", "--virtual-time-budget=5000", *args, url],
            check=True, capture_output=True, timeout=90, text=True,
        )  # fmt: skip
    return done.stdout


def _need_chromium() -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"headless Chromium is not installed at {CHROMIUM} (apt-get install chromium)")


@pytest.fixture(scope="session")
def web_screenshot() -> Callable[..., Path]:
    """`web_screenshot(url, png, (width, height))`: headless Chromium's picture of a page after
    its scripts ran (skips when Chromium is not installed)."""
    _need_chromium()

    def take(url: str, png: Path, size: tuple[int, int] = (1200, 900)) -> Path:
        _chromium(url, f"--screenshot={png}", f"--window-size={size[0]},{size[1]}")
        assert png.exists(), f"Chromium wrote no screenshot of {url}"
        return png

    return take


@pytest.fixture(scope="session")
def web_dom() -> Callable[[str], str]:
    """`web_dom(url)`: the page's DOM after its scripts ran, as headless Chromium has it."""
    _need_chromium()
    return lambda url: _chromium(url, "--dump-dom")


# --- the season tests' entrants: three System files of one architecture ------------------------

MIX_BATCHES = (1, 16)
MIX_WEIGHTS = {"mix0": 0.0, "mix5": 0.5, "mix9": 0.9}  # share of games' ticks spent idle


def mix_act(params: Any, keys: Any, memory: Any, inputs: Any) -> Any:
    """A parametric test policy: in each game and tick, idle with probability params["idle"],
    else uniform legal actions (the engine's sampler). Weights are data: files of this
    architecture share compiled programs."""
    import jax
    import jax.numpy as jnp

    from marl_bgs import TeamDeathmatch

    legal = jax.vmap(TeamDeathmatch().sample_legal)(keys, inputs.masks)
    u = jax.vmap(lambda k: jax.random.uniform(jax.random.fold_in(k, 7)))(keys)
    return jnp.where((u < params["idle"])[:, None, None], 0, legal).astype(jnp.int32), memory


def mix_system(name: str, idle: float) -> Any:
    """A System of the test architecture (the same `mix_act` for every weight)."""
    import jax.numpy as jnp

    import marl_bgs_eval as ev

    return ev.system(mix_act, name=name, params={"idle": jnp.float32(idle)})


@pytest.fixture(scope="session")
def mix_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """mix0, mix5 and mix9 (and challengers mix1, mix95) as System files, each of its own team."""
    from marl_bgs_tournament import export_system

    folder = tmp_path_factory.mktemp("entrants")
    weights = {**MIX_WEIGHTS, "mix1": 0.1, "mix95": 0.95}
    files = {}
    for name, idle in weights.items():
        files[name] = folder / f"{name}.mbgs"
        export_system(mix_system(name, idle), files[name], team=f"team-{name}",
                      training={"maps": [0, 1, 2], "scenarios": []},
                      batch_sizes=MIX_BATCHES)  # fmt: skip
    return files


@pytest.fixture(scope="session")
def mix_originals() -> dict[str, Any]:
    """The Systems the field's files were exported from."""
    return {name: mix_system(name, idle) for name, idle in MIX_WEIGHTS.items()}


# --- hostile programs for the sandbox's tests -------------------------------------------------


def _time_bomb(at: int, name: str = ""):
    """Plays like random, then from tick `at` (counted in its memory) never ends a move."""
    import jax
    import jax.numpy as jnp

    import marl_bgs_eval as ev
    from marl_bgs import TeamDeathmatch

    def act(keys, memory, inputs):
        legal = jax.vmap(TeamDeathmatch().sample_legal)(keys, inputs.masks)

        def forever(x):  # |x| >= 0 for ever: XLA cannot know it
            return jax.lax.while_loop(lambda c: c >= 0, jnp.abs, x)

        late = jnp.max(memory)
        stuck = jax.lax.cond(late >= at, forever, lambda x: x, late)
        return jnp.where(stuck == -7, 0, legal).astype(jnp.int32), memory + 1

    return ev.system(act, name=name or f"bomb{at}", init=lambda key: jnp.int32(0))


def _memory_hog(floats: int):
    """Carries `floats` float32 per game through a loop (XLA must hold them all at once)."""
    import jax
    import jax.numpy as jnp

    import marl_bgs_eval as ev

    def act(keys, memory, inputs):
        big = jnp.zeros((inputs.obs.shape[0], floats), jnp.float32) + inputs.obs[:, 0, :1]
        _, big = jax.lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1] * 2.0),
                                    (0, big))  # fmt: skip
        never = (big[:, :1, None] > 1e30).astype(jnp.int32)
        return never * jnp.ones((1, 5, 3), jnp.int32), memory

    return ev.system(act, name="hog")


@pytest.fixture(scope="session")
def hostile() -> Any:
    """Hostile System builders: `hostile.time_bomb(at, name)` (never ends a move from tick
    `at`) and `hostile.memory_hog(floats)` (holds `floats` float32 per game at once)."""
    from types import SimpleNamespace

    return SimpleNamespace(time_bomb=_time_bomb, memory_hog=_memory_hog)


def _system_zip(
    path: Path,
    replace: dict[str, bytes] | None = None,
    edit: Callable[[dict[str, Any]], Any] | None = None,
    method: int = 8,  # zipfile.ZIP_DEFLATED
) -> bytes:
    """The bytes of a copy of the System file at `path` whose members `replace` names are
    replaced (the manifest lists their sha256: everything the reader hashes agrees) and whose
    manifest `edit(dict)` changed."""
    import hashlib

    from marl_bgs_eval.fuzzing import zip_bytes, zip_members

    members = dict(zip_members(path))
    manifest = json.loads(members["manifest.json"])
    for name, data in (replace or {}).items():
        members[name] = data
        manifest["members"][name] = hashlib.sha256(data).hexdigest()
    if edit is not None:
        edit(manifest)
    members["manifest.json"] = json.dumps(manifest).encode()
    return zip_bytes(list(members.items()), method)


@pytest.fixture(scope="session")
def system_zip() -> Callable[..., bytes]:
    """`system_zip(path, replace={member: bytes}, edit=fn, method=zipfile.ZIP_STORED)`: a crafted
    copy of a System file, as bytes (see `_system_zip`)."""
    return _system_zip


# --- a released population ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def tiny_population(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A population of one learner (feedforward IPPO) trained at the tiny budget: three updates,
    each checkpoint validated, the best and the milestone kept."""
    from marl_bgs_train.population import train_population

    out = tmp_path_factory.mktemp("population") / "pop"
    train_population(out, "tiny", learners=["ippo-ff"], progress=False)
    return out


@pytest.fixture(scope="session")
def tiny_release(tiny_population: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """That population released (batch size 2, what the tests play): its release folder."""
    from marl_bgs_tournament.population import release

    out = tmp_path_factory.mktemp("release") / "rel"
    release(tiny_population, out, batch_sizes=(2,))
    return out


@pytest.fixture(scope="session")
def made_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release folder of `release`'s form, made without training or exporting: two members
    with records of the release's form (the fuzz damages its index). Reading a release sizes and
    hashes a member's file but never opens it, so the members hold a few distinct bytes each."""
    from marl_bgs_tournament.population import (
        BEST_KIND,
        MILESTONE_KIND,
        RELEASE_FILE,
        RELEASE_FORMAT,
        RELEASE_VERSION,
    )
    from marl_bgs_tournament.portable import file_sha256

    folder = tmp_path_factory.mktemp("made-release")
    members = {}
    for member, kind, update in (("ippo-ff", BEST_KIND, 3), ("ippo-ff-at-16", MILESTONE_KIND, 1)):
        path = folder / f"{member}.mbgs"
        path.write_bytes(f"the file of {member}".encode() * update)
        record = {"learner": "ippo-ff", "kind": kind, "budget": "tiny", "seed": 0,
                  "update": update, "steps": 16 * update, "commit": None,
                  "settings": {"name": "ippo-ff"},
                  "curve": [[16.0 * (k + 1), 0.5, -0.001] for k in range(update)],
                  "validation": [{"update": k + 1} for k in range(update)]}  # fmt: skip
        members[member] = {"file": path.name, "bytes": path.stat().st_size,
                           "sha256": file_sha256(path), "record": record}  # fmt: skip
    index = {"format": RELEASE_FORMAT, "version": RELEASE_VERSION, "mode": "tdm",
             "budget": "tiny", "members": members}  # fmt: skip
    (folder / RELEASE_FILE).write_text(json.dumps(index, indent=1) + "\n")
    return folder
