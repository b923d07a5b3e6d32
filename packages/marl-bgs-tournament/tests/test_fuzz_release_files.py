"""Fuzz: damaged release files (`release.json` of a released population), as `pop:` names read
them.

Every input comes from a fixed seed per case: a release's `release.json` (two members, their
records of the release's form; `conftest.made_release`) with bytes flipped, cut or
appended, one field (at the top, of a member or of its record) replaced by a random JSON value,
or random bytes. Each must end in exactly one of two ways: a
`TournamentError` naming the release file, or, when the file is valid, exactly what was written;
then every member it lists is either its checked file or a `TournamentError` naming the member.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from marl_bgs_eval.fuzzing import flip_bytes, json_value
from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.population import RELEASE_FILE, member_file, read_release

pytestmark = pytest.mark.fuzz_family("population release files")


def _field(rng: random.Random, data: bytes) -> bytes:
    """One field, at the top, of a member or of a member's record, given a random value."""
    doc = json.loads(data)
    member = doc["members"][rng.choice(sorted(doc["members"]))]
    where = rng.choice([doc, member, member["record"]])
    where[rng.choice(sorted(where))] = json_value(rng)
    return json.dumps(doc).encode()


DAMAGE: dict[str, tuple[Callable[[random.Random, bytes], bytes], int]] = {
    "flip": (flip_bytes, 30),
    "cut": (lambda rng, d: d[: rng.randrange(len(d))], 10),
    "append": (lambda rng, d: d + rng.randbytes(rng.randint(1, 60)), 6),
    "field": (_field, 30),
    "random bytes": (lambda rng, d: rng.randbytes(rng.randint(0, 400)), 6),
}
CASES = [(f, k) for f, (_, n) in DAMAGE.items() for k in range(n)]


@pytest.mark.parametrize(("family", "case"), CASES, ids=[f"{f}-{k}" for f, k in CASES])
def test_a_damaged_release_file_is_refused_or_read_exactly(
    made_release: Path, tmp_path: Path, family: str, case: int, record_property: Any
) -> None:
    rng = random.Random(f"{family}-{case}")
    folder = tmp_path / "rel"
    shutil.copytree(made_release, folder)
    data = DAMAGE[family][0](rng, (made_release / RELEASE_FILE).read_bytes())
    (folder / RELEASE_FILE).write_bytes(data)
    try:
        got, said = read_release(folder), None
    except TournamentError as err:
        got, said = None, str(err)
    if said is not None:
        assert said.startswith("population: "), said
        assert RELEASE_FILE in said, said
        record_property("outcome", "error")
        return
    assert json.dumps(got, sort_keys=True) == json.dumps(json.loads(data), sort_keys=True)
    for member in got["members"]:
        try:
            path, said = member_file(member, folder), None
        except TournamentError as err:
            path, said = None, str(err)
        if said is not None:
            assert said.startswith(f"pop:{member}: "), said
            continue
        assert path == folder / f"{member}.mbgs"
        assert path.read_bytes() == (made_release / path.name).read_bytes()
    record_property("outcome", "accepted")
