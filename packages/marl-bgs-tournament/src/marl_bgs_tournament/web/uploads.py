"""Reading one upload (multipart fields `file` and `team`) with its size bounded twice: by the
Content-Length it announces and by the bytes that actually arrive, so an oversized body is
refused before it is stored. The file lands in the submissions' incoming folder."""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

TEAM = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.\-]{0,63}")
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,99}")
FORM_SLACK = 16 << 10  # the multipart framing and the team field around the file
CHUNK = 1 << 16


class UploadError(Exception):
    """A refused upload: HTTP `status`, the form `field` at fault, and why."""

    def __init__(self, status: int, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.status, self.field = status, field


@dataclass(frozen=True)
class Upload:
    """An upload stored in the incoming folder, with its team, size and SHA-256."""

    path: Path
    filename: str
    team: str
    size: int
    sha256: str


def check_team(value: object) -> str:
    """A team name: 1-64 letters, digits, spaces, '.', '_' or '-', starting with a letter or
    digit (UploadError 422 naming `team` otherwise)."""
    if not isinstance(value, str) or not value.strip():
        raise UploadError(422, "team", "missing or empty; give the submitting team's name")
    team = value.strip()
    if TEAM.fullmatch(team) is None:
        raise UploadError(
            422, "team", "expected 1-64 letters, digits, spaces, '.', '_' or '-', starting "
            "with a letter or digit",
        )  # fmt: skip
    return team


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


async def _bounded(stream: AsyncIterator[bytes], limit: int) -> AsyncGenerator[bytes, None]:
    seen = 0
    async for chunk in stream:
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


async def receive(request: Request, limit: int, folder: Path) -> Upload:
    """Read the upload of `request` into `folder` (UploadError when refused; nothing is left
    behind then)."""
    _announced(request, limit)
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise UploadError(422, "file", "expected a multipart/form-data upload")
    parser = MultiPartParser(
        request.headers, _bounded(request.stream(), limit),
        max_files=1, max_fields=2, max_part_size=4096,
    )  # fmt: skip
    try:
        form = await parser.parse()
    except MultiPartException as err:
        raise UploadError(422, "file", f"not a readable upload ({err.message})") from None
    try:
        team = check_team(form.get("team"))
        file = form.get("file")
        if not isinstance(file, UploadFile):
            raise UploadError(422, "file", "missing; send the System file as field 'file'")
        path, size, sha = await _store(file, folder, limit)
        if size == 0:
            path.unlink(missing_ok=True)
            raise UploadError(422, "file", "the file is empty")
        return Upload(path, safe_filename(file.filename), team, size, sha)
    finally:
        await form.close()
