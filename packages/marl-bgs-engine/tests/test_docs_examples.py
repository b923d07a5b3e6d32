"""The runnable examples of docs/api.md run as written (batch sizes scaled down for CI)."""

import re
from pathlib import Path

import pytest

API_DOC = Path(__file__).resolve().parents[3] / "docs" / "api.md"


@pytest.mark.skipif(not API_DOC.exists(), reason="docs/ is not beside this checkout")
def test_api_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", API_DOC.read_text(), re.S)
    assert len(blocks) >= 3
    namespace: dict[str, object] = {}
    for block in blocks:
        small = block.replace("num_envs=1024", "num_envs=4").replace("length=128", "length=3")
        exec(compile(small, str(API_DOC), "exec"), namespace)
    assert namespace["rewards"]["a_0"].shape == (3, 4)  # type: ignore[index]
