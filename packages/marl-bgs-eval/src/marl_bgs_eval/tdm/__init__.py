"""Team Deathmatch's evaluation parts (entry point `marl_bgs_eval.modes`: tdm): maps, rosters,
points and the who-did-what-to-whom metrics."""

from marl_bgs_eval.tdm.parts import PARTS, TDMParts

__all__ = ["PARTS", "TDMParts"]
