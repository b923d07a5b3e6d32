"""Bad input gets a clear error naming the field, the System or the column."""

from __future__ import annotations

import pandas as pd
import pytest

import marl_bgs_eval as ev
from marl_bgs_eval import registry


def test_unknown_system_name(kit) -> None:
    with pytest.raises(ev.EvalError, match=r"team_b: .*unknown System 'nobody'"):
        ev.evaluate(kit.rush, "nobody", **kit.settings)


def test_per_class_team_lacking_a_class(kit) -> None:
    no_priest = ev.team(classes={"M": kit.rush, "W": kit.rush, "H": kit.rush, "R": kit.rush})
    with pytest.raises(ev.EvalError, match=r"rosters\[0\] \(team_a\).*priest"):
        ev.evaluate(no_priest, "random", **kit.settings)
    assert no_priest.problem([1, 2, 3, 4, 0]) is None


def test_system_limited_to_some_classes(kit) -> None:
    mage_only = ev.system(
        lambda k, m, i: (i.obs[..., :3].astype(int) * 0, m), name="m", classes="M"
    )
    assert "warrior" in (mage_only.problem([1, 2, 0, 0, 0]) or "")
    with pytest.raises(ev.EvalError, match="team_b"):
        ev.evaluate(kit.rush, mage_only, **kit.settings)


def test_maps_outside_the_split(kit) -> None:
    with pytest.raises(ev.EvalError, match=r"maps: \[0, 12\] are not in split 'test'"):
        ev.evaluate(kit.rush, "random", split="test", **kit.settings)
    with pytest.raises(ev.EvalError, match="maps"):
        ev.evaluate(kit.rush, "random", **{**kit.settings, "maps": [999]})


def test_bad_settings(kit) -> None:
    with pytest.raises(ev.EvalError, match=r"games_per_map.*even"):
        ev.evaluate(kit.rush, "random", **{**kit.settings, "games_per_map": 3})
    with pytest.raises(ev.EvalError, match="metrics"):
        ev.evaluate(kit.rush, "random", metrics="all", **kit.settings)
    with pytest.raises(ValueError, match="tick_limit"):
        ev.evaluate(kit.rush, "random", **{**kit.settings, "tick_limit": -1})
    with pytest.raises(ev.EvalError, match="order"):
        ev.evaluate(kit.rush, "random", order=[0, 0], **kit.settings)
    with pytest.raises(ev.EvalError, match="slots"):
        ev.team(slots={7: kit.rush})
    with pytest.raises(ev.EvalError, match="weights"):
        ev.pool([kit.rush], [-1.0])
    with pytest.raises(ev.EvalError, match="classes"):
        ev.team(classes={"X": kit.rush})


def test_results_files_are_validated(base_games: pd.DataFrame, tmp_path) -> None:
    bad = base_games.drop(columns="result")
    bad.to_parquet(tmp_path / "a.parquet")
    with pytest.raises(ev.EvalError, match=r"missing column\(s\) \['result'\]"):
        ev.load(tmp_path / "a.parquet")
    base_games.assign(points_a="many").to_parquet(tmp_path / "b.parquet")
    with pytest.raises(ev.EvalError, match="column 'points_a'"):
        ev.load(tmp_path / "b.parquet")
    base_games.assign(map=1.5).to_parquet(tmp_path / "c.parquet")
    with pytest.raises(ev.EvalError, match="column 'map': expected integers"):
        ev.load(tmp_path / "c.parquet")
    base_games.assign(result="victory").to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(ev.EvalError, match="column 'result'"):
        ev.load(tmp_path / "d.csv")
    base_games.drop(columns="a_kills").to_csv(tmp_path / "e.csv", index=False)
    with pytest.raises(ev.EvalError, match="a_kills"):
        ev.load(tmp_path / "e.csv")
    (tmp_path / "f.parquet").write_bytes(b"not parquet")
    with pytest.raises(ev.EvalError, match="cannot read"):
        ev.load(tmp_path / "f.parquet")
    with pytest.raises(ev.EvalError, match="does not exist"):
        ev.load(tmp_path / "none.csv")


def test_a_misspelled_name_gets_a_did_you_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    """System names (and prefix families), scripted teams, metric levels, families and
    measures: the closest known name is suggested; a name close to none gets no hint."""
    from marl_bgs_eval.tdm.metrics import check_level
    from marl_bgs_eval.tdm.metrics.analysis import by_class, measure
    from marl_bgs_eval.tdm.scripted import scripted_system

    hint = r" \(did you mean '{}'\?\)"
    with pytest.raises(ev.EvalError, match="unknown System 'tdm-alfa'" + hint.format("tdm-alpha")):
        ev.get_system("tdm-alfa")
    # a prefix family, as marl-bgs-train registers `ckpt:` (not installed beside eval alone)
    monkeypatch.setitem(registry._PREFIXES, "ckpt", lambda path: ev.get_system("idle"))
    with pytest.raises(ev.EvalError, match="System 'ckp:runs/x'" + hint.format("ckpt:runs/x")):
        ev.get_system("ckp:runs/x")
    with pytest.raises(ev.EvalError, match=r"unknown System 'nobody'; registered: \["):
        ev.get_system("nobody")
    with pytest.raises(ev.EvalError, match="team 'tdm-gama'" + hint.format("tdm-gamma")):
        scripted_system("tdm-gama")
    with pytest.raises(ev.EvalError, match="got 'ful'" + hint.format("full")):
        check_level("ful")
    with pytest.raises(ev.EvalError, match="family 'damage_dne'" + hint.format("damage_done")):
        by_class(pd.DataFrame(), "damage_dne", "a")
    with pytest.raises(
        ev.EvalError, match="'kills_per_100_tick'" + hint.format("kills_per_100_ticks")
    ):
        measure("kills_per_100_tick")
