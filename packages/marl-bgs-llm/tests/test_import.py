"""The installed marl-bgs-llm wheel imports and reports its version."""

from importlib.metadata import version

import marl_bgs_llm


def test_version_matches_metadata() -> None:
    assert marl_bgs_llm.__version__ == version("marl-bgs-llm")
