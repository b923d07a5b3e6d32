"""The clients of MARL-BattleGrounds: the shared canvas (`canvas`), the Replay Viewer (`viewer`)
that draws any mode through its registered drawing (`modes`), `marl-bgs-watch` (`watch`) and each
mode's own parts in its folder (`tdm/`: the renderer, the BattleClient for human play, the docs'
pictures; `two_bridge/`). Old paths of moved modules still import, with a warning (`MOVED`).
See docs/clients.md.
"""

import os
from importlib.metadata import version as _version

# pygame prints a banner when imported unless this is set; every pygame import of the clients
# comes after it, since any `marl_bgs_clients.*` import runs this file first.
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

from marl_bgs_eval.moved import install as _install

# Old paths of moved modules (old -> new): they still import, with a DeprecationWarning.
MOVED = {
    "marl_bgs_clients.atlas": "marl_bgs_clients.tdm.atlas",
    "marl_bgs_clients.battle": "marl_bgs_clients.tdm.battle",
    "marl_bgs_clients.session": "marl_bgs_clients.tdm.session",
    "marl_bgs_clients.shots": "marl_bgs_clients.tdm.shots",
    "marl_bgs_clients.watch": "marl_bgs_clients.tdm.watch",
}
_install(MOVED)
__version__ = _version("marl-bgs-clients")
__all__ = ["__version__"]
