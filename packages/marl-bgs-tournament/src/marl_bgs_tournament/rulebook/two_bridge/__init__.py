"""Two-Bridge's tournament parts (`marl_bgs_tournament.modes`): no variant is held out from
training, games end when the beacon is reached or a side is down, and the rulebook adds no check
of its own. A season's round robin needs a two-team mode, so Two-Bridge Systems are exported,
loaded and checked, but play no seasons."""

from marl_bgs_tournament.modes import TournamentParts

PARTS = TournamentParts()

__all__ = ["PARTS"]
