"""The installed marl-bgs-eval wheel imports and reports its version; its command lines start
without JAX, pandas or pygame."""

import importlib
import sys
from importlib.metadata import version

import pytest

import marl_bgs_eval
from marl_bgs_eval.lazy import assert_light_startup


def test_version_matches_metadata() -> None:
    assert marl_bgs_eval.__version__ == version("marl-bgs-eval")


def test_command_lines_answer_help_without_heavy_imports(record_property) -> None:
    """`--help` and an unknown option, for every console script and each of its commands,
    import none of JAX, pandas, pygame (marl_bgs_eval.lazy.HEAVY): they answer at once."""
    slowest = assert_light_startup("marl-bgs-eval", at_least=16)
    record_property("slowest_seconds", slowest)


def test_the_exports_are_the_documented_names() -> None:
    exports = marl_bgs_eval.__dict__["__lazy_exports__"]
    assert set(exports) == set(marl_bgs_eval.__all__) - {"__version__"}
    for name in marl_bgs_eval.__all__:
        assert name in dir(marl_bgs_eval)
        assert getattr(marl_bgs_eval, name) is not None


def test_an_export_wins_over_a_submodule_of_its_name(tmp_path, monkeypatch) -> None:
    """A package `pkg` exporting the function `pkg.thing.thing`: importing the submodule first
    (which binds it on the package) leaves `pkg.thing` the function, as an eager __init__ does;
    submodules and unknown names behave as usual."""
    pkg = tmp_path / "lazy_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from marl_bgs_eval.lazy import export_lazily\n"
        "if TYPE_CHECKING:\n"
        "    from lazy_pkg.thing import thing\n"
        "    from lazy_pkg.other import VALUE as renamed\n"
        "export_lazily(__name__)\n"
    )
    (pkg / "thing.py").write_text("def thing():\n    return 'called'\n")
    (pkg / "other.py").write_text("VALUE = 7\n")
    (pkg / "plain.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import lazy_pkg  # type: ignore[import-not-found]

    assert "lazy_pkg.thing" not in sys.modules  # nothing imported yet
    importlib.import_module("lazy_pkg.thing")
    assert lazy_pkg.thing() == "called"
    assert lazy_pkg.renamed == 7
    assert lazy_pkg.plain.X == 1  # a submodule, imported on first use
    assert {"thing", "renamed"} <= set(dir(lazy_pkg))
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        _ = lazy_pkg.missing
    for name in [m for m in sys.modules if m.startswith("lazy_pkg")]:
        del sys.modules[name]
