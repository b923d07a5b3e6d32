"""The recurring MARL-BattleGrounds tournament: schedule, seeds, rulebook checks, leaderboard.

This package is a skeleton: its features land with their own issues.
"""

from importlib.metadata import version as _version

__version__ = _version("marl-bgs-tournament")
__all__ = ["__version__"]
