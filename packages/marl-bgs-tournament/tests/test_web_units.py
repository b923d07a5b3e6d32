"""The web package's parts on their own: file reading and caching, table and JSON checks, the
heat map's colours, upload names, failure messages and the submissions folder's retention."""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from pathlib import Path

import pytest

from marl_bgs_eval.tdm import legend
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable import check_name
from marl_bgs_tournament.tdm import replay_key
from marl_bgs_tournament.web import heatmap, season_files, tables
from marl_bgs_tournament.web.files import FileCache, SeasonDataError, inside, read_bytes
from marl_bgs_tournament.web.submissions import (
    Retention,
    StorageFullError,
    Submissions,
    public_message,
)
from marl_bgs_tournament.web.uploads import Upload, UploadError, check_team, safe_filename

RATINGS_HEAD = (
    "rank,system,elo,elo_low,elo_high,tier,division_tier,division,win_chance,games,wins,"
    "draws,losses,member,team\n"
)


def test_inside_refuses_paths_and_links_out_of_the_folder(tmp_path: Path) -> None:
    (tmp_path / "season").mkdir()
    os.symlink("/etc", tmp_path / "season" / "link")
    with pytest.raises(SeasonDataError, match="outside the season folder"):
        inside(tmp_path / "season", "../secret")
    with pytest.raises(SeasonDataError, match="outside the season folder"):
        inside(tmp_path / "season", "link/passwd")
    assert inside(tmp_path / "season", "a/b") == (tmp_path / "season" / "a" / "b").resolve()


def test_read_bytes_refuses_large_files_and_folders(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(SeasonDataError, match="more than the 100 allowed"):
        read_bytes(tmp_path / "big", 100)
    with pytest.raises(SeasonDataError, match="not a regular file"):
        read_bytes(tmp_path, 100)
    with pytest.raises(SeasonDataError, match="missing"):
        read_bytes(tmp_path / "none", 100)


def test_file_cache_parses_again_only_when_the_file_changes(tmp_path: Path) -> None:
    path, calls = tmp_path / "f.json", []

    def parse(p: Path) -> object:
        calls.append(p)
        return season_files.read_json(p)

    cache = FileCache()
    path.write_text("[1]")
    assert cache.get(path, parse) == [1]
    assert cache.get(path, parse) == [1]
    assert len(calls) == 1
    path.write_text("[1, 2]")
    assert cache.get(path, parse) == [1, 2]
    path.write_text("[1, ")
    with pytest.raises(SeasonDataError, match="not JSON"):
        cache.get(path, parse)
    with pytest.raises(SeasonDataError):
        cache.get(path, lambda p: 1 / 0)  # any parser failure becomes a SeasonDataError


def test_file_cache_keeps_at_most_its_limit(tmp_path: Path) -> None:
    cache, calls = FileCache(max_entries=2), []
    for k in range(3):
        (tmp_path / f"{k}.json").write_text(str(k))

    def parse(p: Path) -> object:
        calls.append(p.name)
        return season_files.read_json(p)

    for k in (0, 1, 2, 2, 1, 0):
        assert cache.get(tmp_path / f"{k}.json", parse) == k
    assert calls == ["0.json", "1.json", "2.json", "0.json"]


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ("1,a,NaN,1,2,Gold 1,Gold,1,0.5,2,1,0,1,true,T", "column elo"),
        ("1,a,1200,1,2,Gold 1,Gold,1,1.5,2,1,0,1,true,T", "column win_chance"),
        ("0,a,1200,1,2,Gold 1,Gold,1,0.5,2,1,0,1,true,T", "column rank"),
        ("1,a,1200,1,2,Gold 1,Gold,1,0.5,2,1,0,1,maybe,T", "column member"),
        ("1,a,1200,1,2,Gold 1,Gold,1,0.5,3,1,0,1,true,T", "differ from games"),
        ("1,,1200,1,2,Gold 1,Gold,1,0.5,2,1,0,1,true,T", "column system"),
    ],
)
def test_bad_rating_cells_are_named(tmp_path: Path, row: str, said: str) -> None:
    (tmp_path / "ratings.csv").write_text(RATINGS_HEAD + row + "\n")
    with pytest.raises(SeasonDataError, match=f"ratings.csv: .*{said}"):
        tables.ratings(tmp_path / "ratings.csv")


def test_ratings_read_grandmasters_and_sort_by_rank(tmp_path: Path) -> None:
    rows = [
        "2,b,1300,1250,1350,Gold 3,Gold,3.0,0.6,4,2,1,1,False,T",
        "1,a,2100,2000,2200,Grandmaster,Grandmaster,,0.99,4,4,0,0,True,T",
    ]
    (tmp_path / "ratings.csv").write_text(RATINGS_HEAD + "\n".join(rows) + "\n")
    got = tables.ratings(tmp_path / "ratings.csv")
    assert [(r["system"], r["division"], r["member"]) for r in got] == [
        ("a", None, True),
        ("b", 3, False),
    ]
    (tmp_path / "ratings.csv").write_text(RATINGS_HEAD + rows[0] + "\n" + rows[0] + "\n")
    with pytest.raises(SeasonDataError, match="listed twice"):
        tables.ratings(tmp_path / "ratings.csv")


def test_ratings_read_distinct_games_and_repeats_where_written(tmp_path: Path) -> None:
    """Season folders written before the columns lack them: no count, no mark."""
    head = RATINGS_HEAD.replace("team\n", "team,distinct_games,repeats\n")
    row = "1,a,1300,1250,1350,Gold 3,Gold,3,0.6,4,2,1,1,True,T"
    (tmp_path / "ratings.csv").write_text(head + row + ",1,True\n")
    [got] = tables.ratings(tmp_path / "ratings.csv")
    assert (got["distinct_games"], got["repeats"]) == (1, True)
    (tmp_path / "ratings.csv").write_text(RATINGS_HEAD + row + "\n")
    [got] = tables.ratings(tmp_path / "ratings.csv")
    assert (got["distinct_games"], got["repeats"]) == (None, False)
    for cells, said in (
        (",5,False", "distinct_games must lie in"),
        (",0,False", "must lie in"),
        (",2,maybe", "column repeats"),
        (",x,False", "column distinct_games"),
    ):
        (tmp_path / "ratings.csv").write_text(head + row + cells + "\n")
        with pytest.raises(SeasonDataError, match=f"ratings.csv: row 1.*{said}"):
            tables.ratings(tmp_path / "ratings.csv")


def test_season_json_names_a_known_bootstrap_scheme(tmp_path: Path) -> None:
    base = {"rulebook": "v1", "season": 0, "maps": [47], "games_per_pairing": 2,
            "root_seed": 1, "field": ["a"], "entrants": {}}  # fmt: skip
    for scheme, ok in (("maps", True), ("pairs", True), ("bags", False)):
        (tmp_path / "season.json").write_text(json.dumps({**base, "bootstrap_scheme": scheme}))
        if ok:
            assert season_files.season(tmp_path / "season.json")["bootstrap_scheme"] == scheme
        else:
            with pytest.raises(SeasonDataError, match="bootstrap_scheme: expected one of"):
                season_files.season(tmp_path / "season.json")
    (tmp_path / "season.json").write_text(json.dumps(base))
    assert season_files.season(tmp_path / "season.json")["bootstrap_scheme"] is None


def test_matchups_and_games_are_checked(tmp_path: Path) -> None:
    (tmp_path / "m.csv").write_text("system_a,a,b\na,,0.25\nb,0.75,\n")
    got = tables.matchups(tmp_path / "m.csv")
    assert got["scores"] == [[None, 0.25], [0.75, None]]
    (tmp_path / "m.csv").write_text("system_a,a\na,-0.1\n")
    with pytest.raises(SeasonDataError, match="row 1, column a"):
        tables.matchups(tmp_path / "m.csv")
    (tmp_path / "g.csv").write_text("# {}\ngame,system_a,system_b,result\n0,a,b,win\n1,b,a,won\n")
    with pytest.raises(SeasonDataError, match="row 2, column result"):
        tables.records(tmp_path / "g.csv")
    (tmp_path / "g.csv").write_text("game,system_a\n0,a\n")
    with pytest.raises(SeasonDataError, match=r"g\.csv: not a readable CSV"):
        tables.records(tmp_path / "g.csv")


def test_season_json_is_checked_field_by_field(tmp_path: Path) -> None:
    path = tmp_path / "season.json"
    good = {"rulebook": "v1", "season": 0, "maps": [47], "games_per_pairing": 8,
            "root_seed": 1, "field": ["a"], "entrants": {"a": {"team": "T", "source": "s"}},
            "challengers": []}  # fmt: skip
    path.write_text(json.dumps(good))
    assert season_files.season(path)["entrants"]["a"]["sha256"] is None
    cases = [
        ("maps", "47", "maps"),
        ("root_seed", -1, "root_seed"),
        ("field", [""], "field"),
        ("season", True, "season"),
        ("challengers", [{"name": "c"}], r"challengers\[0\]\.team"),
    ]
    for key, value, said in cases:
        path.write_text(json.dumps({**good, key: value}))
        with pytest.raises(SeasonDataError, match=rf"season\.json\.{said}"):
            season_files.season(path)
    path.write_text('{"rulebook": NaN}')
    with pytest.raises(SeasonDataError, match="not JSON"):
        season_files.season(path)


def test_replay_index_accepts_only_its_own_file_names(tmp_path: Path) -> None:
    path = tmp_path / "replays.json"
    entry = {"game": 3, "system_a": "a", "system_b": "b", "map": 47, "result": "win"}
    for file in ("replays/game-4.replay.zip", "/etc/passwd", "replays/../game-3.replay.zip"):
        path.write_text(json.dumps([{**entry, "file": file}]))
        with pytest.raises(SeasonDataError, match=r"expected 'replays/game-3\.replay\.zip'"):
            season_files.replay_index(path)
    path.write_text(json.dumps([{**entry, "file": "replays/game-3.replay.zip"}] * 2))
    with pytest.raises(SeasonDataError, match="listed twice"):
        season_files.replay_index(path)


def test_heat_map_steps_run_from_red_through_grey_to_blue() -> None:
    assert heatmap.step(None) is None
    assert heatmap.step(float("nan")) is None
    assert [heatmap.step(s) for s in (0.0, 0.04, 0.5, 0.96, 1.0)] == [0, 0, 5, 10, 10]
    assert heatmap.PALETTE[0] == heatmap.LOW
    assert heatmap.PALETTE[-1] == heatmap.HIGH
    reds = [c[0] - c[2] for c in heatmap.PALETTE]
    assert reds == sorted(reds, reverse=True)  # redder below 0.5, bluer above
    assert len(set(heatmap.PALETTE)) == heatmap.STEPS
    assert heatmap.EMPTY not in heatmap.PALETTE


def test_the_replay_key_is_the_legends() -> None:
    """The page's key holds the legend's entries of what the canvas draws, each sample's colour
    in /key.css, and the canvas draws with the legend's colours."""
    entries = replay_key.entries()
    assert [(e["symbol"], e["meaning"]) for e in entries] == [
        (e.symbol, e.meaning) for e in legend.key(*replay_key.GROUPS)
    ]
    assert "dead" in replay_key.GROUPS  # the web draws the dead, but no arrows or pads
    assert "marks" not in replay_key.GROUPS
    css = replay_key.css()
    for e, want in zip(entries, legend.key(*replay_key.GROUPS), strict=True):
        assert e["plain"] == (want.colour is None)
        if want.colour is not None:
            assert f".{e['css']} {{ --key: {heatmap.hex_colour(want.colour)}; }}" in css
    colours = replay_key.canvas_colours()
    assert colours["team"] == [heatmap.hex_colour(c) for c in legend.TEAM_COLOURS]
    assert colours["badges"]["B"] == heatmap.hex_colour(legend.BADGES["burst"].colour or (0,) * 3)


def test_team_names_and_file_names() -> None:
    """Uploads name teams by the System files' rule (`portable.check_name`), one rule."""
    assert check_team("Team-Alpha_2.0+x") == "Team-Alpha_2.0+x"
    assert check_team("x" * 64) == "x" * 64
    for bad in ("", " ", "Team Alpha", " lab", "-x", "a/b", "é" * 3, "x" * 65, None, "organisers"):
        with pytest.raises(UploadError) as err:
            check_team(bad)
        assert err.value.field == "team"
        assert err.value.status == 422
        if bad not in ("", None, "organisers"):
            with pytest.raises(TournamentError, match=r"^team: expected 1-64"):
                check_name(bad, "team")
    assert safe_filename("../../x/bot.sys") == "bot.sys"
    assert safe_filename("C:\\Users\\me\\bot.sys") == "bot.sys"
    for odd in (None, "", "..", ".hidden", "a b", "a..b", "x" * 101):
        assert safe_filename(odd) == "upload.bin"


@pytest.mark.parametrize(
    ("raised", "shown"),
    [(TournamentError("file: /srv/t/season/submissions/ab/system.mbgs: not a zip"),
      "file: system.mbgs: not a zip"),
     (FileNotFoundError(2, "No such file", "/tmp/x/season/entrants"),
      "FileNotFoundError: [Errno 2] No such file: 'entrants'"),
     (TournamentError("season: /srv/season is busy"), "season: season is busy"),
     (TournamentError("a/b/c and (wins + draws / 2) and ./rel/x stay"),
      "a/b/c and (wins + draws / 2) and ./rel/x stay"),
     (TournamentError("in PosixPath('/home/me/.cache/jax/x.py') at /"),
      "in PosixPath('x.py') at /")],
)  # fmt: skip
def test_failure_messages_lose_server_paths(raised: Exception, shown: str) -> None:
    assert public_message(raised) == shown
    assert len(public_message(TournamentError("x" * 5000))) == 2000


def _submissions(tmp_path: Path, runner: object, **retention: float) -> Submissions:
    limits = {"max_bytes": 1 << 20, "keep": 100, "keep_days": 30.0, **retention}
    return Submissions(tmp_path, runner, 8, Retention(**limits))  # type: ignore[arg-type]


def _accept(subs: Submissions, data: bytes = b"data") -> str:
    path = subs.incoming() / "u.part"
    path.write_bytes(data)
    return subs.accept(Upload(path, "u.sys", "lab", None, len(data), "0" * 64), None)["id"]


def test_finished_submissions_lose_their_upload_and_only_the_newest_are_kept(
    tmp_path: Path,
) -> None:
    gate, seen = threading.Event(), []
    subs = _submissions(tmp_path, lambda *a: (seen.append(a[1].read_bytes()), gate.wait(10)),
                        keep=2)  # fmt: skip
    gate.set()
    done = []
    for k in range(4):
        done.append(_accept(subs, b"file %d" % k))
        subs.join()
    assert seen == [b"file 0", b"file 1", b"file 2", b"file 3"]
    kept = sorted(p.parent.name for p in (tmp_path / "submissions").glob("*/status.json"))
    assert kept == sorted(done[2:])  # the two newest
    assert not list((tmp_path / "submissions").rglob("system.mbgs"))

    gate.clear()  # a running submission stays, however old its status
    running = _accept(subs)
    deadline = time.monotonic() + 10
    while subs.status(running)["state"] != "running" and time.monotonic() < deadline:
        time.sleep(0.01)
    old = time.time() - 31 * 86400
    for sid in (running, done[3]):
        os.utime(tmp_path / "submissions" / sid / "status.json", (old, old))
    subs.prune()
    assert not (tmp_path / "submissions" / done[3]).exists()  # older than keep_days
    assert (tmp_path / "submissions" / running / "system.mbgs").exists()
    gate.set()
    subs.join()
    subs.stop()


def test_recover_marks_interrupted_submissions_and_removes_their_uploads(tmp_path: Path) -> None:
    sid = uuid.uuid4().hex  # as an earlier process left it: running, its upload still there
    (tmp_path / "submissions" / sid).mkdir(parents=True)
    (tmp_path / "submissions" / sid / "status.json").write_text(json.dumps(
        {"id": sid, "team": "lab", "state": "running", "message": ""}))  # fmt: skip
    (tmp_path / "submissions" / sid / "system.mbgs").write_bytes(b"program")
    subs = _submissions(tmp_path, lambda *a: None)
    (subs.incoming() / "stale.part").write_bytes(b"half an upload")
    subs.recover()
    assert subs.status(sid)["state"] == "failed"
    assert "interrupted" in subs.status(sid)["message"]
    assert not list((tmp_path / "submissions").rglob("system.mbgs"))
    assert not list((tmp_path / "submissions").rglob("*.part"))


def test_the_folder_bound_is_exact(tmp_path: Path) -> None:
    subs = _submissions(tmp_path, lambda *a: None, max_bytes=1000)
    (subs.incoming() / "a.part").write_bytes(b"x" * 1000)
    subs.check_room()  # exactly at the bound: room
    (subs.incoming() / "b.part").write_bytes(b"x")
    with pytest.raises(StorageFullError, match="holds 1001 bytes, over its bound of 1000"):
        subs.check_room()
