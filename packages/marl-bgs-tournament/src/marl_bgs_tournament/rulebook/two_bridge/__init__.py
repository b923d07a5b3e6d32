"""Two-Bridge's rulebook parts (`marl_bgs_tournament.modes`): no variant is held out from
training (all are played), a game ends as soon as the Marines reach the beacon or one side is
destroyed (so `full_games` lets games end early), and the rulebook adds no check of its own. A
season's round robin needs a two-team mode, so Two-Bridge Systems are exported, loaded and
checked, but play no seasons."""

from marl_bgs_tournament.modes import RulebookParts

PARTS = RulebookParts()

__all__ = ["PARTS"]
