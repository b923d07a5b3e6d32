"""`serve`: run the leaderboard service with uvicorn, on a loopback address only."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import uvicorn

from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.web.app import create_app

LOCAL_NAMES = ("localhost",)


def check_host(host: str) -> str:
    """`host` if it is a loopback address (127.0.0.0/8, ::1, localhost), else TournamentError:
    the service has no login, so it is never offered to other machines."""
    if isinstance(host, str) and host.strip().lower() in LOCAL_NAMES:
        return host
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise TournamentError(
            f"host: {host!r} is not a loopback address; the leaderboard serves only this "
            "machine (127.0.0.1, ::1 or localhost)"
        )
    return host


def serve(
    season_dir: str | Path, host: str = "127.0.0.1", port: int = 8000, **options: Any
) -> None:
    """Serve season folder `season_dir` at http://host:port/ until stopped. `options` go to
    `create_app` (checker, runner, max_upload_bytes, max_queue)."""
    check_host(host)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise TournamentError(f"port: expected an integer in [0, 65535], got {port!r}")
    uvicorn.run(create_app(season_dir, **options), host=host, port=port, log_level="info")
