"""Packages whose exports are imported on first use (PEP 562), so that `import marl_bgs_eval`
(and with it every command line's `--help`) costs milliseconds, not the seconds of JAX and pandas.

A package writes its exports once, as `from module import name` lines under
`if TYPE_CHECKING:` (what type checkers and readers see), and ends with `export_lazily(__name__)`,
which reads those lines from the package's own source (as `lazy_loader.attach_stub` reads a stub
file) and imports each name the first time it is used. `startup_imports` checks a package's
command lines: what their `--help` and argument errors import.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import json
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

# What a command line's --help must not import (top-level names; marl_bgs is the JAX engine).
HEAVY = ("jax", "jaxlib", "flax", "optax", "orbax", "numpy", "pandas", "pyarrow", "scipy",
         "pygame", "marl_bgs", "matplotlib", "imageio", "PIL")  # fmt: skip


def exports_of(source: str) -> dict[str, tuple[str, str]]:
    """name -> (module, attribute) of every `from module import attribute [as name]` under an
    `if TYPE_CHECKING:` at the top level of `source`."""
    found: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for line in node.body:
            if isinstance(line, ast.ImportFrom) and line.module and line.level == 0:
                for alias in line.names:
                    found[alias.asname or alias.name] = (line.module, alias.name)
    return found


class LazyPackage(types.ModuleType):
    """A package module that imports its exports, and its submodules, on first use."""

    __lazy_exports__: dict[str, tuple[str, str]]

    def __getattr__(self, name: str) -> Any:  # only called for names not yet bound
        exports = self.__dict__.get("__lazy_exports__", {})
        if name in exports:
            module, attribute = exports[name]
            value = getattr(importlib.import_module(module), attribute)
            types.ModuleType.__setattr__(self, name, value)
            return value
        if not name.startswith("_") and importlib.util.find_spec(f"{self.__name__}.{name}"):
            return importlib.import_module(f"{self.__name__}.{name}")
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        # Importing a submodule binds it on its package; an export of the same name wins, as it
        # does in an eagerly importing __init__ (marl_bgs_eval.evaluate is the function).
        if name in self.__dict__.get("__lazy_exports__", {}) and value is sys.modules.get(
            f"{self.__name__}.{name}"
        ):
            return
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self.__dict__.get("__lazy_exports__", {})})


def export_lazily(package: str) -> None:
    """Make `package` (a `__name__`, called at the end of its `__init__`) import the names under
    its `if TYPE_CHECKING:` when first used."""
    module = sys.modules[package]
    source = Path(str(module.__file__)).read_text(encoding="utf-8")
    module.__dict__["__lazy_exports__"] = exports_of(source)
    module.__class__ = LazyPackage


# Run in a fresh interpreter: every invocation, then the heavy modules imported so far.
_CHILD = """
import importlib, json, sys, time
import typer.main
scripts, out = json.loads(sys.argv[1]), sys.argv[2]
heavy = set(json.loads(sys.argv[3]))
rows = []
for script, target in scripts:
    module, _, attr = target.partition(":")
    loaded = importlib.import_module(module)
    command = typer.main.get_command(loaded.app)
    names = sorted(getattr(command, "commands", {}))
    for args in [["--help"], ["--no-such-option"]] + [[n, a] for n in names
                                                      for a in ("--help", "--no-such-option")]:
        sys.argv = [script, *args]
        start = time.perf_counter()
        try:
            getattr(loaded, attr)()
        except SystemExit as stop:
            code = stop.code
        else:
            code = 0
        seconds = time.perf_counter() - start
        found = sorted({m.split(".")[0] for m in sys.modules} & heavy)
        rows.append([" ".join([script, *args]), code, seconds, found])
with open(out, "w") as f:
    json.dump(rows, f)
"""


def startup_imports(distribution: str) -> list[tuple[str, int, float, list[str]]]:
    """Run every console script of an installed `distribution` (e.g. "marl-bgs-eval") in one
    fresh interpreter with `--help` and with an unknown option, at the top level and for each
    command. Per invocation: the command line, its exit code, its seconds (after the first,
    which includes the import) and the `HEAVY` modules imported so far."""
    dist = importlib.metadata.distribution(distribution)
    scripts = [(ep.name, ep.value) for ep in dist.entry_points if ep.group == "console_scripts"]
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "rows.json"
        args = [json.dumps(scripts), str(out), json.dumps(HEAVY)]
        subprocess.run(
            [sys.executable, "-c", _CHILD, *args], check=True, capture_output=True, timeout=300
        )
        rows = json.loads(out.read_text(encoding="utf-8"))
    return [(str(c), int(code or 0), float(s), list(found)) for c, code, s, found in rows]


def assert_light_startup(distribution: str, at_least: int) -> float:
    """Check `startup_imports(distribution)`: at least `at_least` invocations, none importing a
    `HEAVY` module, `--help` exiting 0 and an unknown option 2 (AssertionError naming the
    command line otherwise). Returns the slowest invocation's seconds."""
    rows = startup_imports(distribution)
    assert len(rows) >= at_least, rows
    for line, code, _, heavy in rows:
        assert heavy == [], f"{line} imported {heavy}"
        assert code == (0 if line.endswith("--help") else 2), line
    return round(max(seconds for _, _, seconds, _ in rows), 3)
