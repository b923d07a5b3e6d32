"""MARL-BattleGrounds engine: Team Deathmatch in pure JAX, batched, JaxMARL-style.

import jax, marl_bgs
env = marl_bgs.make("tdm", map_id=0, num_envs=1024)
obs, state = env.reset(jax.random.key(0))
"""

from importlib.metadata import version as _version

from marl_bgs import maps
from marl_bgs.actions import ActionMasks
from marl_bgs.authoring import UnitSpec, author_state
from marl_bgs.config import ConfigError
from marl_bgs.env import AGENTS, TeamDeathmatch, batch_states
from marl_bgs.facts import Facts
from marl_bgs.perception import refresh_sight_lines
from marl_bgs.registry import MODES, make
from marl_bgs.state import GameState
from marl_bgs.views import AgentView

__version__ = _version("marl-bgs-engine")
__all__ = [
    "AGENTS",
    "MODES",
    "ActionMasks",
    "AgentView",
    "ConfigError",
    "Facts",
    "GameState",
    "TeamDeathmatch",
    "UnitSpec",
    "__version__",
    "author_state",
    "batch_states",
    "make",
    "maps",
    "refresh_sight_lines",
]
