"""The installed marl-bgs-tournament wheel imports and reports its version; its command lines start
without JAX, pandas or pygame."""

from importlib.metadata import version

import marl_bgs_tournament
from marl_bgs_eval.lazy import assert_light_startup


def test_version_matches_metadata() -> None:
    assert marl_bgs_tournament.__version__ == version("marl-bgs-tournament")


def test_command_lines_answer_help_without_heavy_imports(record_property) -> None:
    """`--help` and an unknown option, for every console script and each of its commands,
    import none of JAX, pandas, pygame (marl_bgs_eval.lazy.HEAVY): they answer at once."""
    slowest = assert_light_startup("marl-bgs-tournament", at_least=14)
    record_property("slowest_seconds", slowest)
