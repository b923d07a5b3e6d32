"""The installed marl-bgs-clients wheel imports and reports its version; its command lines start
without JAX, pandas or pygame."""

import os
import subprocess
import sys
from importlib.metadata import version

import marl_bgs_clients
from marl_bgs_eval.lazy import assert_light_startup


def test_version_matches_metadata() -> None:
    assert marl_bgs_clients.__version__ == version("marl-bgs-clients")


def test_command_lines_answer_help_without_heavy_imports(record_property) -> None:
    """`--help` and an unknown option, for every console script and each of its commands,
    import none of JAX, pandas, pygame (marl_bgs_eval.lazy.HEAVY): they answer at once."""
    slowest = assert_light_startup("marl-bgs-clients", at_least=14)
    record_property("slowest_seconds", slowest)


def test_pygame_prints_no_banner() -> None:
    """Importing the renderer (and with it pygame) prints nothing, in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "PYGAME_HIDE_SUPPORT_PROMPT"}
    code = "import marl_bgs_clients, pygame"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True, timeout=120)  # fmt: skip
    assert done.stdout == ""


def test_both_command_lines_keep_the_toolkits_promises(tmp_path) -> None:
    """`--version`; a refusal is one escaped `error:` line, exit code 2 (marl_bgs_eval.console)."""
    from marl_bgs_clients.cli import app
    from marl_bgs_clients.tdm.watch import app as watch_app
    from marl_bgs_eval.console import MARKUP, check_app

    check_app(app, "marl-bgs-clients", ["view", str(tmp_path / f"{MARKUP}.replay.zip")])
    check_app(watch_app, "marl-bgs-clients", ["a", "b", "--gif", str(tmp_path / f"{MARKUP}.png")])
