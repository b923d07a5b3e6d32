"""The docs' code blocks that marl-bgs-clients claims run as written, at the tiny sizes of
`marl_bgs.doc_blocks.TINY`, and every `marl-bgs-clients` and `marl-bgs-watch` command in the
docs parses (docs/testing.md, "Code blocks in the docs")."""

from __future__ import annotations

from pathlib import Path

import pytest

from marl_bgs import doc_blocks
from marl_bgs.testing import doc_command_problems, run_doc_blocks

ROOT = Path(__file__).resolve().parents[3]
PAGES = doc_blocks.claimed_by(ROOT, "marl-bgs-clients") if (ROOT / "docs").is_dir() else {}


def _clients(namespace: dict) -> None:
    assert namespace["replay"].ticks == 40  # the person's game, played to the tick limit


CHECKS = {"docs/clients.md": _clients}


@pytest.mark.skipif(not PAGES, reason="docs/ is not beside this checkout")
@pytest.mark.parametrize("page", sorted(PAGES) or ["-"])
def test_page_runs(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace = run_doc_blocks(PAGES[page])
    CHECKS.get(page, lambda _: None)(namespace)


def test_every_page_check_names_a_page_run_here() -> None:
    if PAGES:
        assert set(CHECKS) <= set(PAGES)


@pytest.mark.skipif(not PAGES, reason="docs/ is not beside this checkout")
def test_every_clients_command_in_the_docs_parses() -> None:
    parsed, failed = doc_command_problems(ROOT, "marl-bgs-clients")
    assert not failed, "\n".join(failed)
    assert parsed >= 8
