"""Evaluation for MARL-BattleGrounds: Systems, evaluate, metrics, replays, Elo with intervals.

This package is a skeleton: its features land with their own issues.
"""

from importlib.metadata import version as _version

__version__ = _version("marl-bgs-eval")
__all__ = ["__version__"]
