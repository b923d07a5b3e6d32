"""Team Deathmatch's rulebook parts (`marl_bgs_tournament.modes`): its test maps 47-51 are held
out from training and played by seasons and the rulebook, games last their tick limit under the
highest winning score, and its own check is the information limits' perturbation test."""

from marl_bgs.tdm.config import LIMITS
from marl_bgs_tournament.modes import RulebookParts
from marl_bgs_tournament.rulebook.tdm.information import (
    PERTURBED,
    hidden_enemies,
    information_limits,
    perturb_hidden,
)

PARTS = RulebookParts(
    test_layouts="test",
    full_length={"winning_score": LIMITS["winning_score"][1]},
    checks={"information_limits": information_limits},
)

__all__ = ["PARTS", "PERTURBED", "hidden_enemies", "information_limits", "perturb_hidden"]
