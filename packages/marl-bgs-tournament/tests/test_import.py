"""The installed marl-bgs-tournament wheel imports and reports its version."""

from importlib.metadata import version

import marl_bgs_tournament


def test_version_matches_metadata() -> None:
    assert marl_bgs_tournament.__version__ == version("marl-bgs-tournament")
