"""Test order: the real tier (`test_real_server.py`: one test, most of this package's test time)
runs first. pytest-xdist hands out whole files in collection order (the nox session passes
`--no-loadscope-reorder`, which keeps it), so one worker plays the real tier while the other
runs every other file; last, as its default order (most tests first) put it, it made the session
wait for it alone."""

from __future__ import annotations

import pytest

REAL_TIER = "test_real_server.py"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.path.name != REAL_TIER)  # stable: the rest keep their order
