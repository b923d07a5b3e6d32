"""The schedule's numbering: deterministic blocks, the field first, challengers after it."""

from __future__ import annotations

import pytest

from marl_bgs_tournament import TournamentError, challenger_schedule, field_schedule
from marl_bgs_tournament.modes import held_out_layouts
from marl_bgs_tournament.schedule import draw_root_seed

BIG_NINE = [f"m{k}" for k in range(9)]
TEST_MAPS = held_out_layouts("tdm")  # a season's default maps


def test_the_big_nine_round_robin_is_7200_games_numbered_without_gaps() -> None:
    plan = field_schedule(BIG_NINE, len(TEST_MAPS), 20)
    assert TEST_MAPS == (47, 48, 49, 50, 51)
    assert len(plan) == 36
    assert set(plan["games"]) == {200}
    assert plan["games"].sum() == 7200
    assert list(plan["first_game"]) == [200 * k for k in range(36)]
    assert list(plan["first_seed_number"]) == [100 * k for k in range(36)]
    assert all(plan["seat_a"] < plan["seat_b"])  # the earlier seat is team A
    pairs = {frozenset(p) for p in zip(plan["system_a"], plan["system_b"], strict=True)}
    assert len(pairs) == 36


def test_the_numbering_is_deterministic() -> None:
    assert field_schedule(BIG_NINE, 5, 20).equals(field_schedule(BIG_NINE, 5, 20))


def test_every_challenger_gets_the_same_blocks_after_the_field() -> None:
    one = challenger_schedule("new-a", BIG_NINE, 5, 20)
    two = challenger_schedule("new-b", BIG_NINE, 5, 20)
    cols = ["block", "system_b", "seat_b", "first_game", "first_seed_number", "games"]
    assert one[cols].equals(two[cols])
    assert list(one["first_game"]) == [7200 + 200 * j for j in range(9)]
    assert set(one["system_a"]) == {"new-a"}
    assert list(one["system_b"]) == BIG_NINE


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: field_schedule(["a", "a"], 5, 20), "field"),
        (lambda: field_schedule(["a"], 5, 20), "field"),
        (lambda: field_schedule(["a", "b"], 5, 0), "pairs_per_map"),
        (lambda: field_schedule(["a", "b"], 0, 2), "maps"),
        (lambda: challenger_schedule("a", ["a", "b"], 5, 2), "challenger"),
    ],
)
def test_bad_schedules_are_refused_naming_the_field(call, field) -> None:
    with pytest.raises(TournamentError, match=field):
        call()


def test_root_seeds_are_fresh_63_bit_numbers() -> None:
    seeds = {draw_root_seed() for _ in range(20)}
    assert len(seeds) == 20
    assert all(0 <= s < 2**63 for s in seeds)
