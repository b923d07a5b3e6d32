"""Two-Bridge's training parts (entry point `marl_bgs_train.modes`: two-bridge): its game
section, the minimap encoder, Marine ids, checkpoint scoring and the paper's three baselines as
presets of the generic learners:

    marl-bgs-train maskppo --mode two-bridge --variant V1_Navigate
"""

from marl_bgs_train.two_bridge.parts import PARTS

__all__ = ["PARTS"]
