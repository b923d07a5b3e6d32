"""A season end to end on CPU: three System files of one architecture (one compiled program for
every pairing), the joint Elo fit, a challenger, the published folder and the command line."""

from __future__ import annotations

import json
import secrets
import shutil

import pandas as pd
import pytest
from typer.testing import CliRunner

import marl_bgs_eval as ev
from marl_bgs_eval import replay_files
from marl_bgs_tournament import Settings, TournamentError, challenge, rulebook, run_season
from marl_bgs_tournament import season as season_module
from marl_bgs_tournament.cli import app
from marl_bgs_tournament.modes import held_out_layouts
from marl_bgs_tournament.season import (
    ORGANISERS,
    admission,
    elo_games,
    entrant,
    read_season,
    settings_of,
)

SMALL = Settings(pairs_per_map=1, tick_limit=100, winning_score=3, batch_size=16, bootstrap=200,
                 replays=1, checks=("training_declared",))  # fmt: skip
FIELD = ["mix0", "mix5", "mix9"]
TEST_MAPS = held_out_layouts("tdm")  # a season's default maps


def _programs_built(run):
    """run() and the play programs its sandboxed games built (System files play only there)."""
    built = []
    real = season_module.sandbox.play_games

    def spy(*args, **kwargs):
        played = real(*args, **kwargs)
        built.append(played.programs)
        return played

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(season_module.sandbox, "play_games", spy)
        return run(), sum(built)


@pytest.fixture(scope="module")
def season(mix_files, tmp_path_factory):
    """The season folder after the round robin, and the number of play programs it built."""
    out = tmp_path_factory.mktemp("season") / "s0"
    record, built = _programs_built(
        lambda: run_season([mix_files[n] for n in FIELD], out, SMALL, root_seed=11)
    )
    return out, record, built


@pytest.fixture(scope="module")
def challenged(season, mix_files):
    """The season after one challenger, with the decision and the play programs it built."""
    out, _, _ = season
    return _programs_built(lambda: challenge(out, mix_files["mix1"], root_seed=12))


def test_the_round_robin_plays_every_scheduled_game_once(season) -> None:
    out, record, _ = season
    games = ev.load(out / "games.parquet")
    assert games.equals(ev.load(out / "games.csv"))
    assert len(games) == 3 * 10
    assert sorted(games["game"]) == list(range(30))
    assert set(games["map"]) == set(TEST_MAPS)
    for row in record["schedule"]:
        block = games[(games["game"] >= row["first_game"])
                      & (games["game"] < row["first_game"] + row["games"])]  # fmt: skip
        assert set(block["system_a"]) == {row["system_a"]}
        assert set(block["system_b"]) == {row["system_b"]}
        assert sorted(block["seed_number"]) == sorted(
            [row["first_seed_number"] + k // 2 for k in range(row["games"])]
        )
        assert (block.groupby("seed_number")["a_spawn"].nunique() == 2).all()  # swapped ends
    assert record["root_seed"] == 11
    assert record["field"] == FIELD
    assert record["games_per_pairing"] == 10
    assert record["rulebook"] == "v1"


def test_every_table_of_a_season_folder_opens_with_plain_pandas(season) -> None:
    """Each CSV of the folder is a plain table (header first, no comment line); the games' and
    their integrity record beside them (games.csv.meta.json)."""
    out, _, _ = season
    tables = sorted(out.rglob("*.csv"))
    assert {"games.csv", "ratings.csv", "matchups.csv", "measures.csv"} <= {p.name for p in tables}
    for path in tables:
        assert not path.read_text(encoding="utf-8").startswith("#"), path
        assert len(pd.read_csv(path).columns) > 1, path
    plain = ev.results.normalize(pd.read_csv(out / "games.csv"))
    pd.testing.assert_frame_equal(plain, ev.load(out / "games.csv"))
    assert (out / "games.csv.meta.json").is_file()


def test_one_program_serves_every_pairing_of_one_architecture(season, challenged) -> None:
    assert season[2] == 1  # three pairings of three files, one program
    assert challenged[1] == 1  # the challenger's three pairings: one too (its own process)


def test_ratings_are_one_joint_fit_of_all_games(season) -> None:
    out, record, _ = season
    table = pd.read_csv(out / "ratings.csv")
    fit = ev.rate(ev.load(out / "games.csv"), bootstrap=SMALL.bootstrap, seed=SMALL.rating_seed)
    assert list(table["system"]) == list(fit["system"])
    assert table["elo"].to_numpy() == pytest.approx(fit["elo"].to_numpy())
    assert record["bootstrap_scheme"] == "pairs"  # the rulebook's default
    assert table[["distinct_games", "repeats"]].equals(fit[["distinct_games", "repeats"]])
    assert table["elo"].mean() == pytest.approx(1200.0)
    assert (table["elo_low"] <= table["elo"]).all()
    assert (table["elo"] <= table["elo_high"]).all()
    assert list(table["tier"]) == [ev.tier(e) for e in table["elo"]]
    assert table["member"].all()
    assert set(table["team"]) == {f"team-{n}" for n in FIELD}
    assert json.loads((out / "ratings.json").read_text())[0]["system"] == table["system"][0]


def test_matchups_measures_and_replays_are_published(season) -> None:
    out, _, _ = season
    matrix = pd.read_csv(out / "matchups.csv", index_col="system_a")
    assert list(matrix.index) == FIELD
    assert list(matrix.columns) == FIELD
    measures = pd.read_csv(out / "measures.csv")
    assert set(measures["system"]) == set(FIELD)
    assert len(measures) > 3 * 10
    index = json.loads((out / "replays.json").read_text())
    assert len(index) == SMALL.replays
    replay = replay_files.load(out / index[0]["file"])
    games = ev.load(out / "games.csv").set_index("game")
    assert replay.header["result"] == games.loc[index[0]["game"], "result"]


def test_a_challenger_is_decided_by_the_joint_fit_and_published(season, challenged) -> None:
    out, _, _ = season
    decision, _ = challenged
    mine = ev.load(out / "challengers" / "mix1" / "games.csv")
    assert set(mine["system_a"]) == {"mix1"}
    assert len(mine) == 3 * 10
    assert sorted(mine["game"]) == list(range(30, 60))  # numbered after the field's blocks
    table = pd.read_csv(out / "challengers" / "mix1" / "ratings.csv").set_index("system")
    assert decision["elo"] == pytest.approx(table.loc["mix1", "elo"])
    lowest = min(FIELD, key=lambda m: table.loc[m, "elo"])
    assert decision["lowest_member"] == lowest
    assert decision["admitted"] == bool(table.loc["mix1", "elo"] > table.loc[lowest, "elo"])
    record = read_season(out)
    assert record["challengers"][-1] == json.loads(
        (out / "challengers" / "mix1" / "decision.json").read_text()
    )
    field = [("mix1" if m == decision["leaves"] else m) for m in FIELD]
    assert record["field"] == field
    assert set(pd.read_csv(out / "ratings.csv").query("member")["system"]) == set(field)
    with pytest.raises(TournamentError, match="already entered"):
        challenge(out, record_file(out, "mix1"))


def record_file(out, name):
    return out / "entrants" / f"{name}.mbgs"


def test_naming_a_members_team_without_its_token_takes_no_seat(season, challenged, mix_files):
    """The attack one seat per team allowed: a challenger naming the top member's team (so that,
    admitted, it evicts that member) is refused before any game unless it gives that team's
    token; the tokens were shown once (returned, printed) and are in no file of the folder."""
    out, record, _ = season
    decision, _ = challenged
    top = pd.read_csv(out / "ratings.csv").query("member").iloc[0]
    kept = [out / "season.json", out / "ratings.csv", out / "all-games.parquet", out / "teams.json"]
    before = [p.read_bytes() for p in kept]
    for token in (None, secrets.token_urlsafe(32)):
        with pytest.raises(TournamentError, match=f"^token: .*'{top['team']}'"):
            challenge(out, mix_files["mix95"], team=str(top["team"]), token=token)
    cli = CliRunner().invoke(app, ["challenge", str(out), str(mix_files["mix95"]), "--team",
                                   str(top["team"])],
                             env={"MARL_BGS_TEAM_TOKEN": secrets.token_urlsafe(32)})  # fmt: skip
    assert cli.exit_code == 2
    assert f"token: this is not team '{top['team']}''s token" in cli.output
    assert [p.read_bytes() for p in kept] == before
    assert not (out / "challengers" / "mix95").exists()
    assert set(record["tokens"]) == {f"team-{n}" for n in FIELD}
    assert decision["token"] is not None  # mix1's team was new: its token, once
    shown = [*record["tokens"].values(), decision["token"]]
    files = [p.read_bytes() for p in out.rglob("*") if p.is_file()]
    assert not any(t.encode() in f for t in shown for f in files)


def test_every_challenger_meets_a_member_on_the_same_games(season, challenged, mix_files) -> None:
    out, _, _ = season
    challenge(out, mix_files["mix95"], root_seed=13)
    one = ev.load(out / "challengers" / "mix1" / "games.csv")
    two = ev.load(out / "challengers" / "mix95" / "games.csv")
    cols = ["game", "map", "a_spawn", "seed_number", "pair_id"]
    assert one[cols].reset_index(drop=True).equals(two[cols].reset_index(drop=True))
    assert (
        json.loads((out / "challengers" / "mix95" / "decision.json").read_text())["root_seed"] == 13
    )


@pytest.mark.parametrize(
    ("elo", "teams", "expected"),
    [
        ({"a": 1300, "b": 1100, "c": 1250}, {}, (True, "b", "b")),
        ({"a": 1300, "b": 1100, "c": 1050}, {}, (False, "b", None)),
        ({"a": 1300, "b": 1100, "c": 1100}, {}, (False, "b", None)),  # a tie does not beat
        ({"a": 1300, "b": 1100, "c": 1250}, {"a": "lab", "c": "lab"}, (True, "b", "a")),
    ],
)
def test_admission_rule(elo, teams, expected) -> None:
    teams = {"a": ORGANISERS, "b": ORGANISERS, "c": "new"} | teams
    assert admission(elo, ["a", "b"], teams, "c") == expected


def test_scenario_results_never_feed_elo(season) -> None:
    out, _, _ = season
    games = ev.load(out / "games.csv")
    with pytest.raises(TournamentError, match="scenario results never feed Elo"):
        elo_games(games.assign(scenario="hunter-trap"), TEST_MAPS)
    with pytest.raises(TournamentError, match="not the season's maps"):
        elo_games(games, (47, 48))


def test_a_season_folder_is_written_once(season, mix_files) -> None:
    out, _, _ = season
    with pytest.raises(TournamentError, match="not empty"):
        run_season([mix_files["mix0"], mix_files["mix5"]], out, SMALL)


def test_the_command_line_runs_a_season_and_shows_the_table(mix_files, tmp_path) -> None:
    out = tmp_path / "cli-season"
    args = ["season", "--field", str(mix_files["mix0"]), "--field", str(mix_files["mix9"]),
            "--out", str(out), "--pairs-per-map", "1", "--tick-limit", "100",
            "--winning-score", "3", "--batch-size", "16", "--bootstrap", "100",
            "--replays", "0", "--root-seed", "5", "--checks", "training_declared",
            "--bootstrap-scheme", "maps"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "mix0" in result.stdout
    assert "mix9" in result.stdout
    # not a terminal: the sandbox's steps as plain lines on stderr, then the rating
    assert result.stderr.splitlines() == [
        "sandbox: loading the entrants",
        "sandbox: compiling and playing mix0 vs mix9",
        f"rating 10 games (100 refits) into {out}",
    ]
    assert "distinct_games" in result.stdout
    assert "team team-mix0: token " in result.stdout  # printed once, kept nowhere
    assert "team team-mix9: token " in result.stdout
    assert "95% intervals: 100 refits, maps resampled, then spawn-swapped pairs" in result.stdout
    assert "(--bootstrap-scheme maps)" in result.stdout
    assert read_season(out)["root_seed"] == 5
    assert read_season(out)["bootstrap_scheme"] == "maps"
    bad = CliRunner().invoke(app, [*args[:-1], "map"])
    assert bad.exit_code == 2
    assert "bootstrap_scheme: expected one of ['pairs', 'maps'], got 'map'" in bad.output
    bad = CliRunner().invoke(app, ["season", "--field", "no-such-system", "--field", "idle",
                                   "--out", str(tmp_path / "x")])  # fmt: skip
    assert bad.exit_code == 2
    assert "field" in bad.output
    sched = CliRunner().invoke(app, ["schedule", "--field", "a", "--field", "b",
                                     "--challenger", "c"])  # fmt: skip
    assert sched.exit_code == 0
    assert "c" in sched.output


def test_the_teamwork_screen_reads_a_season_folder(season, tmp_path) -> None:
    """`teamwork FOLDER` screens the published measures against the field's Elo into
    FOLDER/studies/, as `marl_bgs_eval.screen.teamwork_screen` does."""
    from marl_bgs_eval import results, system_metrics
    from marl_bgs_eval.modes import parts
    from marl_bgs_eval.screen import teamwork_screen

    team_measures = parts("tdm").team_measures

    folder = tmp_path / "season"
    shutil.copytree(season[0], folder)
    ratings = pd.read_csv(folder / "ratings.csv")
    if ratings["elo"].nunique() == 1:  # this tiny season's games may all be draws
        refused = CliRunner().invoke(app, ["teamwork", str(folder)])
        assert refused.exit_code != 0
        assert "nothing goes with strength" in refused.output
        # The same folder with the members rated apart (the screen reads the tables only).
        ratings["elo"] = 1300.0 - 100.0 * ratings.index.to_numpy()
        ratings.to_csv(folder / "ratings.csv", index=False)
    result = CliRunner().invoke(app, ["teamwork", str(folder)])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(folder / "studies" / "teamwork.csv")
    measures = pd.read_csv(folder / "measures.csv")
    # beside the published measures, every team-level measure of the season's full-metric games
    team = list(team_measures())
    games = results.load(folder / "games.parquet")
    both = pd.concat([measures, system_metrics(games, team, bootstrap=1)], ignore_index=True)
    want = teamwork_screen(both, ratings, systems=read_season(folder)["field"])
    pd.testing.assert_frame_equal(table, want, check_dtype=False)
    assert list(table["measure"]) == [*dict.fromkeys(measures["measure"]), *team]
    assert len(team) == 97  # the family totals less their twins
    assert table["varies"].any()
    assert (folder / "studies" / "teamwork.png").read_bytes()[:4] == b"\x89PNG"
    refused = CliRunner().invoke(app, ["teamwork", str(tmp_path)])
    assert refused.exit_code != 0
    assert "season.json" in refused.output


def test_a_file_plays_exactly_as_the_system_it_was_exported_from(season, mix_originals) -> None:
    out, record, _ = season
    games = ev.load(out / "games.csv")
    row = record["schedule"][0]
    a, b = mix_originals[row["system_a"]], mix_originals[row["system_b"]]
    again = ev.evaluate(a, b, maps=list(TEST_MAPS), games_per_map=2, seed=record["root_seed"],
                        first_seed_number=row["first_seed_number"], first_game=row["first_game"],
                        metrics="none", batch_size=SMALL.batch_size, tick_limit=SMALL.tick_limit,
                        winning_score=SMALL.winning_score)  # fmt: skip
    block = games[games["game"] < row["games"]].reset_index(drop=True)
    cols = ["game", "map", "a_spawn", "result", "points_a", "points_b", "ticks"]
    assert again[cols].reset_index(drop=True).equals(block[cols])


def test_an_upload_is_checked_played_and_published_by_the_real_service(
    season, challenged, mix_originals, web_running, hostile, tmp_path
) -> None:
    """The web service with the real checker and runner: a System file uploaded over HTTP (under
    the service's own status file's name) is checked, played by the worker against the field and
    shows among the challengers, its team given a token once; a file whose training touched a
    test map is refused before it is queued, and so is an upload naming a registered team
    without its token. A program that never ends a move, uploaded first, is ended by the
    sandbox and refused with its reason while the service answers, and the worker goes on."""
    import time

    import httpx
    import jax.numpy as jnp

    from marl_bgs_tournament import export_system
    from marl_bgs_tournament.cli import submission_checker, submission_runner
    from marl_bgs_tournament.web import create_app

    out, _, _ = season
    files = {"hang": tmp_path / "hang.mbgs"}
    for name, maps in (("cheat", [47]), ("late", [3])):
        files[name] = tmp_path / f"{name}.mbgs"
        entry = ev.system(mix_originals["mix0"].act, name=name, params={"idle": jnp.float32(0.3)})
        export_system(entry, files[name], team=f"{name}-lab", batch_sizes=(1, 16),
                      training={"maps": maps, "scenarios": []})  # fmt: skip
    export_system(hostile.time_bomb(0, name="hang"), files["hang"], team="hang-lab",
                  batch_sizes=(16,), training={"maps": [3], "scenarios": []})  # fmt: skip
    app = create_app(out, checker=submission_checker, runner=submission_runner)

    def upload(url: str, name: str, team: str = "", token: str = "") -> httpx.Response:
        return httpx.post(f"{url}/api/submissions", timeout=60,
                          data={"team": team or f"{name}-lab", "token": token},
                          files={"file": ("status.json", files[name].read_bytes())})  # fmt: skip

    def wait(url: str, sid: str) -> dict:
        for _ in range(600):
            status = httpx.get(f"{url}/api/submissions/{sid}", timeout=30).json()
            if status["state"] in ("done", "failed"):
                return status
            time.sleep(0.5)
        raise AssertionError(f"submission {sid} still {status['state']}")

    with web_running(app) as url:
        hang = upload(url, "hang")
        assert hang.status_code == 202, hang.text
        refused = upload(url, "cheat")
        assert refused.status_code == 422
        assert "47" in refused.text
        assert str(out) not in refused.text
        sent = upload(url, "late")
        assert sent.status_code == 202, sent.text
        for team in ("team-mix0", "late-lab"):  # a member's team; the team just given its token
            taken = upload(url, "late", team=team)
            assert (taken.status_code, taken.json()["field"]) == (422, "token"), taken.text
            assert f"team '{team}' is registered" in taken.json()["error"]
        hung = wait(url, hang.json()["id"])
        assert hung["state"] == "failed"
        assert "hang vs mix0 exceeded 2 s per tick at tick 0" in hung["message"]
        assert httpx.get(f"{url}/api/ratings", timeout=30).status_code == 200  # still serving
        sid, token = sent.json()["id"], sent.json()["token"]
        status = wait(url, sid)
        assert status["state"] == "done", status
        page = httpx.get(f"{url}/challengers", timeout=30).text
        assert "late" in page
    decision = json.loads((out / "challengers" / "late" / "decision.json").read_text())
    assert decision["team"] == "late-lab"
    assert "token" not in decision
    assert read_season(out)["challengers"][-1]["name"] == "late"
    assert status["file"] == "status.json"
    assert not any(token.encode() in p.read_bytes() for p in out.rglob("*") if p.is_file())


SHARDED = """
import jax, marl_bgs_eval as ev
from marl_bgs_tournament import Settings
from marl_bgs_tournament.matches import device_mesh, play_pairings
from marl_bgs_tournament.schedule import field_schedule
assert jax.device_count() == 2 and device_mesh(4) is not None
settings = Settings(maps=(47, 48), pairs_per_map=2, tick_limit=30, batch_size=4, metrics="none")
plan = field_schedule(["random", "idle"], 2, 2)
systems = {"random": ev.random_system(), "idle": ev.idle_system()}
many = play_pairings(plan, systems, settings, root_seed=3)
one = ev.evaluate("random", "idle", maps=[47, 48], games_per_map=4, seed=3, metrics="none",
                  batch_size=4, tick_limit=30)
assert many.equals(one), "sharded games differ"
print("identical", len(many))
"""


@pytest.mark.slow
def test_pairings_play_on_every_visible_device_with_the_same_games() -> None:
    from marl_bgs.testing import run_on_host_devices

    assert "identical 8" in run_on_host_devices(SHARDED, devices=2)


def test_a_batch_that_does_not_divide_among_the_devices_is_refused(monkeypatch) -> None:
    import jax

    from marl_bgs_tournament.matches import device_mesh

    assert device_mesh(16) is None  # one device: no mesh
    monkeypatch.setattr(jax, "device_count", lambda: 3)
    with pytest.raises(TournamentError, match="batch_size: 16 games do not divide among the 3"):
        device_mesh(16)


def test_every_game_stays_published_and_files_are_kept_by_entrant_name(season, challenged) -> None:
    out, _, _ = season
    every = ev.load(out / "all-games.parquet")
    field = ev.load(out / "games.parquet")
    mine = ev.load(out / "challengers" / "mix1" / "games.csv")
    assert set(field["game"]) | set(mine["game"]) <= set(every["game"])
    assert len(every) >= 30 + 30  # the round robin and the first challenger, whoever left
    assert {p.name for p in (out / "entrants").glob("*.mbgs")} >= {"mix0.mbgs", "mix1.mbgs"}
    report = pd.read_csv(out / "entrants" / "mix0.rulebook.csv")
    assert list(report["check"]) == ["training_declared"]
    assert report["passed"].all()


def test_the_rulebook_and_one_seat_per_team_guard_the_field(mix_files, mix_originals, tmp_path):
    import jax.numpy as jnp

    from marl_bgs_tournament import export_system

    def exported(name: str, team: str, maps: list[int]):
        path = tmp_path / f"{name}.mbgs"
        entry = ev.system(mix_originals["mix0"].act, name=name, params={"idle": jnp.float32(0)})
        export_system(entry, path, team=team, batch_sizes=(1, 16),
                      training={"maps": maps, "scenarios": []})  # fmt: skip
        return path

    cheat = exported("cheat", "cheats", [47])
    with pytest.raises(TournamentError, match=r"rulebook refuses it: \['training_declared'\]"):
        run_season([mix_files["mix0"], cheat], tmp_path / "s1", SMALL)
    report = pd.read_csv(tmp_path / "s1" / "entrants" / "cheat.rulebook.csv")
    assert "47" in report["detail"].iat[0]
    twin = exported("mix0b", "team-mix0", [4])
    with pytest.raises(TournamentError, match="one seat per team"):
        run_season([mix_files["mix0"], twin], tmp_path / "s2", SMALL)
    # A file may not claim the organisers' team (no token, any number of seats): two files
    # whose manifests name it are refused before anything is played, as is one entered
    # under it by name (a challenge); released members (pop:) and built-in Systems may.
    posers = [exported(f"poser{i}", ORGANISERS, [4]) for i in range(2)]
    with pytest.raises(TournamentError, match=r"'poser0'.s team is 'organisers'"):
        run_season(posers, tmp_path / "s3", SMALL)
    assert not (tmp_path / "s3").exists()
    with pytest.raises(TournamentError, match="kept for the built-in Systems"):
        entrant(mix_files["mix0"], team=ORGANISERS)
    assert entrant("tdm-beta").team == ORGANISERS


def test_a_season_of_another_mode_or_a_busy_folder_is_refused(season, mix_files, tmp_path):
    import fcntl
    import shutil

    out, _, _ = season
    other = tmp_path / "old"
    shutil.copytree(out, other)
    record = json.loads((other / "season.json").read_text())
    (other / "season.json").write_text(json.dumps({**record, "mode": "tdm-v0"}))
    with pytest.raises(TournamentError, match="mode 'tdm-v0'"):
        challenge(other, mix_files["mix95"])
    (other / "season.json").write_text("{not json")
    with pytest.raises(TournamentError, match="not JSON"):
        challenge(other, mix_files["mix95"])
    with (out / ".lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(TournamentError, match="busy"):
            challenge(out, mix_files["mix95"])


def test_a_season_keeps_its_bootstrap_scheme(tmp_path) -> None:
    """A season written before the option rates as the rulebook does; a bad scheme in
    season.json is refused before any game is played."""
    record = {"mode": "tdm-v2", "maps": [47], "pairs_per_map": 2, "tick_limit": 100,
              "winning_score": 5, "batch_size": 16, "bootstrap": 100, "rating_seed": 0,
              "metrics": "none"}  # fmt: skip
    assert settings_of(record).bootstrap_scheme == "pairs"
    assert settings_of({**record, "bootstrap_scheme": "maps"}).bootstrap_scheme == "maps"
    with pytest.raises(TournamentError, match=r"season\.json: bootstrap_scheme: expected one"):
        settings_of({**record, "bootstrap_scheme": "bags"})
    with pytest.raises(TournamentError, match=r"^bootstrap_scheme: expected one of"):
        run_season(["idle", "random"], tmp_path / "s", Settings(bootstrap_scheme="bags"))
    assert not (tmp_path / "s").exists()


def test_the_season_size_is_reduced_on_a_cpu_unless_asked_otherwise() -> None:
    from marl_bgs_tournament.cli import REDUCED, _settings

    auto = _settings("auto", {})
    assert (auto.pairs_per_map, auto.tick_limit) == (
        REDUCED["pairs_per_map"],
        REDUCED["tick_limit"],
    )
    full = _settings("full", {"pairs_per_map": 3})
    assert (full.pairs_per_map, full.tick_limit, full.winning_score) == (3, 300, None)
    assert full.rules() == {"tick_limit": 300}  # the mode's own winning score (20)
    assert full.maps == TEST_MAPS == (47, 48, 49, 50, 51)
    assert full.checks == rulebook.checks_of("tdm")
    bad = CliRunner().invoke(app, ["season", "--field", "a", "--field", "b", "--out", "x",
                                   "--size", "huge"])  # fmt: skip
    assert bad.exit_code == 2
    assert "size: expected one of" in bad.output
    assert _settings("full", {"maps": "0-2,test"}).maps == (0, 1, 2, *TEST_MAPS)  # the map grammar
    bad = CliRunner().invoke(app, ["season", "--field", "a", "--field", "b", "--out", "x",
                                   "--size", "full", "--maps", "tset"])  # fmt: skip
    assert bad.exit_code == 2
    assert bad.stderr.startswith("error: --maps: map_id: unknown 'tset' (did you mean 'test'?)")


def test_a_season_plays_one_two_team_mode_and_its_maps() -> None:
    with pytest.raises(TournamentError, match="needs a two-team mode; two-bridge-v1 plays"):
        Settings(mode="two-bridge")
    with pytest.raises(TournamentError, match="mode: unknown mode 'chess'"):
        Settings(mode="chess")
    with pytest.raises(TournamentError, match=r"checks: unknown \['speed'\] for mode tdm-v2"):
        Settings(checks=("speed",))
    assert Settings(mode="tdm-v2", maps=(0, 1)).maps == (0, 1)
    with pytest.raises(TournamentError, match="plays tdm-v2, not two-bridge-v1"):
        season_module.entrant("tdm-beta", mode="two-bridge")
    assert season_module.entrant("random", mode="tdm").system.mode == "tdm-v2"


@pytest.mark.parametrize(
    ("mode", "text", "want"),
    [("tdm", "47,48", [47, 48]), ("tdm", "0-2", [0, 1, 2]), ("tdm", "test", list(TEST_MAPS)),
     ("tdm", "none", []), ("two-bridge", "V1", [0, 1, 2]), ("two-bridge", "V2_Base", [3])],
)  # fmt: skip
def test_map_lists_are_the_modes_layouts(mode, text, want) -> None:
    from marl_bgs_tournament.cli import _map_ids

    assert _map_ids(text, "maps", mode) == want


def test_the_schedule_command_takes_the_modes_layouts() -> None:
    result = CliRunner().invoke(app, ["schedule", "--field", "a", "--field", "b"])
    assert result.exit_code == 0, result.output
    assert "maps [47, 48, 49, 50, 51]" in result.output
    bad = CliRunner().invoke(app, ["schedule", "--field", "a", "--field", "b", "--mode", "go"])
    assert bad.exit_code == 2
    assert "unknown mode 'go'" in bad.output
