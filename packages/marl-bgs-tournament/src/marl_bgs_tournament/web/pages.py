"""The HTML pages: leaderboard, matchups, one entrant, challengers, replays, the replay
viewer and the studies (the teamwork screen, the zero-shot study). A page whose main file is
missing or bad answers 503 with the problem; a side part that fails (the season facts above the
table) is shown as a note."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from marl_bgs_eval.distinct import REPEATS_NOTE, ZERO_WIDTH_NOTE
from marl_bgs_eval.resampling import SCHEMES
from marl_bgs_eval.results import DEFAULT_MODE  # the mode of files written before modes
from marl_bgs_tournament.sandbox.limits import LIMITS
from marl_bgs_tournament.teams import HOW_TO_PROVE
from marl_bgs_tournament.web import heatmap
from marl_bgs_tournament.web.files import SeasonDataError
from marl_bgs_tournament.web.modes import PARTS as WEB_PARTS
from marl_bgs_tournament.web.modes import WebParts
from marl_bgs_tournament.web.render import templates
from marl_bgs_tournament.web.store import SeasonStore

router = APIRouter()
TEMPLATES = templates()


def _web_parts(request: Request) -> WebParts:
    """The browser-viewer parts of the season's mode (a season.json written before modes: Team
    Deathmatch's)."""
    return WEB_PARTS.get(str(_store(request).season().get("mode") or DEFAULT_MODE))


def _store(request: Request) -> SeasonStore:
    return request.app.state.store


def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """Template `name` rendered with `context`."""
    return TEMPLATES.TemplateResponse(request, name, context, status_code=status)


def problem_page(request: Request, status: int, heading: str, message: str) -> HTMLResponse:
    """The error page."""
    return page(request, "error.html", status, heading=heading, message=message)


@router.get("/", response_class=HTMLResponse)
def leaderboard(request: Request) -> HTMLResponse:
    """The leaderboard table with the season's facts above it, and under it how to read it and
    how a team enters (proves who it is; the sandbox's limits; the upload's bound when uploads
    are open)."""
    store = _store(request)
    ratings = store.ratings()
    season, problems = None, []
    try:
        season = store.season()
    except SeasonDataError as err:
        problems.append(str(err))
    scheme = (season or {}).get("bootstrap_scheme") or "pairs"  # older seasons: the default
    notes = {"scheme": SCHEMES[scheme] if season else None, "zero_width": ZERO_WIDTH_NOTE,
             "repeats": REPEATS_NOTE, "identity": HOW_TO_PROVE}  # fmt: skip
    state = request.app.state
    uploads = None if state.submissions is None else {"max_mib": state.max_upload_bytes / 2**20}
    return page(request, "leaderboard.html", ratings=ratings, season=season, problems=problems,
                notes=notes, uploads=uploads, limits=LIMITS.rows())  # fmt: skip


@router.get("/matchups", response_class=HTMLResponse)
def matchups(request: Request) -> HTMLResponse:
    """The matchup matrix as a heat map."""
    return page(request, "matchups.html", matchups=_store(request).matchups())


@router.get("/entrants/{name:path}", response_class=HTMLResponse)
def entrant(request: Request, name: str) -> HTMLResponse:
    """One System: rating, record per opponent, measures and replays."""
    e = _store(request).entrant(name)
    return page(request, "entrant.html", e=e, problems=e["problems"])


@router.get("/challengers", response_class=HTMLResponse)
def challengers(request: Request) -> HTMLResponse:
    """Every admission decision."""
    found, problems = _store(request).challengers()
    return page(request, "challengers.html", challengers=found, problems=problems)


@router.get("/replays", response_class=HTMLResponse)
def replays(request: Request) -> HTMLResponse:
    """The recorded games."""
    return page(request, "replays.html", replays=_store(request).replays())


@router.get("/replays/{game}", response_class=HTMLResponse)
def replay(request: Request, game: str) -> HTMLResponse:
    """The canvas viewer of one recorded game (its data comes from /api/replays/{game})."""
    entry = _store(request).replay_entry(game)
    return page(request, "replay.html", g=entry, key=_web_parts(request).key())


@router.get("/studies/teamwork", response_class=HTMLResponse)
def teamwork(request: Request) -> HTMLResponse:
    """The teamwork screen: every team measure against the field's Elo, and its chart."""
    return page(request, "teamwork.html", rows=_store(request).teamwork())


@router.get("/studies/teamwork.png")
def teamwork_chart(request: Request) -> Response:
    """The teamwork screen's chart."""
    return Response(_store(request).teamwork_chart(), media_type="image/png")


@router.get("/studies/zero-shot", response_class=HTMLResponse)
def zero_shot(request: Request) -> HTMLResponse:
    """The zero-shot study: each stranger's cost in each class of the top learner's team."""
    return page(request, "zero_shot.html", rows=_store(request).zero_shot())


@router.get("/studies/zero-shot.png")
def zero_shot_chart(request: Request) -> Response:
    """The zero-shot study's chart."""
    return Response(_store(request).zero_shot_chart(), media_type="image/png")


@router.get("/key.css")
def key_css(request: Request) -> Response:
    """The replay key's sample colours (the season's mode's, `WebParts.key_css`)."""
    return Response(_web_parts(request).key_css(), media_type="text/css")


@router.get("/heat.css")
def heat_css() -> Response:
    """The heat map's cell colours (made from `heatmap.PALETTE`)."""
    return Response(heatmap.css(), media_type="text/css")
