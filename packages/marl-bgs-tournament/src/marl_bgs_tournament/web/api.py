"""The JSON API: the season's files as checked JSON, and submissions (upload and status)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.web.store import SeasonStore
from marl_bgs_tournament.web.submissions import QueueFullError, Submissions
from marl_bgs_tournament.web.uploads import UploadError, receive

router = APIRouter(prefix="/api")


def _store(request: Request) -> SeasonStore:
    return request.app.state.store


def failure(status: int, message: str, field: str | None = None) -> JSONResponse:
    """An error answer: {"error": message} (and the form field at fault)."""
    body: dict[str, Any] = {"error": message}
    if field is not None:
        body["field"] = field
    return JSONResponse(body, status_code=status)


@router.get("/season")
def season(request: Request) -> dict[str, Any]:
    """season.json, checked."""
    return _store(request).season()


@router.get("/ratings")
def ratings(request: Request) -> list[dict[str, Any]]:
    """The leaderboard rows in rank order."""
    return _store(request).ratings()


@router.get("/matchups")
def matchups(request: Request) -> dict[str, Any]:
    """{"systems_a", "systems_b", "scores"} (null where no games)."""
    return _store(request).matchups()


@router.get("/entrants/{name:path}")
def entrant(request: Request, name: str) -> dict[str, Any]:
    """One System: rating, team, entry, record per opponent, measures, replays, problems."""
    return _store(request).entrant(name)


@router.get("/challengers")
def challengers(request: Request) -> dict[str, Any]:
    """{"challengers": [...decisions], "problems": [...]}."""
    found, problems = _store(request).challengers()
    return {"challengers": found, "problems": problems}


@router.get("/replays")
def replays(request: Request) -> list[dict[str, Any]]:
    """The index of recorded games."""
    return _store(request).replays()


@router.get("/replays/{game}")
def replay(request: Request, game: str) -> dict[str, Any]:
    """One recorded game as the viewer draws it."""
    return _store(request).replay(game)


@router.post("/submissions", status_code=202)
async def submit(request: Request) -> JSONResponse:
    """Upload a System file (multipart `file`, `team`): checked, stored, queued (202 with its
    status); 413 too large, 422 bad field or file, 429 queue full, 503 submissions closed."""
    subs: Submissions | None = request.app.state.submissions
    if subs is None:
        return failure(503, "submissions closed: this server takes no uploads")
    if subs.full():
        return failure(429, "the submission queue is full; try again later")
    try:
        upload = await receive(request, request.app.state.max_upload_bytes, subs.incoming())
    except UploadError as err:
        return failure(err.status, str(err), err.field)
    try:
        await run_in_threadpool(request.app.state.checker, upload.path)
        status = await run_in_threadpool(
            subs.accept, upload.path, upload.filename, upload.team, upload.size, upload.sha256
        )
    except TournamentError as err:
        return failure(422, str(err), "file")
    except QueueFullError:
        return failure(429, "the submission queue is full; try again later")
    except Exception as err:  # a checker's own bug: the upload is refused, the service goes on
        return failure(500, f"the file could not be checked ({type(err).__name__})", "file")
    finally:
        upload.path.unlink(missing_ok=True)
    return JSONResponse(status, status_code=202)


@router.get("/submissions/{sid}")
def submission(request: Request, sid: str) -> Any:
    """A submission's status: queued, running, done or failed (with the runner's message)."""
    subs: Submissions | None = request.app.state.submissions
    if subs is None:
        return failure(503, "submissions closed: this server takes no uploads")
    return subs.status(sid)
