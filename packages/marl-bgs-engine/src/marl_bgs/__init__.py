"""MARL-BattleGrounds engine: team-vs-team games in pure JAX, batched, JaxMARL-style.

import jax, marl_bgs
env = marl_bgs.make("tdm", map_id=0, num_envs=1024)
obs, state = env.reset(jax.random.key(0))
"""

from importlib.metadata import version as _version
from typing import Any, Literal, overload

from marl_bgs import tdm, two_bridge
from marl_bgs.core.env import BatchedEnv
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.kits import Layouts, ModeKit, PartRegistry, kit, load_entry_points, register_kit
from marl_bgs.core.mode import Mode, ModeSpec
from marl_bgs.core.opponent import OpponentEnv
from marl_bgs.core.pool import StartPool, concat_pools, make_pool
from marl_bgs.core.pytree import batch_states
from marl_bgs.core.registry import MODES, register
from marl_bgs.core.registry import make as _make
from marl_bgs.core.team import (
    Policy,
    TeamInputs,
    idle_policy,
    random_policy,
    restart_finished,
    team_inputs,
    team_rollout,
    team_step,
)
from marl_bgs.tdm import maps, scenarios
from marl_bgs.tdm.actions import ActionMasks
from marl_bgs.tdm.authoring import UnitSpec, author_state
from marl_bgs.tdm.facts import Facts
from marl_bgs.tdm.mode import AGENTS, TDMEnv, TeamDeathmatch
from marl_bgs.tdm.perception import refresh_sight_lines
from marl_bgs.tdm.scenarios import make_scenario
from marl_bgs.tdm.scripted import SCRIPTED, scripted_policy
from marl_bgs.tdm.state import GameState
from marl_bgs.tdm.views import AgentView
from marl_bgs.two_bridge import TwoBridgeEnv

__version__ = _version("marl-bgs-engine")


@overload
def make(mode: Literal["tdm", "tdm-v2"], **settings: Any) -> TDMEnv: ...
@overload
def make(mode: Literal["two-bridge", "two-bridge-v1"], **settings: Any) -> TwoBridgeEnv: ...
@overload
def make(mode: str, **settings: Any) -> BatchedEnv: ...
def make(mode: str, **settings: Any) -> BatchedEnv:
    """Build a mode's batched env by id or alias, e.g. `make("tdm", map_id=47, num_envs=1024)`
    or `make("two-bridge", variant="V2_Base")`; every setting is validated, errors name it."""
    return _make(mode, **settings)


load_entry_points()  # the modes of the entry-point group `marl_bgs.modes`, this engine's included
__all__ = [
    "AGENTS",
    "MODES",
    "SCRIPTED",
    "ActionMasks",
    "AgentView",
    "BatchedEnv",
    "ConfigError",
    "Facts",
    "GameState",
    "Layouts",
    "Mode",
    "ModeKit",
    "ModeSpec",
    "OpponentEnv",
    "PartRegistry",
    "Policy",
    "StartPool",
    "TDMEnv",
    "TeamDeathmatch",
    "TeamInputs",
    "TwoBridgeEnv",
    "UnitSpec",
    "__version__",
    "author_state",
    "batch_states",
    "concat_pools",
    "idle_policy",
    "kit",
    "make",
    "make_pool",
    "make_scenario",
    "maps",
    "random_policy",
    "refresh_sight_lines",
    "register",
    "register_kit",
    "restart_finished",
    "scenarios",
    "scripted_policy",
    "tdm",
    "team_inputs",
    "team_rollout",
    "team_step",
    "two_bridge",
]
