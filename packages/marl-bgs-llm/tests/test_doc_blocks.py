"""The docs' code blocks that marl-bgs-llm claims run as written, at the tiny sizes of
`marl_bgs.doc_blocks.TINY`, and every `marl-bgs-llm` command in the docs parses (docs/testing.md,
"Code blocks in the docs")."""

from __future__ import annotations

from marl_bgs.testing import doc_block_tests


def _llm(namespace: dict) -> None:
    assert namespace["team"].name == "my-planner"


CHECKS = {"docs/llm.md": _llm}

(
    test_page_runs,
    test_every_page_check_names_a_page_run_here,
    test_every_llm_command_in_the_docs_parses,
) = doc_block_tests(__file__, "marl-bgs-llm", CHECKS, min_commands=2)
