"""The installed marl-bgs-llm wheel imports and reports its version; its command lines start
without JAX, pandas or pygame."""

from importlib.metadata import version

import marl_bgs_llm
from marl_bgs_eval.lazy import assert_light_startup


def test_version_matches_metadata() -> None:
    assert marl_bgs_llm.__version__ == version("marl-bgs-llm")


def test_command_lines_answer_help_without_heavy_imports(record_property) -> None:
    """`--help` and an unknown option, for every console script and each of its commands,
    import none of JAX, pandas, pygame (marl_bgs_eval.lazy.HEAVY): they answer at once."""
    slowest = assert_light_startup("marl-bgs-llm", at_least=4)
    record_property("slowest_seconds", slowest)


def test_the_command_line_keeps_the_toolkits_promises(tmp_path) -> None:
    """`--version`; a refusal is one escaped `error:` line, exit code 2 (marl_bgs_eval.console)."""
    del tmp_path
    from marl_bgs_eval.console import MARKUP, check_app
    from marl_bgs_llm.cli import app

    check_app(app, "marl-bgs-llm", ["prompt", "random", "idle", "--team", MARKUP])
