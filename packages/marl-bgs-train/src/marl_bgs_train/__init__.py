"""Deep MARL baselines for MARL-BattleGrounds: self-play, opponent pools, curricula, shaping.

This package is a skeleton: its features land with their own issues.
"""

from importlib.metadata import version as _version

__version__ = _version("marl-bgs-train")
__all__ = ["__version__"]
