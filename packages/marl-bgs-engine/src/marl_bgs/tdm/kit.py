"""Team Deathmatch's engine kit (entry point `marl_bgs.modes`: tdm): maps as layouts."""

from marl_bgs.core.kits import Layouts, ModeKit
from marl_bgs.tdm.maps.registry import SPLITS, all_ids, load
from marl_bgs.tdm.mode import MODE_ID
from marl_bgs.tdm.scenarios.env import build_tdm


def _map_names() -> list[str]:
    ids = all_ids()
    if ids != list(range(len(ids))):
        raise RuntimeError(f"internal: shipped map ids are not 0..{len(ids) - 1}")
    return [load(i).name for i in ids]


KIT = ModeKit(
    id=MODE_ID,
    alias="tdm",
    build=build_tdm,
    layouts=Layouts(keyword="map_id", catalog=_map_names, splits=SPLITS),
    outcomes=("running", "team A wins", "team B wins", "draw"),
    results=("", "win", "loss", "draw"),
    controlled_teams=2,
    description="Team Deathmatch: 5 v 5, five classes, first to the winning score",
)
