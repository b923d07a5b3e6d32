"""Two-Bridge's evaluation parts (entry point `marl_bgs_eval.modes`: two-bridge) and its
outcome tables per variant (see `variants`)."""

from marl_bgs_eval.two_bridge.parts import PARTS, BridgeParts
from marl_bgs_eval.two_bridge.variants import (
    WINS,
    evaluate_variants,
    outcome_table,
    record_rows,
)

__all__ = ["PARTS", "WINS", "BridgeParts", "evaluate_variants", "outcome_table", "record_rows"]
