"""The installed marl-bgs-train wheel imports and reports its version; its command lines start
without JAX, pandas or pygame."""

from importlib.metadata import version

import marl_bgs_train
from marl_bgs_eval.lazy import assert_light_startup


def test_version_matches_metadata() -> None:
    assert marl_bgs_train.__version__ == version("marl-bgs-train")


def test_command_lines_answer_help_without_heavy_imports(record_property) -> None:
    """`--help` and an unknown option, for every console script and each of its commands,
    import none of JAX, pandas, pygame (marl_bgs_eval.lazy.HEAVY): they answer at once."""
    slowest = assert_light_startup("marl-bgs-train", at_least=22)
    record_property("slowest_seconds", slowest)


def test_the_command_line_has_one_command_per_preset() -> None:
    from marl_bgs_train.cli import PRESET_NAMES
    from marl_bgs_train.config import LEARNERS, presets
    from marl_bgs_train.modes import PARTS

    every_mode = {name for mode in PARTS.modes() for name in presets(mode)}
    assert tuple(LEARNERS) == PRESET_NAMES
    assert set(LEARNERS) == every_mode


def test_the_command_line_keeps_the_toolkits_promises(tmp_path) -> None:
    """`--version`; a refusal is one escaped `error:` line, exit code 2 (marl_bgs_eval.console)."""
    from marl_bgs_eval.console import MARKUP, check_app
    from marl_bgs_train.cli import app

    check_app(app, "marl-bgs-train", ["ippo-rnn", "--out", str(tmp_path), "--set", f"{MARKUP}=1"])
