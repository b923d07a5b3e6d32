"""The engine's scripted teams as Systems: by name on the command line and in Python, and the
report that writes docs/opponents.md."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

import marl_bgs_eval as ev
from marl_bgs_eval import opponents
from marl_bgs_eval.cli import app
from marl_bgs_eval.registry import get_system, names
from marl_bgs_eval.systems import scripted_system


def test_scripted_teams_are_registered_by_name():
    assert {"tdm-alpha", "tdm-beta", "tdm-gamma", "rush"} <= set(names())
    for name in ("tdm-alpha", "rush"):
        assert get_system(name) is scripted_system(name)  # one object: programs are reused
        assert get_system(name).name == name
    with pytest.raises(ev.EvalError, match=r"name: unknown scripted team 'qq'; allowed: "):
        scripted_system("qq")


def test_play_two_scripted_teams_by_name():
    args = ["play", "tdm-alpha", "tdm-gamma", "--maps", "50", "--games-per-map", "2"]
    result = CliRunner().invoke(app, [*args, "--seed", "3", "--batch-size", "2", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "tdm-alpha (A) vs tdm-gamma (B)" in result.output
    # Scripted play ends games (no all-draw stalemates) with kills on the record.
    games = ev.evaluate("tdm-alpha", "tdm-gamma", maps=[50], games_per_map=2, seed=3, batch_size=2)
    assert (games["a_kills"] + games["b_kills"]).sum() > 0


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
