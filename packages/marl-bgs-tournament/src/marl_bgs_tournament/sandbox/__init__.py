"""Submitted programs run here: each job in a child process the service times and the kernel
bounds (`Limits`, the rulebook's `LIMITS`), so a program that hangs, allocates without end or
crashes is refused with its reason and the service goes on.

    table = sandbox.check_file("entrant.mbgs")          # the rulebook's checks, sandboxed
    played = sandbox.play_games(plan, sources, settings, root_seed, out=folder, replays=2)
"""

from marl_bgs_tournament.sandbox.api import Played, check_file, play_games
from marl_bgs_tournament.sandbox.limits import LIMITS, Limits
from marl_bgs_tournament.sandbox.run import RefusedError, run_job

__all__ = ["LIMITS", "Limits", "Played", "RefusedError", "check_file", "play_games", "run_job"]
