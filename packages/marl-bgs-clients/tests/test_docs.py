"""docs/clients.md: its Python example runs as written, and its pictures exist."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "clients.md"


def test_the_python_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert blocks
    for block in blocks:
        space: dict = {}
        exec(compile(block, str(DOC), "exec"), space)
        assert space["replay"].ticks == 40


def test_the_pictures_it_shows_exist() -> None:
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", DOC.read_text(encoding="utf-8"))
    assert len(pictures) == 3
    for picture in pictures:
        assert (DOC.parent / picture).is_file(), picture
