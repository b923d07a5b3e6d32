"""The tournament's web leaderboard: pages, JSON API, replay viewer and submissions.

    app = create_app("season/", checker=check, runner=run)   # a FastAPI app
    serve("season/", port=8000)                              # uvicorn on 127.0.0.1 only

It reads the season folder the season runner writes (see `store`) and writes only under its
`submissions/` folder and, for a new team's token, `teams.json` (see `marl_bgs_tournament.teams`).
"""

from marl_bgs_tournament.web.app import create_app
from marl_bgs_tournament.web.files import SeasonDataError
from marl_bgs_tournament.web.serve import check_host, serve

__all__ = ["SeasonDataError", "check_host", "create_app", "serve"]
