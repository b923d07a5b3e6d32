"""The docs' code blocks that marl-bgs-engine claims run as written, at the tiny sizes of
`marl_bgs.doc_blocks.TINY` (docs/testing.md, "Code blocks in the docs")."""

from __future__ import annotations

from pathlib import Path

import pytest

from marl_bgs import doc_blocks
from marl_bgs.testing import run_doc_blocks

ROOT = Path(__file__).resolve().parents[3]
PAGES = doc_blocks.claimed_by(ROOT, "marl-bgs-engine") if (ROOT / "docs").is_dir() else {}


def _api(namespace: dict) -> None:
    assert namespace["rewards"]["a_0"].shape == (3, 4)  # length=3 ticks of num_envs=4 games


def _maps(namespace: dict) -> None:
    assert namespace["spec"].name == "Two Pillars and a Wall"  # the page's JSON, saved and read


CHECKS = {"docs/api.md": _api, "docs/maps.md": _maps}


@pytest.mark.skipif(not PAGES, reason="docs/ is not beside this checkout")
@pytest.mark.parametrize("page", sorted(PAGES) or ["-"])
def test_page_runs(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace = run_doc_blocks(PAGES[page])
    CHECKS.get(page, lambda _: None)(namespace)


def test_every_page_check_names_a_page_run_here() -> None:
    if PAGES:
        assert set(CHECKS) <= set(PAGES)
