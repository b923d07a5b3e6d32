"""Team Deathmatch's training parts (entry point `marl_bgs_train.modes`: tdm): its game
settings, reward, action heads, curricula and the six baselines' presets."""

from marl_bgs_train.tdm.parts import PARTS

__all__ = ["PARTS"]
