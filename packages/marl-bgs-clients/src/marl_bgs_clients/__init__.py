"""The BattleClient for human play and the analytical Replay Viewer of MARL-BattleGrounds.

This package is a skeleton: its features land with their own issues.
"""

from importlib.metadata import version as _version

__version__ = _version("marl-bgs-clients")
__all__ = ["__version__"]
