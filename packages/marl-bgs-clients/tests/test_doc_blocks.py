"""The docs' code blocks that marl-bgs-clients claims run as written, at the tiny sizes of
`marl_bgs.doc_blocks.TINY`, and every `marl-bgs-clients` and `marl-bgs-watch` command in the
docs parses (docs/testing.md, "Code blocks in the docs")."""

from __future__ import annotations

from marl_bgs.testing import doc_block_tests


def _clients(namespace: dict) -> None:
    assert namespace["replay"].ticks == 40  # the person's game, played to the tick limit


CHECKS = {"docs/clients.md": _clients}

(
    test_page_runs,
    test_every_page_check_names_a_page_run_here,
    test_every_clients_command_in_the_docs_parses,
) = doc_block_tests(__file__, "marl-bgs-clients", CHECKS, min_commands=8)
