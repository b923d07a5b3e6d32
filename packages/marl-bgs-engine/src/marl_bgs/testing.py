"""The conformance suite every mode, pool and adapter must pass (see `marl_bgs.core.conformance`).

from marl_bgs.testing import check_env
check_env(marl_bgs.make("tdm", map_id=47, num_envs=4), ticks=20)
"""

from marl_bgs.core.conformance import (
    ConformanceError,
    check_env,
    check_jaxmarl_adapter,
    check_pettingzoo_adapter,
    same_structure,
)

__all__ = [
    "ConformanceError",
    "check_env",
    "check_jaxmarl_adapter",
    "check_pettingzoo_adapter",
    "same_structure",
]
