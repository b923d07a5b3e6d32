"""Two-Bridge's engine kit (entry point `marl_bgs.modes`: two-bridge): variants as layouts;
the mode plays the enemies itself, so Systems control one team."""

from marl_bgs.core.kits import Layouts, ModeKit
from marl_bgs.two_bridge.layout import OUTCOMES, VARIANTS
from marl_bgs.two_bridge.mode import MODE_ID, make_two_bridge

KIT = ModeKit(
    id=MODE_ID,
    alias="two-bridge",
    build=make_two_bridge,
    layouts=Layouts(
        keyword="variant",
        catalog=lambda: VARIANTS,
        splits={
            units: tuple(i for i, v in enumerate(VARIANTS) if v.startswith(units))
            for units in ("V1", "V2", "V3")
        },
        group=lambda name: name.split("_")[0],
    ),
    outcomes=OUTCOMES,
    results=("", "win", "win", "loss", "loss"),
    controlled_teams=1,
    description="Two-Bridge: five Marines, a beacon and an enemy group across two bridges",
)
