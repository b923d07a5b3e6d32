"""Old paths of the clients' moved modules still import (`marl_bgs_clients.MOVED`, through
`marl_bgs_eval.moved`): the very same module, with a DeprecationWarning naming the new path."""

from __future__ import annotations

import importlib
import sys

import pytest

from marl_bgs_clients import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_each_moved_module_keeps_its_old_path(old, monkeypatch):
    new = importlib.import_module(MOVED[old])
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {MOVED[old]}: import"):
        assert importlib.import_module(old) is new
