"""Scripted Team Deathmatch teams: TDM-Alpha, TDM-Beta, TDM-Gamma and the simple `rush` team.

    policy = marl_bgs.scripted_policy("tdm-beta")   # a team policy (core.team contract)

Styles and how they play: docs/opponents.md.
"""

from marl_bgs.tdm.scripted.policy import scripted_policy
from marl_bgs.tdm.scripted.styles import STYLES

SCRIPTED = tuple(STYLES)

__all__ = ["SCRIPTED", "scripted_policy"]
