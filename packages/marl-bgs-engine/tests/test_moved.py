"""Old paths of moved modules (`marl_bgs.core.moved`): the very same module object, with a
DeprecationWarning that names the new path and points at the importing line."""

from __future__ import annotations

import importlib
import runpy
import sys
import warnings

import pytest

import marl_bgs
from marl_bgs import MOVED
from marl_bgs.core import checks
from marl_bgs.core.moved import MovedModules, install

OLD = "marl_bgs.old_checks"  # a name no module has, for the finder's own tests


@pytest.fixture
def finder(monkeypatch):
    """A finder that answers OLD with `marl_bgs.core.checks`, removed afterwards."""
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.delitem(sys.modules, OLD, raising=False)
    yield install({OLD: "marl_bgs.core.checks"})
    if hasattr(marl_bgs, "old_checks"):
        delattr(marl_bgs, "old_checks")


def test_an_old_name_gives_the_new_module_and_warns_at_the_importer(finder):
    with pytest.warns(DeprecationWarning, match="old_checks moved to marl_bgs.core.checks") as w:
        module = importlib.import_module(OLD)
    assert module is checks
    assert module.__name__ == "marl_bgs.core.checks"
    assert sys.modules[OLD] is checks
    assert getattr(marl_bgs, "old_checks") is checks  # noqa: B009 - set by the import
    assert checks.__spec__.name == "marl_bgs.core.checks"  # the new module is left as it was
    assert [x.filename for x in w] == [__file__]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = importlib.import_module(OLD)  # imported already: no second warning
    assert again is checks


def test_the_finder_is_installed_once_and_answers_only_old_names(finder):
    assert install({OLD: "marl_bgs.core.checks"}) is finder
    assert sum(isinstance(f, MovedModules) and f.moved == MOVED for f in sys.meta_path) == 1
    assert finder.find_spec("marl_bgs.core.checks") is None
    with pytest.raises(ModuleNotFoundError, match=r"marl_bgs\.no_such_module"):
        importlib.import_module("marl_bgs.no_such_module")


def test_python_dash_m_on_an_old_name_runs_the_new_module(finder):
    """`python -m OLD` (runpy) runs the new module's code, with the warning."""
    with pytest.warns(FutureWarning, match="import marl_bgs.core.checks instead"):
        names = runpy.run_module(OLD, run_name="not_main")
    assert names["check_int"].__code__.co_filename == checks.check_int.__code__.co_filename
    assert names["__file__"] == checks.__file__  # runpy's sys.argv[0] under -m


@pytest.mark.parametrize("old", sorted(MOVED))
def test_each_moved_module_keeps_its_old_path(old, monkeypatch):
    new = importlib.import_module(MOVED[old])
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {MOVED[old]}: import"):
        assert importlib.import_module(old) is new
