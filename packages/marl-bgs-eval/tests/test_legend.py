"""The key every picture carries and the words for a final result: true to the engine's tables,
complete for what the pictures draw, and a draw says why it is one."""

from __future__ import annotations

import pytest

from marl_bgs.tdm import classes as C
from marl_bgs.tdm.lifecycle import RED_ZONE_DEATH_POINTS
from marl_bgs_eval.tdm import legend


def _row(result: str, a: int, b: int, ticks: int, limit: int = 300) -> dict:
    return {"result": result, "points_a": a, "points_b": b, "ticks": ticks, "tick_limit": limit}


def test_result_text_says_how_a_game_ended() -> None:
    assert legend.result_text(_row("win", 20, 14, 120)) == "A wins (20-14)"
    assert legend.result_text(_row("loss", 9, 21, 88)) == "B wins (9-21)"
    assert legend.result_text(_row("draw", 2, 3, 300)) == "draw at the tick limit (2-3)"
    assert legend.result_text(_row("draw", 20, 20, 140)) == "draw at the winning score (20-20)"
    assert legend.result_text(_row("unfinished", 4, 1, 12)) == "unfinished (4-1)"
    with pytest.raises(ValueError, match=r"result: expected one of .*got 'won'"):
        legend.result_text(_row("won", 1, 0, 5))


def test_result_text_of_every_evaluated_game(base_games) -> None:
    """Real rows: a draw below the winning score ended at the tick limit, and says so."""
    texts = [legend.result_text(row) for row in base_games.to_dict("records")]
    for row, text in zip(base_games.to_dict("records"), texts, strict=True):
        score = f"({row['points_a']}-{row['points_b']})"
        assert text.endswith(score)
        if row["result"] == "draw" and max(row["points_a"], row["points_b"]) < 5:
            assert text == f"draw at the tick limit {score}"
    assert any(t.startswith("draw at the tick limit") for t in texts)


def test_the_key_names_every_class_and_status_the_engine_has() -> None:
    classes = {e.symbol: e.meaning for e in legend.key("classes")}
    assert classes == {k: C.CLASS_NAMES[v].capitalize() for k, v in C.CLASS_LETTERS.items()}
    statuses = set(C.DURATION_CAPS) - {"cooldown"}
    assert set(legend.BADGES) == statuses  # the shield is a ring, every other status a badge
    letters = [b.symbol for b in legend.BADGES.values()]
    assert len(set(letters)) == len(letters)
    assert all(b.colour is not None for b in legend.BADGES.values())
    assert legend.key("badges") == tuple(legend.BADGES.values())


def test_the_meanings_carry_the_engines_numbers() -> None:
    text = {e.symbol: e.meaning for e in legend.key("rings", "zones")}
    assert f"radius {C.AURA_RADIUS:g}" in text["dashed ring"]
    assert f"x{C.MAGE_AURA_MULT:g}" in text["dashed ring"]
    assert f"x{C.WARRIOR_AURA_MULT:g}" in text["dashed ring"]
    assert f"{RED_ZONE_DEATH_POINTS} points" in text["Red Zone"]
    assert f"x{C.BURST_MULT:g}" in legend.BADGES["burst"].meaning
    assert f"x{C.HUNTER_SLOW_MULT:g}" in legend.BADGES["slow_hunter"].meaning


def test_key_groups() -> None:
    assert legend.key() == legend.key(*legend.PICTURE)
    assert legend.key("teams")[0].colour == legend.TEAM_COLOURS[0]
    assert not set(legend.key("dead")) & set(legend.key())  # only the web draws the dead
    with pytest.raises(ValueError, match=r"groups: expected some of \[.*\], got \['legend'\]"):
        legend.key("legend")
