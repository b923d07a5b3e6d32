"""The map registry: shipped maps by id or name, splits, user map files, checks and statistics."""

from marl_bgs.tdm.maps.checks import (
    MapStats,
    check_playable,
    map_stats,
)
from marl_bgs.tdm.maps.registry import (
    SPLITS,
    all_ids,
    load,
    load_file,
    parse,
    split,
)
from marl_bgs.tdm.maps.spec import CUSTOM_MAP_ID, MapError, MapSpec
from marl_bgs.tdm.maps.symmetry import mirror_mismatches

__all__ = [
    "CUSTOM_MAP_ID",
    "SPLITS",
    "MapError",
    "MapSpec",
    "MapStats",
    "all_ids",
    "check_playable",
    "load",
    "load_file",
    "map_stats",
    "mirror_mismatches",
    "parse",
    "split",
]
