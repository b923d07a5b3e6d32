"""Two-Bridge's evaluation parts, registered under the entry-point group `marl_bgs_eval.modes`
(see `marl_bgs_eval.modes`). Its replays are single-team episode replays
(`marl_bgs_eval.episode_replays`), verified by replaying them through the engine."""

from marl_bgs_eval.episode_replays import episode_schema
from marl_bgs_eval.modes import EvalParts

PARTS = EvalParts(replay=episode_schema(legacy="marl-bgs-episode-replay-v1"))
