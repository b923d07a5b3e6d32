"""The season's schedule and seeds (rulebook v1): who plays whom, where, with which numbers.

Every pairing plays the same block of games: on each of the season's maps (its mode's test
layouts by default, `modes.season_layouts`: Team Deathmatch's test maps 47-51) `pairs_per_map`
spawn-swapped pairs that share a seed number, 2 x 5 x 20 = 200 games at full size. Blocks are
numbered in a fixed order: first the field's round robin (seats i < j, seat i is team A), then
one block per seat for challengers. Every challenger plays team A against the member in seat j
in block `n_field_pairings + j`, so all challengers meet a member on the same maps, spawn ends and
seed numbers; only the root seed, drawn after the challenger's training, differs.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import pandas as pd

from marl_bgs_tournament.errors import TournamentError

PAIRS_PER_MAP = 20
COLUMNS = ("block", "system_a", "system_b", "seat_a", "seat_b", "first_game",
           "first_seed_number", "games")  # fmt: skip


def games_per_pairing(n_maps: int, pairs_per_map: int) -> int:
    """Games in one pairing's block: two per pair, `pairs_per_map` pairs on every map."""
    return 2 * n_maps * pairs_per_map


def block(index: int, n_maps: int, pairs_per_map: int) -> tuple[int, int]:
    """(first game number, first seed number) of block `index`."""
    g = games_per_pairing(n_maps, pairs_per_map)
    return index * g, index * g // 2


def _check(field: Sequence[str], n_maps: int, pairs_per_map: int) -> None:
    if len(set(field)) != len(field):
        raise TournamentError(f"field: names must be unique, got {list(field)}")
    if len(field) < 2:
        raise TournamentError(f"field: a season needs at least 2 Systems, got {len(field)}")
    if n_maps < 1:
        raise TournamentError("maps: expected at least one map")
    if isinstance(pairs_per_map, bool) or not isinstance(pairs_per_map, int) or pairs_per_map < 1:
        raise TournamentError(f"pairs_per_map: expected a positive integer, got {pairs_per_map!r}")


def field_pairings(n: int) -> list[tuple[int, int]]:
    """The round robin's pairings by seat, in block order: (0, 1), (0, 2), ..., (n-2, n-1)."""
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def field_schedule(field: Sequence[str], n_maps: int, pairs_per_map: int) -> pd.DataFrame:
    """One row per pairing of the field's round robin (see `COLUMNS`)."""
    _check(field, n_maps, pairs_per_map)
    rows = []
    for k, (i, j) in enumerate(field_pairings(len(field))):
        first, seed = block(k, n_maps, pairs_per_map)
        rows.append((k, field[i], field[j], i, j, first, seed,
                     games_per_pairing(n_maps, pairs_per_map)))  # fmt: skip
    return pd.DataFrame(rows, columns=list(COLUMNS))


def challenger_schedule(
    challenger: str, field: Sequence[str], n_maps: int, pairs_per_map: int
) -> pd.DataFrame:
    """One row per member: the challenger (team A, seat -1) against the member in seat j, in
    block n_pairings + j whoever the challenger is."""
    _check(field, n_maps, pairs_per_map)
    if challenger in field:
        raise TournamentError(f"challenger: {challenger!r} is already a member of the field")
    base = len(field_pairings(len(field)))
    rows = []
    for j, member in enumerate(field):
        first, seed = block(base + j, n_maps, pairs_per_map)
        rows.append((base + j, challenger, member, -1, j, first, seed,
                     games_per_pairing(n_maps, pairs_per_map)))  # fmt: skip
    return pd.DataFrame(rows, columns=list(COLUMNS))


def draw_root_seed() -> int:
    """A fresh root seed (63 bits from the OS's secure generator), drawn after training and
    published with the results."""
    return secrets.randbits(63)
