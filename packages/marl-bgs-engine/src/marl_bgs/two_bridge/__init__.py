"""Two-Bridge (`two-bridge-v1`): five Marines choose between reaching a beacon and destroying a
reactive enemy group across a cliff crossed by two bridges; nine variants (see docs/two-bridge.md).

    env = marl_bgs.make("two-bridge", variant="V2_Base", num_envs=1024)
"""

from marl_bgs.two_bridge.layout import OUTCOMES, VARIANTS
from marl_bgs.two_bridge.mode import AGENTS, MODE_ID, TwoBridge, TwoBridgeEnv, make_two_bridge
from marl_bgs.two_bridge.state import BridgeFacts, BridgeState
from marl_bgs.two_bridge.views import BridgeView

__all__ = [
    "AGENTS",
    "MODE_ID",
    "OUTCOMES",
    "VARIANTS",
    "BridgeFacts",
    "BridgeState",
    "BridgeView",
    "TwoBridge",
    "TwoBridgeEnv",
    "make_two_bridge",
]
