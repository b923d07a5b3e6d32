"""pytest plugin for `ci/reliability.py`: tags each test of a fuzz module with its input family.

A fuzz module declares `pytestmark = pytest.mark.fuzz_family("map files")`; every case records
its outcome with `record_property("outcome", ...)`. This plugin adds the family as a property,
so the JUnit XML report carries both.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Add ("family", name) to the user properties of every test marked with a fuzz family."""
    for item in items:
        marker = item.get_closest_marker("fuzz_family")
        if marker is not None:
            item.user_properties.append(("family", marker.args[0]))
