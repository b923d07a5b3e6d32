"""Every mode through one evaluation: Two-Bridge (one team against the mode's own enemies) plays
through the same `evaluate`, results schema, checks, files and measures as Team Deathmatch."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import marl_bgs_eval as ev
from marl_bgs.two_bridge import OUTCOMES
from marl_bgs_eval import episode_replays, replay_files, results
from marl_bgs_eval.array_zip import Replay
from marl_bgs_eval.compare import system_metrics
from marl_bgs_eval.modes import parts

BRIDGE = {"mode": "two-bridge", "maps": "V1_Base,V2_Base", "games_per_map": 2, "tick_limit": 20,
          "metrics": "none"}  # fmt: skip


@pytest.fixture(scope="module")
def bridge_games() -> pd.DataFrame:
    return ev.evaluate("random", batch_size=2, **BRIDGE)


def test_a_single_team_mode_plays_through_evaluate(bridge_games: pd.DataFrame) -> None:
    g = bridge_games
    assert list(g.columns) == [*results.columns("two-bridge"), results.TRAJECTORY]
    assert set(g["mode"]) == {"two-bridge-v1"}
    assert set(g["system_b"]) == {"two-bridge-enemies"}
    assert [c for c in g.columns if "slot" in c] == [f"system_a_slot{i}" for i in range(5)]
    assert list(g["map_name"]) == ["V1_Base", "V1_Base", "V2_Base", "V2_Base"]  # two shape groups
    assert list(g["a_spawn"]) == ["left", "right"] * 2
    assert set(g["outcome"]) <= set(OUTCOMES[1:])
    assert (g["ticks"] <= 20).all()
    assert results.validate(g).equals(g)


def test_batch_size_never_changes_a_two_bridge_game(bridge_games: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(ev.evaluate("random", batch_size=4, **BRIDGE), bridge_games)


def test_two_bridge_results_files_round_trip_and_are_checked(bridge_games, tmp_path) -> None:
    path = results.save(bridge_games, tmp_path / "bridge.csv")
    pd.testing.assert_frame_equal(results.load(path), bridge_games)
    bad = bridge_games.assign(result="win", outcome="timeout loss")
    with pytest.raises(ev.EvalError, match="result does not follow from outcome"):
        results.validate(bad)
    with pytest.raises(ev.EvalError, match="outcome must be one of"):
        results.validate(bridge_games.assign(outcome="teleported"))
    mixed = pd.concat([bridge_games, bridge_games.assign(mode="tdm-v2")])
    with pytest.raises(ev.EvalError, match="a table holds games of one mode"):
        results.validate(mixed)


def test_measures_come_from_the_mode(bridge_games: pd.DataFrame) -> None:
    table = system_metrics(bridge_games, bootstrap=20)
    assert set(table["measure"]) == {"win_rate", "draw_rate", "game_length", "mean_return"}
    row = table[(table["system"] == "random") & (table["measure"] == "mean_return")]
    assert row["value"].item() == pytest.approx(bridge_games["return"].mean())
    assert set(parts("tdm").measures()) == set(ev.MEASURES)


def test_teams_are_checked_against_the_mode() -> None:
    with pytest.raises(ev.EvalError, match="team_b: mode 'two-bridge-v1' plays team B itself"):
        ev.evaluate("random", "idle", **BRIDGE)
    with pytest.raises(
        ev.EvalError, match="team_a: System 'tdm-alpha' plays tdm-v2, not two-bridge"
    ):
        ev.evaluate("tdm-alpha", **BRIDGE)
    with pytest.raises(ev.EvalError, match="team_b: mode 'tdm-v2' has two teams"):
        ev.evaluate("random", maps=[47], games_per_map=2)
    with pytest.raises(ev.EvalError, match="mode: unknown mode 'chess'"):
        ev.evaluate("random", mode="chess")
    with pytest.raises(ev.EvalError, match=r"maps: .*unknown 'V9_Base'"):
        ev.evaluate("random", **{**BRIDGE, "maps": "V9_Base"})


def test_results_written_before_the_mode_column_still_load(base_games, tmp_path) -> None:
    old = base_games.drop(columns="mode")
    path = tmp_path / "old.csv"
    old.to_csv(path, index=False)
    record = {"format": "marl-bgs-results-v1", "games": len(old),
              "sha256": results.checksum(base_games, "marl-bgs-results-v1")}  # fmt: skip
    results.meta_path(path).write_text(json.dumps(record))
    loaded = results.load(path)
    assert set(loaded["mode"]) == {"tdm-v2"}
    pd.testing.assert_frame_equal(loaded[base_games.columns], base_games)
    edited = old.assign(seed_number=old["seed_number"].iloc[::-1].to_numpy())
    edited.to_csv(path, index=False)
    with pytest.raises(ev.EvalError, match=r"checksum mismatch|differ in"):
        results.load(path)


def test_the_command_line_plays_any_mode(bridge_games: pd.DataFrame, tmp_path) -> None:
    from typer.testing import CliRunner

    from marl_bgs_eval.cli import app

    out = tmp_path / "bridge.parquet"
    args = ["play", "random", "--mode", "two-bridge", "--maps", "V1_Base,V2_Base",
            "--games-per-map", "2", "--batch-size", "2", "--tick-limit", "20", "--metrics",
            "none", "--no-progress", "--out", str(out), "--replays", "3"]  # fmt: skip
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output
    assert "return" in run.output
    pd.testing.assert_frame_equal(results.load(out), bridge_games)
    saved = sorted((tmp_path / "bridge-replays").glob("*.replay.zip"))
    assert [replay_files.load(f).header["game"] for f in saved] == [0, 1, 2]
    wrong = CliRunner().invoke(app, ["play", "random", "idle", "--mode", "two-bridge"])
    assert wrong.exit_code == 2
    assert "name no team B" in wrong.output


def test_an_evaluations_games_are_recorded_and_replayed_by_the_engine(
    bridge_games: pd.DataFrame, tmp_path
) -> None:
    rows = bridge_games.iloc[[3, 0, 2]]  # both layouts (two shape groups), out of order
    replays = ev.record_games("random", None, rows, tick_limit=20)
    assert [r.header["game"] for r in replays] == rows["game"].tolist()
    for replay, row in zip(replays, rows.to_dict("records"), strict=True):
        back = replay_files.load(replay_files.save(replay, tmp_path / f"{row['game']}.zip"))
        assert back.ticks == row["ticks"]
        assert back.header["settings"] == {"variant": row["map_name"], "tick_limit": 20}
        assert back.header["row"] == {"seed": 0, "seed_number": row["seed_number"], "roster": 0,
                                      "a_spawn": row["a_spawn"]}  # fmt: skip
        assert OUTCOMES[back.header["outcome"]] == row["outcome"]
        states, _ = episode_replays.history(back)
        assert states.tick.tolist() == list(range(back.ticks + 1))
    one = replays[0]
    edited = {**one.header, "row": {**one.header["row"], "seed_number": 7}}
    with pytest.raises(ev.EvalError, match=r"row: seed and seed_number do not give the header"):
        replay_files.check_replay(Replay(header=edited, arrays=one.arrays))
    moved = {**one.arrays, "state.friend_pos": one.arrays["state.friend_pos"] + 0.5}
    with pytest.raises(ev.EvalError, match=r"the start: state.friend_pos differs"):
        replay_files.check_replay(Replay(header=one.header, arrays=moved))
    with pytest.raises(ev.EvalError, match=r"row 0 \(game 3\) has system_a 'random', but team_a"):
        ev.record_games("idle", None, rows)
    with pytest.raises(ev.EvalError, match=r"team_b: mode 'two-bridge-v1' plays team B itself"):
        ev.record_games("random", "idle", rows)
    with pytest.raises(ev.EvalError, match=r"game 3 ended loss after 20 ticks when recorded, "
                       r"but its row says loss after 19"):  # fmt: skip
        ev.record_games("random", None, rows.assign(ticks=19), tick_limit=20)


def test_classes_come_from_the_modes_parts() -> None:
    """`system(..., classes=)` reads the mode's `EvalParts.class_names` (letters: initials);
    a mode without classes refuses it naming the field; initials must be distinct."""
    assert parts("tdm").class_letters() == "MWHRP"
    act = lambda k, m, i: (i.obs[..., :3].astype(int) * 0, m)  # noqa: E731
    assert ev.system(act, name="mh", classes="mh").classes == {1, 3}
    assert ev.system(act, name="ids", classes=[2, 5]).classes == {2, 5}
    with pytest.raises(ev.EvalError, match=r"classes: expected class letters from 'MWHRP'"):
        ev.system(act, name="bad", classes="MX")
    with pytest.raises(ev.EvalError, match=r"classes: mode 'two-bridge-v1' has no classes"):
        ev.system(act, name="bridge", classes="M", mode="two-bridge")
    assert ev.system(act, name="bridge", mode="two-bridge").classes is None
    with pytest.raises(ev.EvalError, match=r"class_names: expected names with distinct initials"):
        ev.EvalParts(class_names=("mage", "medic"))
    with pytest.raises(ev.EvalError, match=r"class_names"):
        ev.EvalParts(class_names=("mage", ""))


def test_named_systems_come_from_the_modes_parts() -> None:
    """The registry's names include each mode's `EvalParts.systems` (TDM's scripted teams)."""
    from marl_bgs_eval.registry import get_system, names

    tdm = parts("tdm").systems
    assert set(tdm) == {"tdm-alpha", "tdm-beta", "tdm-gamma", "rush"}
    assert set(tdm) <= set(names())
    assert get_system("rush") is tdm["rush"]()
    assert parts("two-bridge").systems == {}


def test_the_metrics_command_searches_the_modes_own_schema() -> None:
    from typer.testing import CliRunner

    from marl_bgs_eval.cli import app

    run = CliRunner().invoke(app, ["metrics", "--mode", "two-bridge", "--plain"])
    assert run.exit_code == 0, run.output
    assert run.output.split() == ["return"]
    tdm = CliRunner().invoke(app, ["metrics", "heal", "--plain"])
    assert tdm.exit_code == 0
    assert tdm.output.split() == ev.find("heal")["column"].tolist()
    none = CliRunner().invoke(app, ["metrics", "--mode", "two-bridge", "--doc", "x.md"])
    assert none.exit_code == 2
    assert "error: doc: mode two-bridge-v1 has no metrics page" in none.output
