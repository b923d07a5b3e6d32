"""The installed marl-bgs-clients wheel imports and reports its version."""

from importlib.metadata import version

import marl_bgs_clients


def test_version_matches_metadata() -> None:
    assert marl_bgs_clients.__version__ == version("marl-bgs-clients")
