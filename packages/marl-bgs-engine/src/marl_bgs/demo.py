"""Moved: the demo plays Team Deathmatch and lives in its folder, `python -m marl_bgs.tdm.demo`.
`python -m marl_bgs.demo` still runs it, and its names still resolve, with a warning."""

from __future__ import annotations

import importlib
import runpy
import warnings
from typing import Any

NEW = "marl_bgs.tdm.demo"
warnings.warn(f"marl_bgs.demo moved to {NEW}: run python -m {NEW}", FutureWarning, stacklevel=2)


def __getattr__(name: str) -> Any:
    return getattr(importlib.import_module(NEW), name)


if __name__ == "__main__":
    runpy.run_module(NEW, run_name="__main__", alter_sys=True)
