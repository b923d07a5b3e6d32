"""The JSON API: the season's files as checked JSON, and submissions (upload and status)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.teams import TeamError, claim
from marl_bgs_tournament.web.store import SeasonStore
from marl_bgs_tournament.web.submissions import (
    QueueFullError,
    StorageFullError,
    Submissions,
    public_message,
)
from marl_bgs_tournament.web.uploads import Upload, UploadError, receive

router = APIRouter(prefix="/api")


def _store(request: Request) -> SeasonStore:
    return request.app.state.store


def failure(
    status: int, message: str, field: str | None = None, close: bool = False
) -> JSONResponse:
    """An error answer: {"error": message} (and the form field at fault); `close` ends the
    connection after it (a body that was not read to its end)."""
    body: dict[str, Any] = {"error": message}
    if field is not None:
        body["field"] = field
    return JSONResponse(
        body, status_code=status, headers={"connection": "close"} if close else None
    )


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


@router.get("/studies/teamwork")
def teamwork(request: Request) -> list[dict[str, Any]] | None:
    """The teamwork screen's rows (null while the study has not been run)."""
    return _store(request).teamwork()


@router.get("/studies/zero-shot")
def zero_shot(request: Request) -> list[dict[str, Any]] | None:
    """The zero-shot study's rows (null while the study has not been run)."""
    return _store(request).zero_shot()


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


class FileRefusedError(Exception):
    """The checker refused the uploaded file (the message is fit to show)."""


def _enter(request: Request, subs: Submissions, upload: Upload) -> dict[str, Any]:
    """The team's identity (`teams.claim`), the file's checks, then the queue: the status, and
    a new team's token under `token` (withdrawn if the upload is refused after all)."""
    state = request.app.state
    entered = {e["team"] for e in state.store.season()["entrants"].values()}
    with claim(subs.season_dir, upload.team, upload.token, entered=entered) as issued:
        try:
            state.checker(upload.path)
        except TournamentError as err:
            raise FileRefusedError(public_message(err)) from None
        status = subs.accept(upload, upload.token or issued)
    return status if issued is None else {**status, "token": issued}


@router.post("/submissions", status_code=202)
async def submit(request: Request) -> JSONResponse:
    """Upload a System file (multipart `file`, `team`, and the team's `token` once it has one):
    checked, stored, queued (202 with its status; a new team's token, once); 408 a stalled body,
    413 too large, 422 bad field or file, 429 queue full, 503 submissions closed, 507 the
    submissions folder over its bound."""
    state = request.app.state
    subs: Submissions | None = state.submissions
    if subs is None:
        return failure(503, "submissions closed: this server takes no uploads")
    if subs.full():
        return failure(429, "the submission queue is full; try again later")
    try:
        await run_in_threadpool(subs.check_room)
        upload = await receive(request, state.max_upload_bytes, subs.incoming(),
                               state.read_timeout_s, state.body_timeout_s)  # fmt: skip
    except StorageFullError as err:
        return failure(507, str(err), close=True)
    except UploadError as err:
        return failure(err.status, str(err), err.field, close=True)
    try:
        status = await run_in_threadpool(_enter, request, subs, upload)
    except TeamError as err:
        return failure(422, str(err), err.field)
    except FileRefusedError as err:
        return failure(422, str(err), "file")
    except TournamentError as err:  # the season folder's own files (season.json, teams.json)
        return failure(503, public_message(err))
    except QueueFullError:
        return failure(429, "the submission queue is full; try again later")
    except StorageFullError as err:
        return failure(507, str(err))
    except Exception as err:  # a checker's own bug: the upload is refused, the service goes on
        return failure(500, f"the file could not be checked ({type(err).__name__})", "file")
    finally:
        upload.path.unlink(missing_ok=True)
    return JSONResponse(status, status_code=202, headers={"cache-control": "no-store"})


@router.get("/submissions/{sid}")
def submission(request: Request, sid: str) -> Any:
    """A submission's status: queued, running, done or failed (with the runner's message)."""
    subs: Submissions | None = request.app.state.submissions
    if subs is None:
        return failure(503, "submissions closed: this server takes no uploads")
    return subs.status(sid)
