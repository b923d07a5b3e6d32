"""docs/clients.md: the pictures it shows exist (its code blocks run in test_doc_blocks.py)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "clients.md"


def test_the_pictures_it_shows_exist() -> None:
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", DOC.read_text(encoding="utf-8"))
    assert len(pictures) == 3
    for picture in pictures:
        assert (DOC.parent / picture).is_file(), picture
