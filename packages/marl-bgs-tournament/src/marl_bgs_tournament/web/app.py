"""`create_app`: the leaderboard service of one season folder (pages, JSON API, submissions)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.web import api, pages
from marl_bgs_tournament.web.files import SeasonDataError
from marl_bgs_tournament.web.render import STATIC
from marl_bgs_tournament.web.store import SeasonStore, UnknownNameError
from marl_bgs_tournament.web.submissions import Checker, Retention, Runner, Submissions
from marl_bgs_tournament.web.uploads import BODY_TIMEOUT_S, READ_TIMEOUT_S

DEFAULT_MAX_UPLOAD_BYTES = 32 << 20
DEFAULT_MAX_QUEUE = 8
DEFAULT_MAX_SUBMISSIONS_BYTES = 512 << 20  # the queue's uploads (8 x 32 MiB) twice over
DEFAULT_KEEP_SUBMISSIONS = 500  # finished submissions' statuses kept
DEFAULT_KEEP_DAYS = 30.0
SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; object-src 'none'; "
     b"base-uri 'none'; frame-ancestors 'none'; form-action 'self'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]  # fmt: skip


class SecurityHeaders:
    """Adds `SECURITY_HEADERS` to every response (pages load nothing from elsewhere)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _positive(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TournamentError(f"{field}: expected a positive integer, got {value!r}")
    return value


def _seconds(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e9:
        raise TournamentError(f"{field}: expected a positive number, got {value!r}")
    return float(value)


def _answer(request: Request, status: int, heading: str, message: str) -> Response:
    """An error as JSON under /api, else as the error page."""
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=status)
    return pages.problem_page(request, status, heading, message)


def _handlers(app: FastAPI) -> None:
    @app.exception_handler(SeasonDataError)
    async def bad_data(request: Request, err: Exception) -> Response:
        return _answer(request, 503, "Season data unavailable", str(err))

    @app.exception_handler(UnknownNameError)
    async def not_found(request: Request, err: Exception) -> Response:
        return _answer(request, 404, "Not found", str(err))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, err: Exception) -> Response:
        assert isinstance(err, HTTPException)
        said = "no such page" if err.status_code == 404 else str(err.detail)
        return _answer(request, err.status_code, f"Error {err.status_code}", said)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, err: Exception) -> Response:
        return _answer(request, 422, "Bad request", "the request's parameters are not valid")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, err: Exception) -> Response:
        return _answer(request, 500, "Server error", f"unexpected {type(err).__name__}")


def create_app(
    season_dir: str | Path,
    *,
    checker: Checker | None = None,
    runner: Runner | None = None,
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES,
    max_queue: int = DEFAULT_MAX_QUEUE,
    read_timeout_s: float = READ_TIMEOUT_S,
    body_timeout_s: float = BODY_TIMEOUT_S,
    max_submissions_bytes: int = DEFAULT_MAX_SUBMISSIONS_BYTES,
    keep_submissions: int = DEFAULT_KEEP_SUBMISSIONS,
    keep_days: float = DEFAULT_KEEP_DAYS,
) -> FastAPI:
    """The leaderboard service of season folder `season_dir` (read only, but for
    `submissions/` and the team registry). Uploads are taken only with both a `checker(path)`
    (raises TournamentError for a file it refuses) and a `runner(season_dir, path, team, token)`
    (plays a submission's games and rewrites the season's files); else POST /api/submissions
    answers 503. At most `max_upload_bytes` per file, `max_queue` submissions waiting at once,
    a body silent for `read_timeout_s` or unfinished after `body_timeout_s` refused (408); the
    submissions folder takes no upload while over `max_submissions_bytes` (507) and keeps the
    statuses of the newest `keep_submissions` finished submissions of the last `keep_days`."""
    root = Path(season_dir)
    if not root.is_dir():
        raise TournamentError(f"season_dir: {str(root)!r} is not a folder")
    max_upload_bytes = _positive(max_upload_bytes, "max_upload_bytes")
    max_queue = _positive(max_queue, "max_queue")
    retention = Retention(_positive(max_submissions_bytes, "max_submissions_bytes"),
                          _positive(keep_submissions, "keep_submissions"),
                          _seconds(keep_days, "keep_days"))  # fmt: skip
    timeouts = (
        _seconds(read_timeout_s, "read_timeout_s"),
        _seconds(body_timeout_s, "body_timeout_s"),
    )
    for value, field in ((checker, "checker"), (runner, "runner")):
        if value is not None and not callable(value):
            raise TournamentError(f"{field}: expected a callable or None")
    store = SeasonStore(root)
    subs = Submissions(store.root, runner, max_queue, retention) if checker and runner else None

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if subs is not None:
            subs.recover()
            subs.start()
        yield
        if subs is not None:
            subs.stop()

    app = FastAPI(
        title="MARL-BattleGrounds tournament", lifespan=lifespan,
        docs_url=None, redoc_url=None, openapi_url=None,  # their pages load outside scripts
    )  # fmt: skip
    app.state.store = store
    app.state.submissions = subs
    app.state.checker = checker
    app.state.max_upload_bytes = max_upload_bytes
    app.state.read_timeout_s, app.state.body_timeout_s = timeouts
    app.add_middleware(GZipMiddleware, minimum_size=4096)
    app.add_middleware(SecurityHeaders)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)
    _handlers(app)
    return app
