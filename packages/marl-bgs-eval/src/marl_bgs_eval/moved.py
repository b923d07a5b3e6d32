"""Modules that moved keep their old import path for a while: importing the old name gives the
module at its new path (the very same object) with a `DeprecationWarning` naming it, and
`python -m OLD` runs the new module (with a `FutureWarning`, which Python always shows). Each
package lists its moves (old name -> new name) and calls `install(table)` from its
`__init__.py` (`marl_bgs_eval.MOVED`, `marl_bgs_clients.MOVED`). Standard library only: the
command lines' `--help` stays light.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings
from collections.abc import Mapping, Sequence
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from types import CodeType, ModuleType


class MovedModules(MetaPathFinder, Loader):
    """A `sys.meta_path` finder that answers each old name of `moved` with its new module."""

    def __init__(self, moved: Mapping[str, str]) -> None:
        self.moved = dict(moved)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        """A spec loaded by this finder for an old name (its origin the new module's file, which
        `python -m` puts in `sys.argv[0]`), None for any other."""
        del path, target
        if fullname not in self.moved:
            return None
        new = importlib.util.find_spec(self.moved[fullname])
        return importlib.util.spec_from_loader(fullname, self, origin=new and new.origin)

    def create_module(self, spec: ModuleSpec) -> None:
        """The import system's default placeholder (exec_module swaps in the new module)."""
        del spec

    def exec_module(self, module: ModuleType) -> None:
        """Warn, import the new module and put it in `sys.modules` under the old name too (the
        import system returns what `sys.modules` holds under the old name after this)."""
        sys.modules[module.__name__] = importlib.import_module(self._warned(module.__name__))

    def get_code(self, fullname: str) -> CodeType | None:
        """The new module's code, for `python -m OLD` (runpy asks the loader for it)."""
        new = self._warned(fullname, FutureWarning)  # a person typed it: always shown
        spec = importlib.util.find_spec(new)
        get_code = getattr(spec.loader, "get_code", None) if spec else None
        return get_code(new) if get_code else None

    def _warned(self, old: str, category: type[Warning] = DeprecationWarning) -> str:
        new = self.moved[old]
        warnings.warn(f"{old} moved to {new}: import {new} instead", category,
                      stacklevel=_importer_level())  # fmt: skip
        return new


def _importer_level() -> int:
    """The `stacklevel` of the first frame outside this module and the import system, so the
    warning points at the line that imported the old name (`warnings` itself skips the frames
    of `importlib._bootstrap`, so they are not counted)."""
    frame, level = sys._getframe(2), 2  # 1: _warned, 2: its caller (exec_module, get_code)
    while frame is not None:
        name = frame.f_code.co_filename
        if "importlib" in name and "_bootstrap" in name:
            frame = frame.f_back
        elif name in (__file__, importlib.__file__):
            frame, level = frame.f_back, level + 1
        else:
            break
    return level


def install(moved: Mapping[str, str]) -> MovedModules:
    """Put a `MovedModules` finder for `moved` (old module name -> new) first on `sys.meta_path`
    (once; the one already there for the same table is returned). First, so that a folder left
    behind by a moved package (say `metrics/__pycache__/`) is not found as a namespace package
    under the old name instead."""
    for finder in sys.meta_path:
        if isinstance(finder, MovedModules) and finder.moved == dict(moved):
            return finder
    finder = MovedModules(moved)
    sys.meta_path.insert(0, finder)
    return finder
