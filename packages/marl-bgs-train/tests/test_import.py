"""The installed marl-bgs-train wheel imports and reports its version."""

from importlib.metadata import version

import marl_bgs_train


def test_version_matches_metadata() -> None:
    assert marl_bgs_train.__version__ == version("marl-bgs-train")
