"""Reading one upload (multipart fields `file`, `team` and `token`) with its size bounded twice:
by the Content-Length it announces and by the bytes that actually arrive, so an oversized body is
refused before it is stored; and its time bounded twice: a body that sends nothing for
`read_timeout` seconds, or is not whole after `body_timeout`, is refused (408). The file lands in
the submissions' incoming folder."""

from __future__ import annotations

import asyncio
import hashlib
import re
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable import check_name
from marl_bgs_tournament.teams import ORGANISERS, check_token

SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,99}")
FORM_SLACK = 16 << 10  # the multipart framing and the team field around the file
CHUNK = 1 << 16
READ_TIMEOUT_S = 15.0  # the longest a body may send nothing
BODY_TIMEOUT_S = 300.0  # the longest a whole body may take (32 MiB at about 110 kB/s)


class UploadError(Exception):
    """A refused upload: HTTP `status`, the form `field` at fault, and why."""

    def __init__(self, status: int, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.status, self.field = status, field


@dataclass(frozen=True)
class Upload:
    """An upload stored in the incoming folder: its display name, team, presented token (None
    when none), size and SHA-256."""

    path: Path
    filename: str
    team: str
    token: str | None
    size: int
    sha256: str


def check_team(value: object) -> str:
    """A team name by the System files' rule (`portable.check_name`), not the organisers'
    (UploadError 422 naming `team` otherwise)."""
    if not isinstance(value, str) or not value:
        raise UploadError(422, "team", "missing or empty; give the submitting team's name")
    try:
        team = check_name(value, "team")
    except TournamentError as err:
        raise UploadError(422, "team", str(err).removeprefix("team: ")) from None
    if team == ORGANISERS:
        raise UploadError(422, "team", f"{ORGANISERS!r} is the organisers'; give your own team")
    return team


def _token(value: object) -> str | None:
    try:
        return check_token(value)
    except TournamentError as err:
        raise UploadError(422, "token", str(err).removeprefix("token: ")) from None


def safe_filename(name: str | None) -> str:
    """The uploaded file's own name if it is plain (no folders, odd characters), else a
    fixed one; it is never used to find anything."""
    base = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    return base if SAFE_NAME.fullmatch(base) and ".." not in base else "upload.bin"


def _announced(request: Request, limit: int) -> None:
    raw = request.headers.get("content-length")
    if raw is None:
        return
    if not raw.isdigit():
        raise UploadError(400, "file", "Content-Length is not a number")
    if int(raw) > limit + FORM_SLACK:
        raise UploadError(413, "file", f"the upload is larger than {limit} bytes")


async def _bounded(
    stream: AsyncIterator[bytes], limit: int, read_timeout: float, body_timeout: float
) -> AsyncGenerator[bytes, None]:
    """The body's chunks, refused when it grows past `limit` (413) or stalls (408)."""
    seen, loop = 0, asyncio.get_running_loop()
    deadline = loop.time() + body_timeout
    while True:
        wait = min(read_timeout, deadline - loop.time())
        try:
            chunk = await asyncio.wait_for(anext(stream), max(wait, 0.0))
        except StopAsyncIteration:
            return
        except TimeoutError:
            said = (f"nothing arrived for {read_timeout:g} s" if wait == read_timeout
                    else f"the upload took longer than {body_timeout:g} s")  # fmt: skip
            raise UploadError(408, "file", f"{said}; the request is closed") from None
        seen += len(chunk)
        if seen > limit + FORM_SLACK:
            raise UploadError(413, "file", f"the upload is larger than {limit} bytes")
        yield chunk


async def _store(file: UploadFile, folder: Path, limit: int) -> tuple[Path, int, str]:
    path, digest, size = folder / f"{uuid.uuid4().hex}.part", hashlib.sha256(), 0
    try:
        with open(path, "wb") as out:
            while chunk := await file.read(CHUNK):
                size += len(chunk)
                if size > limit:
                    raise UploadError(413, "file", f"the file is larger than {limit} bytes")
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path, size, digest.hexdigest()


async def receive(
    request: Request,
    limit: int,
    folder: Path,
    read_timeout: float = READ_TIMEOUT_S,
    body_timeout: float = BODY_TIMEOUT_S,
) -> Upload:
    """Read the upload of `request` into `folder` (UploadError when refused; nothing is left
    behind then)."""
    _announced(request, limit)
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise UploadError(422, "file", "expected a multipart/form-data upload")
    body = _bounded(aiter(request.stream()), limit, read_timeout, body_timeout)
    parser = MultiPartParser(request.headers, body, max_files=1, max_fields=3, max_part_size=4096)
    try:
        form = await parser.parse()
    except MultiPartException as err:
        raise UploadError(422, "file", f"not a readable upload ({err.message})") from None
    try:
        team = check_team(form.get("team"))
        token = _token(form.get("token"))
        file = form.get("file")
        if not isinstance(file, UploadFile):
            raise UploadError(422, "file", "missing; send the System file as field 'file'")
        path, size, sha = await _store(file, folder, limit)
        if size == 0:
            path.unlink(missing_ok=True)
            raise UploadError(422, "file", "the file is empty")
        return Upload(path, safe_filename(file.filename), team, token, size, sha)
    finally:
        await form.close()
