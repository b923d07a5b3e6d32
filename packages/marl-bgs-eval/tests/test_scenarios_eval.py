"""Scenario evaluation: results per scenario, the Fisher test against random play, the CLI."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import fisher_exact
from typer.testing import CliRunner

import marl_bgs_eval as ev
from marl_bgs_eval.cli import app
from marl_bgs_eval.tdm.scenarios import SUMMARY_COLUMNS, distinct_wins, scenario_games

SCENARIO = 6  # TDM-Alpha plays team B


@pytest.fixture(scope="module")
def idle_games():
    return scenario_games("idle", SCENARIO, n_games=8, seed=3, batch_size=8)


def test_scenario_games_are_results_rows_of_the_scenario(idle_games):
    games = idle_games
    assert len(games) == 8
    assert (games["scenario"] == SCENARIO).all()
    assert (games["system_b"] == "tdm-alpha").all()
    assert games["a_spawn"].tolist() == ["left", "right"] * 4  # snapshot and its mirror image
    # Standing still loses at once: the Rogue kills the 7 HP Hunter on the first tick.
    assert (games["result"] == "loss").all()
    assert (games["ticks"] == 300 - 5 + 1).all()  # the clock is the game's: 5 ticks were left


def test_evaluate_scenarios_compares_distinct_wins_with_random_play():
    table = ev.evaluate_scenarios("idle", n_games=8, seed=3, scenarios=[SCENARIO], batch_size=8)
    assert list(table.columns) == list(SUMMARY_COLUMNS)
    row = table.iloc[0]
    assert (row["scenario"], row["challenge"], row["opponent"]) == (6, "Keep the trap", "tdm-alpha")
    assert (row["wins"], row["draws"], row["losses"]) == (0, 0, 8)
    # Idle play against TDM-Alpha is deterministic: the 8 games are one game (4 pairs of mirror
    # images, each pair a replay of the first): one game of evidence.
    assert (row["distinct"], row["distinct_wins"]) == (1, 0)
    assert row["reference"] == "random"
    random_games = scenario_games(ev.random_system(), SCENARIO, n_games=8, seed=3, batch_size=8)
    distinct, won = distinct_wins(random_games)
    assert distinct == ev.distinct_games(random_games)
    assert (row["reference_distinct"], row["reference_distinct_wins"]) == (distinct, won)
    table = [[0, 1], [won, distinct - won]]
    assert np.isclose(row["p_value"], fisher_exact(table, alternative="two-sided").pvalue)


def test_distinct_wins_count_a_repeated_game_once(idle_games):
    assert idle_games["trajectory"].nunique() == 1
    won = idle_games.assign(result="win")
    assert distinct_wins(won) == (1, 1)
    # Without fingerprints (a file written before them), only mirror-image pairs are caught.
    old = won.drop(columns="trajectory")
    assert distinct_wins(old) == (4, 4)
    broken = old.copy()
    broken.loc[broken.index[0], "result"] = "draw"  # one pair's games now disagree
    assert distinct_wins(broken) == (5, 4)


def test_evaluate_scenarios_refuses_bad_input():
    with pytest.raises(ev.EvalError, match="n_games: expected an even integer"):
        ev.evaluate_scenarios("idle", n_games=3, scenarios=[SCENARIO])
    with pytest.raises(ev.EvalError, match="scenario: 42 is not a shipped scenario"):
        ev.evaluate_scenarios("idle", n_games=2, scenarios=[42])
    with pytest.raises(ev.EvalError, match="seed: expected a non-negative integer"):
        ev.evaluate_scenarios("idle", seed=-1)


def test_cli_prints_the_scenario_table():
    runner = CliRunner()
    out = runner.invoke(
        app, ["scenarios", "idle", "--games", "8", "--seed", "3", "--only", "6",
              "--batch-size", "8", "--no-progress"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "Keep the trap" in out.output
    bad = runner.invoke(app, ["scenarios", "idle", "--only", "six"])
    assert bad.exit_code == 2
    assert "only: expected scenario ids" in bad.output
