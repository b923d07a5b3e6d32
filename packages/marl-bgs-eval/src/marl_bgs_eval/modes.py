"""Evaluation's per-mode parts, by versioned mode id: one `EvalParts` per mode, registered
through the entry-point group `marl_bgs_eval.modes` (entry name: the mode's id or alias; value:
"module:PARTS") or with `PARTS.register(mode, parts)`. Generic code asks `PARTS.get(mode)` and
never imports a mode by name.

    [project.entry-points."marl_bgs_eval.modes"]
    duel = "my_duel.eval:PARTS"
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from marl_bgs.core.kits import PartRegistry

if TYPE_CHECKING:
    from marl_bgs_eval.replay_files import ReplaySchema

GROUP = "marl_bgs_eval.modes"


@dataclass(frozen=True, eq=False)
class EvalParts:
    """What evaluation needs of a mode. `replay`: its replay files' header fields, tick schema
    and checks (`marl_bgs_eval.replay_files`; None: the mode's games cannot be recorded)."""

    replay: ReplaySchema | None = None


PARTS: PartRegistry[EvalParts] = PartRegistry(GROUP, "evaluation parts")
