"""The recurring MARL-BattleGrounds tournament: schedule and seeds, portable Systems, rulebook
checks, seasons with joint Elo and challengers, and a web leaderboard.

    from marl_bgs_tournament import export_system, load_system, run_season, challenge
    export_system(my_system, "mine.mbgs", team="lab", training={"maps": [0, 1], "scenarios": []})
    run_season(["tdm-alpha", "tdm-beta", "mine.mbgs"], "season0/")
    challenge("season0/", "next.mbgs")
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from marl_bgs_eval.lazy import export_lazily

if TYPE_CHECKING:  # the exports, each imported on first use (marl_bgs_eval.lazy)
    from marl_bgs_tournament.errors import TournamentError
    from marl_bgs_tournament.portable import export_system, load_system, read_manifest
    from marl_bgs_tournament.schedule import challenger_schedule, field_schedule
    from marl_bgs_tournament.season import Settings, challenge, run_season

__version__ = _version("marl-bgs-tournament")
__all__ = [
    "Settings",
    "TournamentError",
    "__version__",
    "challenge",
    "challenger_schedule",
    "export_system",
    "field_schedule",
    "load_system",
    "read_manifest",
    "run_season",
]

export_lazily(__name__)
