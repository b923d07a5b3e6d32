"""The released population: a trained population's System files with their records, `pop:`
names that play exactly as the checkpoints they came from, refusals of damaged releases, and
Season 0 as one command."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import marl_bgs_eval as ev
from marl_bgs_tournament import portable
from marl_bgs_tournament.cli import app
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.population import (
    POPULATION_ENV,
    RELEASE_FILE,
    big_nine,
    default_folder,
    member_file,
    read_release,
    release,
)
from marl_bgs_tournament.population_wheel import build_wheel
from marl_bgs_tournament.portable.format import sha256
from marl_bgs_tournament.season import entrant, one_seat_per_team, read_season
from marl_bgs_tournament.teams import ORGANISERS


def _run(population: Path) -> Path:
    return population / "ippo-ff" / "s0"


def test_a_release_holds_each_learners_best_and_milestone_checkpoint(
    tiny_release: Path, tiny_population: Path
) -> None:
    data = read_release(tiny_release)
    assert (data["mode"], data["budget"]) == ("tdm", "tiny")
    assert list(data["members"]) == ["ippo-ff", "ippo-ff-at-16"]
    run = _run(tiny_population)
    best = json.loads((run / "best" / "best.json").read_text())
    started = json.loads((tiny_population / "population.json").read_text())
    config = json.loads((run / "config.json").read_text())
    for member, kind, update in (("ippo-ff", "best on validation", best["update"]),
                                 ("ippo-ff-at-16", "milestone", 1)):  # fmt: skip
        entry = data["members"][member]
        raw = (tiny_release / entry["file"]).read_bytes()
        assert (len(raw), sha256(raw)) == (entry["bytes"], entry["sha256"])
        record = entry["record"]
        assert (record["kind"], record["update"], record["steps"]) == (kind, update, update * 16)
        assert (record["learner"], record["seed"], record["budget"]) == ("ippo-ff", 0, "tiny")
        assert record["commit"] == started["commit"]
        assert record["settings"] == config
        # what was known when the checkpoint was saved
        assert [round(row[0]) for row in record["curve"]] == [16 * (k + 1) for k in range(update)]
        assert [row["update"] for row in record["validation"]] == list(range(1, update + 1))
        manifest = portable.read_manifest(tiny_release / entry["file"])
        assert manifest["name"] == f"pop-{member}"
        assert manifest["training"] == {"maps": [0, 3], "scenarios": [], "steps": update * 16}


def test_a_pop_name_plays_exactly_as_the_checkpoint_it_came_from(
    tiny_release: Path, tiny_population: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(POPULATION_ENV, str(tiny_release))
    play = {"maps": [42], "games_per_map": 2, "tick_limit": 20, "metrics": "none",
            "batch_size": 2, "seed": 4}  # fmt: skip
    released = ev.evaluate("pop:ippo-ff-at-16", "random", **play)
    original = ev.evaluate(f"ckpt:{_run(tiny_population) / 'milestone'}", "random", **play)
    cols = ["result", "points_a", "points_b", "ticks", *ev.base_columns()]
    assert released[cols].equals(original[cols])
    assert ev.get_system("pop:ippo-ff").name == "pop-ippo-ff"
    member = entrant("pop:ippo-ff")  # in a season's field: its file, hashed and sandboxed
    assert (member.name, member.source) == ("pop-ippo-ff", "file:pop-ippo-ff.mbgs")
    # the released learners are the organisers' entrants, as the scripted teams: all six (here
    # the two members) take seats in one field
    milestone = entrant("pop:ippo-ff-at-16")
    assert member.team == milestone.team == ORGANISERS
    one_seat_per_team([member, milestone, entrant("tdm-alpha")])
    assert member.path == tiny_release / "ippo-ff.mbgs"
    assert member.sha256 == read_release(tiny_release)["members"]["ippo-ff"]["sha256"]


def test_a_damaged_missing_or_unknown_member_is_refused(
    tiny_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "rel"
    shutil.copytree(tiny_release, folder)
    monkeypatch.setenv(POPULATION_ENV, str(folder))
    path = folder / "ippo-ff.mbgs"
    raw = path.read_bytes()
    path.write_bytes(raw[:100] + bytes([raw[100] ^ 1]) + raw[101:])
    with pytest.raises(ev.EvalError, match=r"pop:ippo-ff: .*sha256 differs"):
        ev.get_system("pop:ippo-ff")
    path.write_bytes(raw + b"x")
    with pytest.raises(ev.EvalError, match=f"holds {len(raw) + 1} bytes, the release lists"):
        ev.get_system("pop:ippo-ff")
    path.unlink()
    with pytest.raises(TournamentError, match=r"pop:ippo-ff: .*No such file"):
        member_file("ippo-ff", folder)
    with pytest.raises(ev.EvalError, match=r"not a member .* members: \['ippo-ff', 'ippo-ff-at"):
        ev.get_system("pop:qmix")
    monkeypatch.setenv(POPULATION_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(ev.EvalError, match=r"no release here; .*MARL_BGS_POPULATION"):
        ev.get_system("pop:ippo-ff")


def test_the_data_wheel_installs_the_release_where_pop_names_find_it(
    tiny_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = CliRunner().invoke(app, ["wheel", str(tiny_release), "--out", str(tmp_path / "d"),
                                      "--version", "0.1.7"])  # fmt: skip
    assert result.exit_code == 0, result.output
    built = tmp_path / "d" / "marl_bgs_population-0.1.7-py3-none-any.whl"
    assert f"pip install {built}" in result.output
    with zipfile.ZipFile(built) as wheel:
        metadata = wheel.read("marl_bgs_population-0.1.7.dist-info/METADATA").decode()
        assert "Name: marl-bgs-population\nVersion: 0.1.7\n" in metadata
        assert "Requires-Dist: marl-bgs-tournament" in metadata
        record = wheel.read("marl_bgs_population-0.1.7.dist-info/RECORD").decode()
        for name in ("release.json", "ippo-ff.mbgs", "ippo-ff-at-16.mbgs"):
            data = wheel.read(f"marl_bgs_population/release/{name}")
            assert data == (tiny_release / name).read_bytes()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert f"marl_bgs_population/release/{name},sha256={digest.decode()}," in record
        wheel.extractall(tmp_path / "site")  # a pure wheel installs as its files on the path
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delenv(POPULATION_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))  # no release of the user's own
    installed = tmp_path / "site" / "marl_bgs_population" / "release"
    assert default_folder() == installed
    assert member_file("ippo-ff") == installed / "ippo-ff.mbgs"
    assert ev.get_system("pop:ippo-ff").name == "pop-ippo-ff"
    shutil.copytree(tiny_release, tmp_path / "xdg" / "marl-bgs" / "population")
    assert default_folder() == tmp_path / "xdg" / "marl-bgs" / "population"  # the user's wins
    damaged = tmp_path / "damaged"
    shutil.copytree(tiny_release, damaged)
    (damaged / "ippo-ff.mbgs").write_bytes(b"not the file")
    with pytest.raises(TournamentError, match=r"pop:ippo-ff: .* holds 12 bytes"):
        build_wheel(damaged, tmp_path / "d2")
    for bad in ("one", "0.1.0\n", '0.1"\nreadme = "x'):
        with pytest.raises(TournamentError, match=r"^version: expected a release number"):
            build_wheel(tiny_release, tmp_path / "d2", bad)
    assert not (tmp_path / "d2").exists()
    # a release's budget is text: it cannot add settings to the wheel's project or code to it
    hostile = tmp_path / "hostile"
    shutil.copytree(tiny_release, hostile)
    index = json.loads((hostile / RELEASE_FILE).read_text())
    index["budget"] = 'x"\nreadme = "/etc/hostname"\n#"""+1'
    (hostile / RELEASE_FILE).write_text(json.dumps(index))
    with zipfile.ZipFile(build_wheel(hostile, tmp_path / "d3")) as wheel:
        assert sorted(n for n in wheel.namelist() if "dist-info" not in n) == [
            "marl_bgs_population/__init__.py", *(f"marl_bgs_population/release/{name}" for name
            in ("ippo-ff-at-16.mbgs", "ippo-ff.mbgs", "release.json"))]  # fmt: skip
        metadata = wheel.read("marl_bgs_population-0.1.0.dist-info/METADATA").decode()
        assert "Description-Content-Type" not in metadata
        assert "hostname" in metadata.split("Summary: ", 1)[1].split("\nRequires", 1)[0]
        init = wheel.read("marl_bgs_population/__init__.py").decode()
        assert "hostname" not in init


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d.update(version=2), "format: expected 'marl-bgs-population' version 1"),
        (lambda d: d.pop("budget"), "expected the fields"),
        (lambda d: d["members"].update({"../x": d["members"]["ippo-ff"]}), "a member's name"),
        (lambda d: d["members"]["ippo-ff"].update(file="../ippo-ff.mbgs"), "file: expected"),
        (lambda d: d["members"]["ippo-ff"].update(bytes=-1), "ippo-ff.bytes: expected a whole"),
        (lambda d: d["members"]["ippo-ff"].update(bytes=2**40), "bytes: expected a whole number"),
        (lambda d: d["members"]["ippo-ff"]["record"].update(kind="best"), "record.kind: expected"),
        (lambda d: d["members"]["ippo-ff"]["record"].update(steps=-3), "record.steps: expected"),
        (lambda d: d["members"]["ippo-ff"]["record"].update(curve=[[1, 2]]), "record.curve"),
        (lambda d: d["members"]["ippo-ff"].update(sha256="0" * 63), "sha256: expected 64"),
        (lambda d: d["members"]["ippo-ff"]["record"].pop("curve"), "record: expected the fields"),
        (lambda d: d.update(members={}), "members: expected 1-64 members"),
    ],
)
def test_a_malformed_release_file_is_refused_naming_the_field(
    tiny_release: Path, tmp_path: Path, change, said: str
) -> None:
    data = json.loads((tiny_release / RELEASE_FILE).read_text())
    change(data)
    (tmp_path / RELEASE_FILE).write_text(json.dumps(data))
    with pytest.raises(TournamentError, match=f"population: .*{RELEASE_FILE}.*{said}"):
        read_release(tmp_path)


def test_release_refuses_a_used_folder_and_an_unfinished_population(
    tiny_population: Path, tmp_path: Path
) -> None:
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    result = CliRunner().invoke(app, ["release", str(tiny_population), "--out",
                                      str(tmp_path / "used")])  # fmt: skip
    assert result.exit_code == 2
    assert "is not empty" in result.output
    assert (tmp_path / "used" / "notes.txt").read_text() == "mine"
    unfinished = tmp_path / "unfinished"
    shutil.copytree(tiny_population, unfinished)
    shutil.rmtree(_run(unfinished) / "best")
    with pytest.raises(TournamentError, match="ippo-ff has no validated checkpoint"):
        release(unfinished, tmp_path / "out")
    with pytest.raises(ValueError, match=r"population: .* is not a population record"):
        release(tmp_path / "used", tmp_path / "out2")


@pytest.fixture(scope="module")
def season0(tiny_release: Path, tmp_path_factory: pytest.TempPathFactory):
    """`season0` of the tiny release at a small size: (folder, the command's result)."""
    out = tmp_path_factory.mktemp("season0") / "s0"
    args = ["season0", "--population", str(tiny_release), "--out", str(out), "--size",
            "reduced", "--maps", "47", "--pairs-per-map", "1", "--tick-limit", "30",
            "--winning-score", "3", "--batch-size", "2", "--bootstrap", "50", "--replays", "0",
            "--root-seed", "3", "--checks", "training_declared"]  # fmt: skip
    return out, CliRunner().invoke(app, args)


def test_season0_is_the_big_nine_in_one_command(tiny_release: Path, season0) -> None:
    field = big_nine(tiny_release)
    assert field == [str(tiny_release / "ippo-ff.mbgs"), "tdm-alpha", "tdm-beta", "tdm-gamma"]
    out, result = season0
    assert result.exit_code == 0, result.output
    assert read_season(out)["root_seed"] == 3
    ratings = pd.read_csv(out / "ratings.csv")
    assert sorted(ratings["system"]) == ["pop-ippo-ff", "tdm-alpha", "tdm-beta", "tdm-gamma"]
    assert "root seed 3" in result.stdout


def test_the_zero_shot_study_puts_strangers_in_the_top_learners_team(season0) -> None:
    out, _ = season0
    args = ["zero-shot", str(out), "--classes", "MP", "--opponent", "tdm-beta",
            "--games-per-map", "2", "--bootstrap", "50"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out / "studies" / "zero_shot.csv")
    # the only learner is the base: its strangers are the random agent, one per class
    assert table[["base", "stranger", "class", "games"]].values.tolist() == [
        ["pop-ippo-ff", "random", "M", 2],
        ["pop-ippo-ff", "random", "P", 2],
    ]
    assert (
        (table["low"] <= table["margin_change"]) & (table["margin_change"] <= table["high"])
    ).all()
    assert (out / "studies" / "zero_shot.png").read_bytes()[:4] == b"\x89PNG"
    bad = CliRunner().invoke(app, ["zero-shot", str(out), "--base", "nobody"])
    assert bad.exit_code == 2
    assert "base: 'nobody' is not a member of the field" in bad.output
    bad = CliRunner().invoke(app, ["zero-shot", str(out), "--opponent", "tdm-delta"])
    assert bad.exit_code == 2
    assert "opponents: 'tdm-delta' is not a member of the field" in bad.output
