"""Old module paths of modules that moved into a mode's folder (issue 43): importing one still
works, gives the very module at the new path and warns (`DeprecationWarning`) naming it.

`install()` (called by `marl_bgs_eval/__init__.py`) puts one `sys.meta_path` finder first; it
answers only for the names in `MOVED`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import CodeType, ModuleType

MOVED: dict[str, str] = {  # old module name -> new module name
    "marl_bgs_eval.legend": "marl_bgs_eval.tdm.legend",
    "marl_bgs_eval.compose": "marl_bgs_eval.tdm.compose",
    "marl_bgs_eval.zero_shot": "marl_bgs_eval.tdm.zero_shot",
    "marl_bgs_eval.opponents": "marl_bgs_eval.tdm.opponents",
    "marl_bgs_eval.scenarios": "marl_bgs_eval.tdm.scenarios",
    "marl_bgs_eval.metrics": "marl_bgs_eval.tdm.metrics",
    "marl_bgs_eval.metrics.analysis": "marl_bgs_eval.tdm.metrics.analysis",
    "marl_bgs_eval.metrics.axes": "marl_bgs_eval.tdm.metrics.axes",
    "marl_bgs_eval.metrics.families": "marl_bgs_eval.tdm.metrics.families",
    "marl_bgs_eval.metrics.priority": "marl_bgs_eval.tdm.metrics.priority",
    "marl_bgs_eval.metrics.timing": "marl_bgs_eval.tdm.metrics.timing",
    "marl_bgs_eval.metrics.compare": "marl_bgs_eval.compare",
}


def _warn(old: str) -> None:
    warnings.warn(
        f"{old} moved to {MOVED[old]}; import it from there (the old path will be removed)",
        DeprecationWarning,
        stacklevel=3,  # past this module and the import system's own frames: the importer
    )


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds each old name and loads it as the module at its new name."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        del path, target
        return importlib.machinery.ModuleSpec(fullname, self) if fullname in MOVED else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        _warn(spec.name)
        module = importlib.import_module(MOVED[spec.name])
        spec.loader_state = module.__spec__  # the import system now sets __spec__ to `spec`
        return module

    def exec_module(self, module: ModuleType) -> None:
        alias = module.__spec__
        assert alias is not None
        module.__spec__ = alias.loader_state  # the module keeps its own spec

    def get_code(self, fullname: str) -> CodeType | None:
        """The new module's code, for `python -m <old name>`."""
        _warn(fullname)
        spec = importlib.util.find_spec(MOVED[fullname])
        assert spec is not None
        assert isinstance(spec.loader, importlib.abc.InspectLoader)
        return spec.loader.get_code(spec.name)


_FINDER = _Alias()


def install() -> None:
    """Put the finder of old names first on `sys.meta_path` (once)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
