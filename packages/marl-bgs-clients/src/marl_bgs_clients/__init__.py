"""The clients of MARL-BattleGrounds: one pygame renderer (`render`, `scene`), the Replay Viewer
(`viewer`), the BattleClient for human play (`battle`, `session`), `marl-bgs-watch` (`watch`)
and the docs' pictures (`atlas`, `shots`). See docs/clients.md.
"""

import os
from importlib.metadata import version as _version

# pygame prints a banner when imported unless this is set; every pygame import of the clients
# comes after it, since any `marl_bgs_clients.*` import runs this file first.
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

__version__ = _version("marl-bgs-clients")
__all__ = ["__version__"]
