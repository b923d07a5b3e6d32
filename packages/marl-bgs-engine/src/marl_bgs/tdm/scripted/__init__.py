"""Scripted Team Deathmatch teams: TDM-Alpha, TDM-Beta, TDM-Gamma and the simple `rush` team.

    policy = marl_bgs.scripted_policy("tdm-beta")   # a team policy (core.team contract)

or, with the style's numbers as data (one compiled program for TDM-Alpha, -Beta and -Gamma):
`scripted_act(scripted_numbers("tdm-beta"), keys, memory, inputs)`, memory from `scripted_init`.

Styles and how they play: docs/opponents.md.
"""

from marl_bgs.tdm.scripted.policy import (
    SHARED,
    scripted_act,
    scripted_init,
    scripted_numbers,
    scripted_policy,
)
from marl_bgs.tdm.scripted.styles import STYLES

SCRIPTED = tuple(STYLES)

__all__ = [
    "SCRIPTED",
    "SHARED",
    "scripted_act",
    "scripted_init",
    "scripted_numbers",
    "scripted_policy",
]
