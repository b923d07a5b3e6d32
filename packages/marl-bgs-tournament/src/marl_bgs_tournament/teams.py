"""Team identities: who may enter a System for a team.

A season folder keeps `teams.json`: each registered team's name and the SHA-256 of its token.
A team's first accepted submission draws the token (`secrets.token_urlsafe(32)`), which its
submitter sees once; the token itself is stored nowhere. Every later submission for that team
must present it, compared with `hmac.compare_digest`, or it is refused naming the field `token`:
so nobody takes another team's seat by naming that team. The organisers' team (built-in
entrants, and System files the organisers put in a season's field) needs no token; uploads may
not use its name.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable import check_name

ORGANISERS = "organisers"  # the team of built-in entrants (scripted teams, baselines)
REGISTRY = "teams.json"
FORMAT = "marl-bgs-teams-v1"
LOCK = ".teams.lock"
TOKEN_BYTES = 32  # secrets.token_urlsafe(32): 43 characters
TOKEN = re.compile(r"[A-Za-z0-9_-]{20,128}")
DIGEST = re.compile(r"[0-9a-f]{64}")
MAX_REGISTRY_BYTES = 4 << 20
HOW_TO_PROVE = (
    "A team proves who it is with its token. The first accepted submission under a new team "
    "name issues the token and shows it once (only its SHA-256 is kept, so it cannot be shown "
    "again); every later submission for that team must present it (field or option `token`), "
    "else it is refused. The organisers' built-in entrants need none."
)


class TeamError(TournamentError):
    """A submission refused for its team's identity: `field` is "team" or "token"."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def check_token(value: Any) -> str | None:
    """A presented token (None or "" when none is given); TournamentError naming `token`
    for anything that cannot be a token."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or TOKEN.fullmatch(value) is None:
        raise TeamError(
            "token", "expected the token your team's first accepted submission was given "
            "(20-128 letters, digits, '-' or '_')",
        )  # fmt: skip
    return value


def read(folder: Path) -> dict[str, str]:
    """Registered team -> SHA-256 of its token ({} before any is registered); a registry
    that is not what this module writes is refused (TournamentError naming `teams.json`)."""
    path = folder / REGISTRY
    if not path.exists():
        return {}
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_REGISTRY_BYTES:
        raise TournamentError(f"{REGISTRY}: not a regular file of at most {MAX_REGISTRY_BYTES}")
    try:
        raw = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise TournamentError(f"{REGISTRY}: not JSON") from None
    if (
        not isinstance(raw, dict)
        or raw.get("format") != FORMAT
        or not isinstance(raw.get("teams"), dict)
    ):
        raise TournamentError(f"{REGISTRY}: expected {{'format': {FORMAT!r}, 'teams': {{...}}}}")
    out = {}
    for team, entry in raw["teams"].items():
        sha = entry.get("sha256") if isinstance(entry, dict) else None
        if not isinstance(sha, str) or DIGEST.fullmatch(sha) is None:
            raise TournamentError(f"{REGISTRY}: team {team!r}: expected a sha256 of 64 hex digits")
        out[check_name(team, f"{REGISTRY}: team")] = sha
    return out


def _save(folder: Path, teams: dict[str, str]) -> None:
    """The registry, written whole or not at all."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    text = json.dumps({"format": FORMAT, "teams": {t: {"sha256": s} for t, s in teams.items()},
                       "updated": now}, indent=1)  # fmt: skip
    handle, tmp = tempfile.mkstemp(dir=folder, prefix=f".{REGISTRY}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as out:
            out.write(text + "\n")
        os.replace(tmp, folder / REGISTRY)
    finally:
        Path(tmp).unlink(missing_ok=True)


@contextmanager
def _locked(folder: Path) -> Iterator[dict[str, str]]:
    """The registry, read and changed by one process at a time (held briefly, never while games
    are played)."""
    with (folder / LOCK).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield read(folder)
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def issue(folder: Path, teams: Iterable[str]) -> dict[str, str]:
    """Register every team of `teams` (the organisers' excepted) and return each one's new token,
    to be shown once; a team already registered is refused."""
    tokens = {}
    with _locked(folder) as known:
        for team in teams:
            team = check_name(team, "team")
            if team == ORGANISERS or team in tokens:
                continue
            if team in known:
                raise TeamError("team", f"{team!r} is registered already; it has its token")
            tokens[team] = secrets.token_urlsafe(TOKEN_BYTES)
            known[team] = _digest(tokens[team])
        if tokens:
            _save(folder, known)
    return tokens


def _withdraw(folder: Path, team: str, digest: str) -> None:
    with _locked(folder) as known:
        if known.get(team) == digest:
            del known[team]
            _save(folder, known)


@contextmanager
def claim(
    folder: Path, team: str, token: str | None, *, entered: Collection[str] = ()
) -> Iterator[str | None]:
    """Enter a submission for `team`: a registered team must present its `token`; a new team is
    registered at once and its new token is yielded (None otherwise) for the caller to show
    once. If the block raises, a registration it made is withdrawn (the submission was not
    accepted). A new name among `entered` (teams holding entries in the season, from before
    tokens) is refused: the organisers `issue` its token. The organisers' team needs none."""
    team = check_name(team, "team")
    token = check_token(token)
    if team == ORGANISERS:
        yield None
        return
    with _locked(folder) as known:
        if team in known:
            if token is None:
                raise TeamError(
                    "token", f"team {team!r} is registered; present the token its first "
                    "accepted submission was given",
                )  # fmt: skip
            if not hmac.compare_digest(known[team], _digest(token)):
                raise TeamError("token", f"this is not team {team!r}'s token")
            issued = None
        elif token is not None:
            raise TeamError(
                "token", f"team {team!r} has no token yet; send none, and its first accepted "
                "submission is given one",
            )  # fmt: skip
        elif team in entered:
            raise TeamError(
                "team", f"{team!r} holds entries from before team tokens; ask the organisers "
                "for its token",
            )  # fmt: skip
        else:
            issued = secrets.token_urlsafe(TOKEN_BYTES)
            known[team] = _digest(issued)
            _save(folder, known)
    try:
        yield issued
    except BaseException:
        if issued is not None:
            _withdraw(folder, team, _digest(issued))
        raise
