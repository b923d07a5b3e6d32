"""The installed marl-bgs-eval wheel imports and reports its version."""

from importlib.metadata import version

import marl_bgs_eval


def test_version_matches_metadata() -> None:
    assert marl_bgs_eval.__version__ == version("marl-bgs-eval")
