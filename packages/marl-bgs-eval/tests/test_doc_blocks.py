"""The docs' code blocks that marl-bgs-eval claims run as written, at the tiny sizes of
`marl_bgs.doc_blocks.TINY`; every `marl-bgs-eval` command in the docs parses; the demo's closing
hint names a command that works (docs/testing.md, "Code blocks in the docs")."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from marl_bgs import doc_blocks
from marl_bgs.tdm import demo
from marl_bgs.testing import doc_block_tests, parse_console_command


def _two_bridge(namespace: dict) -> None:
    assert Path("game-3.episode.zip").is_file()
    assert len(namespace["rows"]) == 2


def _readme(namespace: dict) -> None:
    assert namespace["table"]["variant"].nunique() == 9  # every Two-Bridge variant


CHECKS = {"docs/two-bridge.md": _two_bridge, "README.md": _readme}

(
    test_page_runs,
    test_every_page_check_names_a_page_run_here,
    test_every_eval_command_in_the_docs_parses,
) = doc_block_tests(__file__, "marl-bgs-eval", CHECKS, min_commands=10)


def test_the_demo_hint_runs_this_environments_marl_bgs_eval() -> None:
    script = demo.eval_script()
    assert script is not None
    assert script.name == "marl-bgs-eval"
    hint = demo.next_steps()
    command = hint.split("`")[1]
    argv = shlex.split(command)
    assert Path(argv[0]).resolve() == script.resolve()
    assert tuple(argv[1:]) == demo.EVAL_PLAY
    parse_console_command(doc_blocks.Command(("marl-bgs-eval", *argv[1:])))


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("marl-bgs-eval play a b --bogus 3", "No such option: --bogus"),
        ("marl-bgs-eval plya a b", "No such command 'plya'"),
        ("marl-bgs-eval rate games.parquet --bootstrap many", "valid integer"),
        ("marl-bgs-eval play", "Missing"),
    ],
)
def test_a_command_the_cli_would_refuse_does_not_parse(line: str, error: str) -> None:
    (command,) = doc_blocks.commands(line)
    with pytest.raises(Exception, match=error):
        parse_console_command(command)
