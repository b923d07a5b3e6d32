"""Team Deathmatch (`tdm-v2`): the rules, views, settings, authoring and maps of the 5 v 5 mode.

Read the rules in tick order from `transition.py`; each phase lives in its own module (`combat`,
`statuses`, `lifecycle`, with `perception` and `actions` for sight and legality), the class table in
`classes.py`, the settings in `config.py`, observations in `views.py`; the endgame scenarios in
`scenarios/`.
"""

from marl_bgs.tdm.mode import MODE_ID, TDMEnv, TeamDeathmatch, make_tdm

__all__ = ["MODE_ID", "TDMEnv", "TeamDeathmatch", "make_tdm"]
