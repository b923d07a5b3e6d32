"""System names for the command line and results files: "random", "idle", the Systems each mode
names in its evaluation parts (`EvalParts.systems`: Team Deathmatch's scripted teams "tdm-alpha",
"tdm-beta", "tdm-gamma", "rush") and any registered.

Other packages add names with `register(name, factory)` or through the entry-point group
`marl_bgs_eval.systems` (name = "module:factory"), which is read on first look-up. A prefix
family names Systems by an argument, `prefix:argument` (e.g. `ckpt:runs/ippo`, a saved training
run): `register_prefix(prefix, factory)` or the entry-point group `marl_bgs_eval.system_prefixes`.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

from marl_bgs.core.checks import did_you_mean
from marl_bgs_eval import modes
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.systems import System, idle_system, random_system

_REGISTRY: dict[str, Callable[[], System]] = {"random": random_system, "idle": idle_system}


def register(name: str, factory: Callable[[], System]) -> None:
    """Make `get_system(name)` (and the command line) build a System with `factory()`."""
    if not isinstance(name, str) or not name:
        raise EvalError(f"name: expected a non-empty string, got {name!r}")
    _REGISTRY[name] = factory


_PREFIXES: dict[str, Callable[[str], System]] = {}


def register_prefix(prefix: str, factory: Callable[[str], System]) -> None:
    """Make `get_system("prefix:argument")` build a System with `factory(argument)`."""
    if not isinstance(prefix, str) or not prefix.isidentifier():
        raise EvalError(f"prefix: expected a name like 'ckpt', got {prefix!r}")
    _PREFIXES[prefix] = factory


GROUP = "marl_bgs_eval.systems"
PREFIX_GROUP = "marl_bgs_eval.system_prefixes"
_loaded = False


def _load_entry_points() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for mode in modes.PARTS.modes():
            for name, factory in modes.parts(mode).systems.items():
                _REGISTRY.setdefault(name, factory)
        for ep in entry_points(group=GROUP):
            _REGISTRY.setdefault(ep.name, ep.load())
        for ep in entry_points(group=PREFIX_GROUP):
            _PREFIXES.setdefault(ep.name, ep.load())


def names() -> list[str]:
    """Registered System names."""
    _load_entry_points()
    return sorted(_REGISTRY)


def get_system(name: str) -> System:
    """The System registered under `name`."""
    _load_entry_points()
    prefix, sep, argument = name.partition(":")
    if name not in _REGISTRY and sep and prefix in _PREFIXES:
        return _PREFIXES[prefix](argument)
    if name not in _REGISTRY:
        families = [f"{p}:..." for p in sorted(_PREFIXES)]
        spelled = [*_REGISTRY, *(f"{p}:{argument if sep else '...'}" for p in _PREFIXES)]
        raise EvalError(
            f"system: unknown System {name!r}{did_you_mean(name, spelled)}; registered: "
            f"{names() + families}"
        )
    return _REGISTRY[name]()
