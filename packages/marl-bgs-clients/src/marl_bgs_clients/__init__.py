"""The clients of MARL-BattleGrounds: one pygame renderer (`render`, `scene`), the Replay Viewer
(`viewer`), the BattleClient for human play (`battle`, `session`), `marl-bgs-watch` (`watch`)
and the docs' pictures (`atlas`, `shots`). See docs/clients.md.
"""

from importlib.metadata import version as _version

__version__ = _version("marl-bgs-clients")
__all__ = ["__version__"]
