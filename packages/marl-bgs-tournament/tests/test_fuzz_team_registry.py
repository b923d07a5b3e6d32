"""Fuzz: damaged team registries (`teams.json`) and hostile team names and tokens.

Every input comes from a fixed seed per case: a registry of two real teams with bytes flipped,
cut or appended, replaced by a random JSON value, or with one team's entry set to a random JSON
value; a token or a team name as a random JSON value or odd text, as an upload's form would
carry them. Each must end in exactly one of two ways: the project's error naming the field
(`teams.json`, `token`, `team`), or, when the input is valid, exactly what was written.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from marl_bgs_eval.fuzzing import flip_bytes, json_value, odd_text
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.teams import REGISTRY, TeamError, check_token, issue, read
from marl_bgs_tournament.web.uploads import UploadError, check_team

pytestmark = pytest.mark.fuzz_family("team registries and tokens")


def _one_entry(rng: random.Random, text: bytes) -> bytes:
    raw = json.loads(text)
    raw["teams"][rng.choice(sorted(raw["teams"]))] = json_value(rng, 1)
    return json.dumps(raw).encode()


REGISTRIES: dict[str, tuple[Callable[[random.Random, bytes], bytes], int]] = {
    "flip": (flip_bytes, 25),
    "cut": (lambda rng, t: t[: rng.randrange(len(t))], 10),
    "append": (lambda rng, t: t + rng.randbytes(rng.randint(1, 50)), 5),
    "random value": (lambda rng, t: json.dumps(json_value(rng)).encode(), 10),
    "one entry": (_one_entry, 15),
    "nested": (lambda rng, t: b"[" * rng.randint(10_000, 200_000), 2),
}
CASES = [(f, k) for f, (_, n) in REGISTRIES.items() for k in range(n)]


@pytest.mark.parametrize(("family", "case"), CASES, ids=[f"{f}-{k}" for f, k in CASES])
def test_a_damaged_registry_is_refused_or_read_exactly(
    tmp_path: Path, family: str, case: int, record_property: Any
) -> None:
    issue(tmp_path, ["lab", "other-lab"])
    rng = random.Random(f"{family}-{case}")
    data = REGISTRIES[family][0](rng, (tmp_path / REGISTRY).read_bytes())
    (tmp_path / REGISTRY).write_bytes(data)
    try:
        got, said = read(tmp_path), None
    except TournamentError as err:
        got, said = None, str(err)
    if said is not None:
        assert said.startswith(f"{REGISTRY}: "), said
        record_property("outcome", "error")
        return
    assert got is not None
    written = json.loads(data)["teams"]  # a flip may land in a date, a name or a hex digit
    assert got == {team: entry["sha256"] for team, entry in written.items()}
    assert len(got) == 2
    record_property("outcome", "accepted")


VALUES = list(range(40))


@pytest.mark.parametrize("case", VALUES)
def test_hostile_tokens_and_team_names_are_refused_naming_their_field(
    case: int, record_property: Any
) -> None:
    rng = random.Random(f"form-{case}")
    value = odd_text(rng) if case % 2 else json_value(rng)
    fields = []  # the field each refusal names
    try:
        assert check_token(value) in (None, value)
    except TeamError as err:
        fields.append(err.field)
    try:
        assert check_team(value) == value
    except UploadError as err:
        fields.append(f"{err.field} {err.status}")
    assert set(fields) <= {"token", "team 422"}, fields
    record_property("outcome", "error" if fields else "accepted")
