"""Team Deathmatch's evaluation parts, registered under the entry-point group
`marl_bgs_eval.modes` (see `marl_bgs_eval.modes`)."""

from marl_bgs_eval.modes import EvalParts
from marl_bgs_eval.tdm.replay import REPLAY

PARTS = EvalParts(replay=REPLAY)
