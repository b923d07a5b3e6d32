"""The command line, through typer's CliRunner, calling the same functions."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

import marl_bgs_eval as ev
from marl_bgs_eval import cli
from marl_bgs_eval.cli import app
from marl_bgs_eval.synthetic import synthetic_games
from marl_bgs_eval.tdm.metrics import find

runner = CliRunner()
SMALL = [
    "--maps",
    "0,12",
    "--games-per-map",
    "8",
    "--seed",
    "7",
    "--batch-size",
    "8",
    "--tick-limit",
    "40",
    "--winning-score",
    "5",
    "--no-progress",
]


def test_play_prints_and_saves_the_same_games(base_games: pd.DataFrame, tmp_path) -> None:
    """Output captured (not a terminal): plain progress lines on stderr, from the start to the
    end, and the results on stdout."""
    out = tmp_path / "games.parquet"
    shown = [a for a in SMALL if a != "--no-progress"]
    result = runner.invoke(app, ["play", "mixed", "random", *shown, "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[:2] == [
        "mixed vs random: setting up (the first batch also compiles)",
        "mixed vs random: 0/16 games, 0%, 0 s elapsed",
    ]
    assert re.fullmatch(r"mixed vs random: 16/16 games, 100%, \d+ s elapsed", lines[-1])
    assert "mixed (A) vs random (B)" in result.stdout
    assert "saved 16 games" in result.output
    pd.testing.assert_frame_equal(ev.load(out), base_games)


def test_rate_and_leaderboard(tmp_path) -> None:
    games = synthetic_games([1000, 1200, 1441], maps=2, pairs_per_map=10, seed=3)
    path = tmp_path / "synthetic.csv"
    games.to_csv(path, index=False)
    # A synthetic table lacks the full schema: the loader says which columns.
    bad = runner.invoke(app, ["rate", str(path), "--bootstrap", "50"])
    assert bad.exit_code == 2
    assert "missing column" in bad.output


def test_rate_a_real_results_file(base_games: pd.DataFrame, tmp_path) -> None:
    flipped = base_games.assign(
        system_a="random",
        system_b="mixed",
        game=base_games["game"] + 16,
        pair_id=base_games["pair_id"] + 8,
    )
    flipped["result"] = flipped["result"].map({"win": "loss", "loss": "win", "draw": "draw"})
    ev.save(base_games, tmp_path / "a.parquet")
    ev.save(flipped, tmp_path / "b.csv")
    files = [str(tmp_path / "a.parquet"), str(tmp_path / "b.csv")]
    rated = runner.invoke(app, ["rate", *files, "--bootstrap", "100"])
    assert rated.exit_code == 0, rated.output
    assert "Elo" in rated.output
    assert "mixed" in rated.output
    want = "95% intervals: 100 refits, spawn-swapped pairs resampled within each pairing and map"
    assert want in rated.output
    assert "(--bootstrap-scheme pairs)" in rated.output
    assert "repeats:" not in rated.output  # 12 distinct games of 8 pairs each way
    board = runner.invoke(app, ["leaderboard", *files, "--bootstrap", "100"])
    assert board.exit_code == 0, board.output
    assert any(t in board.output for t in ("Gold", "Silver", "Bronze", "Platinum", "Iron"))
    maps = runner.invoke(app, ["leaderboard", *files, "--bootstrap", "100",
                               "--bootstrap-scheme", "maps"])  # fmt: skip
    assert maps.exit_code == 0, maps.output
    assert "maps resampled, then spawn-swapped pairs" in maps.output
    assert "(--bootstrap-scheme maps)" in maps.output
    bad = runner.invoke(app, ["rate", *files, "--bootstrap-scheme", "hierarchical"])
    assert bad.exit_code == 2
    assert "bootstrap_scheme: expected one of ['pairs', 'maps'], got 'hierarchical'" in bad.output


def test_the_leaderboard_marks_a_pairing_that_replays_its_games(
    base_games: pd.DataFrame, tmp_path
) -> None:
    """The same games again under another seed number range: twice the games, no more
    distinct ones. The leaderboard says so per System and names the pairing."""
    again = base_games.assign(seed=8)  # what a rerun of deterministic Systems would record
    ev.save(base_games, tmp_path / "a.parquet")
    ev.save(again, tmp_path / "b.parquet")
    files = [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    board = runner.invoke(app, ["leaderboard", *files, "--bootstrap", "50"])
    assert board.exit_code == 0, board.output
    lines = board.output.splitlines()
    for name in ("mixed", "random"):
        (row,) = [ln for ln in lines if f" {name} " in ln and "│" in ln]
        assert row.rstrip(" │").endswith("32 │             12 │ yes")
    assert "mixed vs random: 32 games, 12 distinct (16 pairs)" in board.output
    assert "repeats: a pairing with fewer distinct games than spawn-swapped pairs" in board.output
    table = ev.rate(ev.combine([("a", base_games), ("b", again)]), bootstrap=20)
    assert table["repeats"].all()
    assert (table["distinct_games"] == 12).all()


def test_errors_exit_2_with_the_field() -> None:
    result = runner.invoke(app, ["play", "nobody", "random", *SMALL])
    assert result.exit_code == 2
    assert "unknown System 'nobody'" in result.output
    result = runner.invoke(app, ["play", "tdm-alfa", "random", *SMALL])
    assert result.exit_code == 2
    assert "unknown System 'tdm-alfa' (did you mean 'tdm-alpha'?)" in result.stderr
    result = runner.invoke(app, ["play", "random", "random", *SMALL, "--split", "test"])
    assert result.exit_code == 2
    assert "not in split 'test'" in result.output
    listed = runner.invoke(app, ["systems"])
    assert listed.exit_code == 0
    assert "random" in listed.output
    assert "idle" in listed.output


def _first_cells(text: str) -> str:
    """The first column of a printed table, every line's cell joined (a folded name rejoins)."""
    return "".join(line.split("│")[1].strip() for line in text.splitlines() if "│" in line)


@pytest.mark.parametrize("width", [60, 200])
def test_metric_names_are_printed_whole(width: int, monkeypatch) -> None:
    """`metrics heal` at a narrow and a wide terminal: no name is cut; on the wide one each
    sits on one line; --plain prints every match, one per line."""
    names = find("heal")["column"].tolist()
    monkeypatch.setattr(cli, "console", Console(width=width))
    result = runner.invoke(app, ["metrics", "heal", "--limit", "12"])
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    assert _first_cells(result.output) == "".join(names[:12])
    lines = [line.split("│")[1].strip() for line in result.output.splitlines() if "│" in line]
    if width == 200:
        assert [n for n in lines if n] == names[:12]
    else:
        assert max(len(n) for n in lines) < max(len(n) for n in names[:12])  # folded
    plain = runner.invoke(app, ["metrics", "heal", "--plain"])
    assert plain.exit_code == 0, plain.output
    assert plain.output.splitlines() == names
