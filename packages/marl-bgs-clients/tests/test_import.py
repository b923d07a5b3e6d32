"""The installed marl-bgs-clients wheel imports and reports its version; its command lines start
without JAX, pandas or pygame."""

import os
import subprocess
import sys
from importlib.metadata import version

import marl_bgs_clients
from marl_bgs_eval.lazy import startup_imports


def test_version_matches_metadata() -> None:
    assert marl_bgs_clients.__version__ == version("marl-bgs-clients")


def test_command_lines_answer_help_without_heavy_imports(record_property) -> None:
    """`--help` and an unknown option, for every console script and each of its commands,
    import none of JAX, pandas, pygame (marl_bgs_eval.lazy.HEAVY): they answer at once."""
    rows = startup_imports("marl-bgs-clients")
    assert len(rows) >= 14
    for line, code, _, heavy in rows:
        assert heavy == [], f"{line} imported {heavy}"
        assert code == (0 if line.endswith("--help") else 2), line
    record_property("slowest_seconds", round(max(seconds for *_, seconds, _ in rows), 3))


def test_pygame_prints_no_banner() -> None:
    """Importing the renderer (and with it pygame) prints nothing, in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "PYGAME_HIDE_SUPPORT_PROMPT"}
    code = "import marl_bgs_clients, pygame"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True, timeout=120)  # fmt: skip
    assert done.stdout == ""
