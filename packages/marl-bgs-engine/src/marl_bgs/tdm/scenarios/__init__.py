"""The eight endgame scenarios: files, environments, replayed winning lines and the line search.

    import marl_bgs
    env = marl_bgs.make_scenario(6, num_envs=256)   # team A's env, TDM-Alpha folded in
    sc = marl_bgs.scenarios.load(6)                         # the validated data: units, lines, ...

docs/scenarios.md shows every scenario, its challenge, skills and winning line.
"""

from marl_bgs.tdm.scenarios.env import (
    MAX_TICKS,
    make_scenario,
    play,
    scenario_pool,
    scenario_two_team_env,
)
from marl_bgs.tdm.scenarios.files import (
    FORMAT,
    SKILLS,
    Action,
    Line,
    Scenario,
    ScenarioError,
    Variant,
    ids,
    load,
    load_file,
    parse,
    shipped,
)

__all__ = [
    "FORMAT",
    "MAX_TICKS",
    "SKILLS",
    "Action",
    "Line",
    "Scenario",
    "ScenarioError",
    "Variant",
    "ids",
    "load",
    "load_file",
    "make_scenario",
    "parse",
    "play",
    "scenario_pool",
    "scenario_two_team_env",
    "shipped",
]
