"""docs/architecture.md names the modules that exist (the docs' code blocks run in
test_doc_blocks.py)."""

import re
from pathlib import Path

import pytest

ARCH_DOC = Path(__file__).resolve().parents[3] / "docs" / "architecture.md"


@pytest.mark.skipif(not ARCH_DOC.exists(), reason="docs/ is not beside this checkout")
def test_architecture_diagram_names_real_modules() -> None:
    """Every module the architecture diagram names exists, and every module of the engine's core
    and of each mode folder appears in it, so the diagram stays true."""
    import marl_bgs

    root = Path(marl_bgs.__file__).parent
    diagrams = [  # the engine's map (the other packages' maps name their own folders)
        d
        for d in re.findall(r"```text\n(.*?)```", ARCH_DOC.read_text(), re.S)
        if "packages/marl-bgs-engine/src/marl_bgs/" in d
    ]
    assert diagrams, "docs/architecture.md has no ```text diagram of the engine"
    named = set(re.findall(r"\b((?:[a-z_]+/)+[a-z_]+\.py)\b", "\n".join(diagrams)))
    assert named
    missing = sorted(p for p in named if not (root / p).exists())
    assert not missing, f"the diagram names modules that do not exist: {missing}"
    shown = {Path(p).as_posix() for p in named}
    for folder in ("core", "tdm", "two_bridge"):
        for module in sorted((root / folder).glob("*.py")):
            rel = module.relative_to(root).as_posix()
            assert module.name == "__init__.py" or rel in shown, f"{rel} is not in the diagram"
