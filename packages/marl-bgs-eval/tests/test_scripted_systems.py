"""The engine's scripted teams as Systems: by name on the command line and in Python, and the
report that writes docs/opponents.md."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

import marl_bgs_eval as ev
from marl_bgs_eval.cli import app
from marl_bgs_eval.distinct import pairings
from marl_bgs_eval.registry import get_system, names
from marl_bgs_eval.tdm import opponents
from marl_bgs_eval.tdm.scripted import scripted_system


def test_scripted_teams_are_registered_by_name():
    assert {"tdm-alpha", "tdm-beta", "tdm-gamma", "rush"} <= set(names())
    for name in ("tdm-alpha", "rush"):
        assert get_system(name) is scripted_system(name)  # one object: programs are reused
        assert get_system(name).name == name
    with pytest.raises(ev.EvalError, match=r"name: unknown scripted team 'qq'; allowed: "):
        scripted_system("qq")


def test_play_two_scripted_teams_by_name_and_count_their_distinct_games(tmp_path):
    """Scripted teams are deterministic: TDM-Gamma vs TDM-Beta on one map plays two distinct
    games (one per spawn end: TDM-Beta's play is not mirror-symmetric), four times each. The
    table says "8 games, 2 distinct" and flags the pairing as repeating."""
    out = tmp_path / "games.parquet"
    args = ["play", "tdm-gamma", "tdm-beta", "--maps", "47", "--games-per-map", "8"]
    result = CliRunner().invoke(app, [*args, "--batch-size", "8", "--no-progress", "--out", out])
    assert result.exit_code == 0, result.output
    assert "tdm-gamma (A) vs tdm-beta (B), seed 0: 8 games, 2 distinct" in result.output
    assert "tdm-gamma vs tdm-beta: 8 games, 2 distinct (4 pairs)" in result.output
    assert "\nrepeats: a pairing with fewer distinct games than spawn-swapped" in result.output
    games = ev.load(out)
    # Scripted play ends games (no all-draw stalemates) with kills on the record.
    assert (games["a_kills"] + games["b_kills"]).sum() > 0
    by_end = games.groupby("a_spawn")["trajectory"]
    assert by_end.nunique().to_dict() == {"left": 1, "right": 1}  # each end: one game, 4 times
    assert by_end.first()["left"] != by_end.first()["right"]
    assert ev.distinct_games(games) == 2
    assert pairings(games)[["games", "pairs", "distinct", "repeats"]].values.tolist() == [
        [8, 4, 2, True]
    ]


def test_the_report_section_replaces_its_old_self(tmp_path):
    frame = pd.DataFrame([{"team": "tdm-alpha", "against": "random", "games": 2, "wins": 2}])
    elo = pd.DataFrame([{"rank": 1, "system": "tdm-alpha", "elo": 1000}])
    elo.attrs["games"] = 2
    path = pd.DataFrame([{"team": "rush", "maps won from both ends": "52 of 52"}])
    stuck = pd.DataFrame([{"map": 25, "team": "rush", "spawn end": "left", "outcome": "no win"}])
    tables = {"random": frame, "rush": frame, "pairings": frame, "elo": elo, "pathing": path,
              "stuck": stuck}  # fmt: skip
    doc = tmp_path / "opponents.md"
    doc.write_text("# Scripted opponents\n\nhand-written\n")
    for _ in range(2):
        opponents.write(doc, opponents.section(tables, "cmd", 60.0, 2))
    text = doc.read_text()
    assert text.count(opponents.BEGIN) == 1
    assert text.count(opponents.END) == 1
    assert text.startswith("# Scripted opponents\n\nhand-written\n")
    assert "| tdm-alpha | random | 2 | 2 |" in text
    assert "Elo from these 2 games" in text
    assert "| 25 | rush | left | no win |" in text
