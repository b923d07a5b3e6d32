"""Team identities: a team's first accepted entry issues its token (kept only as its SHA-256);
every later entry of that team must present it; a refused entry withdraws what it issued."""

from __future__ import annotations

import fcntl
import hashlib
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.teams import (
    LOCK,
    ORGANISERS,
    REGISTRY,
    TeamError,
    check_token,
    claim,
    issue,
    read,
)


def _enter(folder: Path, team: str, token: str | None = None, **kw: object) -> str | None:
    with claim(folder, team, token, **kw) as issued:  # type: ignore[arg-type]
        return issued


def test_a_new_team_is_issued_a_token_kept_only_as_its_hash(tmp_path: Path) -> None:
    token = _enter(tmp_path, "lab")
    assert token is not None
    assert len(token) == 43  # secrets.token_urlsafe(32)
    assert read(tmp_path) == {"lab": hashlib.sha256(token.encode()).hexdigest()}
    assert token not in (tmp_path / REGISTRY).read_text()
    assert _enter(tmp_path, "lab", token) is None  # its later entries: the same token, no new one
    assert _enter(tmp_path, "other") != token
    assert check_token("") is None  # an empty form field: no token given
    for edge in ("a" * 20, "b" * 128):
        assert check_token(edge) == edge
    for over in ("a" * 19, "b" * 129):
        with pytest.raises(TeamError, match="expected the token"):
            check_token(over)


@pytest.mark.parametrize(
    ("token", "said"),
    [(None, "'lab' is registered; present the token"),
     ("", "'lab' is registered; present the token"),
     ("wrong-but-well-formed-token-000000000000", "this is not team 'lab''s token"),
     ("short", "expected the token"), (42, "expected the token"),
     ("x" * 129, "expected the token"), ("tok en with spaces and more", "expected the token")],
)  # fmt: skip
def test_a_registered_team_must_present_its_token(tmp_path: Path, token: object, said: str) -> None:
    real = _enter(tmp_path, "lab")
    before = (tmp_path / REGISTRY).read_bytes()
    with pytest.raises(TeamError, match=said) as err:
        _enter(tmp_path, "lab", token)  # type: ignore[arg-type]
    assert err.value.field == "token"
    assert str(err.value).startswith("token: ")
    assert (tmp_path / REGISTRY).read_bytes() == before
    assert _enter(tmp_path, "lab", real) is None


def test_a_refused_entry_withdraws_the_token_it_issued(tmp_path: Path) -> None:
    with pytest.raises(TournamentError, match="the rulebook refuses it"), claim(tmp_path, "lab",
                                                                               None):  # fmt: skip
        raise TournamentError("lab-bot: the rulebook refuses it")
    assert read(tmp_path) == {}
    kept = _enter(tmp_path, "lab")  # the name is free again
    with pytest.raises(TournamentError), claim(tmp_path, "lab", kept):
        raise TournamentError("a later refusal of a registered team")
    assert read(tmp_path) == {"lab": hashlib.sha256(str(kept).encode()).hexdigest()}


def test_new_names_organisers_and_teams_from_before_tokens(tmp_path: Path) -> None:
    with pytest.raises(TeamError, match="'fresh' has no token yet") as err:
        _enter(tmp_path, "fresh", secrets.token_urlsafe(32))
    assert err.value.field == "token"
    assert _enter(tmp_path, ORGANISERS) is None
    with pytest.raises(TeamError, match="holds entries from before team tokens") as err:
        _enter(tmp_path, "old-lab", entered={"old-lab"})
    assert err.value.field == "team"
    with pytest.raises(TournamentError, match=r"^team: expected 1-64"):
        _enter(tmp_path, "Team Alpha")
    assert read(tmp_path) == {}
    tokens = issue(tmp_path, ["old-lab", ORGANISERS, "b"])  # what the organisers (a season) do
    assert sorted(tokens) == ["b", "old-lab"]
    assert _enter(tmp_path, "old-lab", tokens["old-lab"], entered={"old-lab"}) is None
    with pytest.raises(TeamError, match="registered already"):
        issue(tmp_path, ["b"])


def test_the_registry_is_changed_by_one_process_at_a_time(tmp_path: Path) -> None:
    """While another process holds the registry's lock (the command line's challenge, say), an
    entry waits for it; of two entries of one new team at once, one gets the token."""
    with (tmp_path / LOCK).open("a") as held, ThreadPoolExecutor(2) as pool:
        fcntl.flock(held, fcntl.LOCK_EX)
        waiting = pool.submit(_enter, tmp_path, "lab")
        time.sleep(0.3)
        assert not waiting.done()
        fcntl.flock(held, fcntl.LOCK_UN)
        assert waiting.result(timeout=10) is not None

    def attempt(_: int) -> str | None:
        try:
            return _enter(tmp_path, "race")
        except TeamError:
            return None

    with ThreadPoolExecutor(8) as pool:
        got = [t for t in pool.map(attempt, range(16)) if t is not None]
    assert len(got) == 1
    assert read(tmp_path)["race"] == hashlib.sha256(got[0].encode()).hexdigest()


@pytest.mark.parametrize(
    ("text", "said"),
    [("{not json", "not JSON"), ('{"format": "other", "teams": {}}', "expected"),
     ('{"format": "marl-bgs-teams-v1", "teams": {"lab": {"sha256": "abc"}}}', "64 hex"),
     ('{"format": "marl-bgs-teams-v1", "teams": {"a b": {"sha256": "' + "0" * 64 + '"}}}',
      "expected 1-64")],
)  # fmt: skip
def test_a_registry_that_is_not_ours_is_refused(tmp_path: Path, text: str, said: str) -> None:
    (tmp_path / REGISTRY).write_text(text)
    with pytest.raises(TournamentError, match=f"^{REGISTRY}: .*{said}"):
        _enter(tmp_path, "lab")
    assert (tmp_path / REGISTRY).read_text() == text  # left as it was found
