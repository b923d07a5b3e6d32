"""Modules that moved into a mode's folder still import from their old paths (`MOVED`, through
`marl_bgs_eval.moved`): the very module of the new path, with a DeprecationWarning naming it."""

from __future__ import annotations

import importlib
import runpy
import sys
import warnings
from importlib.machinery import PathFinder

import pytest

from marl_bgs_eval import MOVED
from marl_bgs_eval.moved import install


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_is_the_new_module_and_warns(old: str) -> None:
    new = MOVED[old]
    module = importlib.import_module(new)
    sys.modules.pop(old, None)  # another test may have imported it already
    with pytest.warns(DeprecationWarning, match="moved to") as caught:
        aliased = importlib.import_module(old)
    assert caught[0].filename == __file__  # the warning points at the importing line
    assert aliased is module
    about = [str(w.message) for w in caught if str(w.message).startswith(f"{old} ")]
    assert about == [f"{old} moved to {new}: import {new} instead"]
    assert module.__name__ == new
    assert module.__spec__ is not None
    assert module.__spec__.name == new  # it keeps its own spec


def test_import_statements_and_attribute_access_warn_too() -> None:
    old, new = "marl_bgs_eval.legend", "marl_bgs_eval.tdm.legend"
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}") as caught:
        import marl_bgs_eval.legend  # the statement form
    assert caught[0].filename == __file__  # the warning points at the import, not importlib
    sys.modules.pop(old, None)
    marl_bgs_eval.__dict__.pop("legend", None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        from marl_bgs_eval import legend
    assert legend is importlib.import_module(new)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once imported, the old name is just a name
        assert marl_bgs_eval.legend is legend  # type: ignore[attr-defined]


def test_other_names_are_not_answered() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("marl_bgs_eval.no_such_module")


def test_the_finder_is_installed_once_and_before_the_path_finder() -> None:
    """First on `sys.meta_path`: a folder a moved package leaves behind (`metrics/__pycache__/`)
    would otherwise be found as a namespace package under the old name."""
    finder = install(MOVED)
    assert install(MOVED) is finder
    assert sum(f is finder for f in sys.meta_path) == 1
    assert sys.meta_path.index(finder) < sys.meta_path.index(PathFinder)


def test_python_dash_m_on_an_old_name_runs_the_new_module() -> None:
    """`python -m OLD` (runpy) runs the new module's code, with a FutureWarning (always shown)."""
    new = importlib.import_module(MOVED["marl_bgs_eval.legend"])
    sys.modules.pop("marl_bgs_eval.legend", None)  # as in a fresh `python -m` process
    with pytest.warns(FutureWarning, match="import marl_bgs_eval.tdm.legend instead"):
        names = runpy.run_module("marl_bgs_eval.legend", run_name="not_main", alter_sys=True)
    assert names["__file__"] == new.__file__  # runpy's sys.argv[0] under -m
