"""Tiers and divisions exactly as paper Table S8."""

from __future__ import annotations

import pytest

from marl_bgs_eval.tiers import division, tier, win_chance


@pytest.mark.parametrize(
    ("elo", "label"),
    [
        (1441, "Platinum 4"),
        (1400, "Platinum 5"),
        (1439.9, "Platinum 5"),
        (1599.9, "Platinum 1"),
        (1200, "Gold 5"),
        (1358, "Gold 2"),
        (1360, "Gold 1"),
        (1304, "Gold 3"),
        (1240, "Gold 4"),
        (1140, "Silver 2"),
        (1043, "Silver 4"),
        (1000, "Silver 5"),
        (974, "Bronze 1"),
        (800, "Bronze 5"),
        (799.9, "Iron 1"),
        (760, "Iron 1"),
        (759, "Iron 2"),
        (100, "Iron 5"),
        (1999, "Master 1"),
        (1800, "Master 5"),
        (1600, "Diamond 5"),
        (2000, "Grandmaster"),
        (3500, "Grandmaster"),
    ],
)
def test_tier_labels(elo: float, label: str) -> None:
    assert tier(elo) == label


def test_win_chance_matches_table_s8() -> None:
    assert win_chance(1200) == 0.5
    assert round(100 * win_chance(1400), 1) == 76.0
    assert round(100 * win_chance(1600), 1) == 90.9
    assert round(100 * win_chance(1800), 1) == 96.9
    assert round(100 * win_chance(800), 1) == 9.1
    assert round(win_chance(1441), 2) == 0.80
    assert division(2100) == ("Grandmaster", None)


def test_tier_rejects_nan() -> None:
    with pytest.raises(ValueError, match="elo"):
        tier(float("nan"))
