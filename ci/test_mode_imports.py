"""No module outside a mode's own folders imports a mode by name (issue 43).

Generic code (the batched env, evaluation, the viewer, the trainer, the season) finds a mode's
parts through the kit registries (`marl_bgs.kit`, `marl_bgs_eval.modes.parts`, ...). A mode's
own code lives in a `tdm/` or `two_bridge/` folder of any package. The scan reads every source
file's imports (no package is imported): `marl_bgs.tdm...`, `marl_bgs.two_bridge...`, any
package's `.tdm` / `.two_bridge` subpackage, and the Team Deathmatch names the engine re-exports
at its top level (`from marl_bgs import GameState`).

The engine's, eval's and train's top-level `__init__.py` are public faces that re-export the
modes' names (`PUBLIC_FACE`) and are not generic code.

Nor does a mode's folder import another mode's (`cross_mode_imports`): what two modes both use
(a key's entry, the web page's key) has a generic owner.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODE_FOLDERS = {"tdm", "two_bridge"}
# Names `marl_bgs/__init__.py` re-exports from a mode's folder.
MODE_NAMES = {
    "AGENTS", "SCRIPTED", "ActionMasks", "AgentView", "Facts", "GameState", "TDMEnv",
    "TeamDeathmatch", "TwoBridgeEnv", "UnitSpec", "author_state", "maps", "refresh_sight_lines",
    "scenarios", "scripted_policy", "tdm", "two_bridge",
}  # fmt: skip
PUBLIC_FACE = {  # a package's top-level exports, re-exported from the modes' folders
    "packages/marl-bgs-engine/src/marl_bgs/__init__.py",
    "packages/marl-bgs-eval/src/marl_bgs_eval/__init__.py",
    "packages/marl-bgs-train/src/marl_bgs_train/__init__.py",
}


def _mode_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module in ("marl_bgs", "marl_battlegrounds"):
                names += [f"marl_bgs.{a.name}" for a in node.names if a.name in MODE_NAMES]
        else:
            continue
        found += [n for n in names if MODE_FOLDERS & set(n.split(".")[1:]) or _is_name(n)]
    return sorted(set(found))


def _is_name(name: str) -> bool:
    head, _, tail = name.partition(".")
    return head == "marl_bgs" and tail in MODE_NAMES


def offenders() -> dict[str, list[str]]:
    """Every generic source module that imports a mode, with what it imports."""
    out = {}
    for path in sorted(ROOT.glob("packages/*/src/**/*.py")):
        rel = path.relative_to(ROOT).as_posix()
        inside = MODE_FOLDERS & set(path.relative_to(ROOT).parts[3:-1])
        if inside or rel in PUBLIC_FACE:
            continue
        found = _mode_imports(path)
        if found:
            out[rel] = found
    return out


def test_no_generic_module_imports_a_mode_by_name():
    found = offenders()
    assert not found, f"generic modules import a mode by name (use the kit registries): {found}"


def test_the_scan_sees_each_kind_of_mode_import(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(
        "import marl_bgs.tdm.maps\nfrom marl_bgs import GameState, make\n"
        "from marl_bgs_eval.two_bridge import PARTS\nfrom marl_bgs.core import env\n"
    )
    assert _mode_imports(src) == [
        "marl_bgs.GameState", "marl_bgs.tdm.maps", "marl_bgs_eval.two_bridge"
    ]  # fmt: skip


def cross_mode_imports() -> dict[str, list[str]]:
    """Every module in one mode's folder that imports another mode's folder, with what."""
    out = {}
    for path in sorted(ROOT.glob("packages/*/src/**/*.py")):
        own = MODE_FOLDERS & set(path.relative_to(ROOT).parts[3:-1])
        found = [n for n in _mode_imports(path) if own and (MODE_FOLDERS - own) & set(n.split("."))]
        if found:
            out[path.relative_to(ROOT).as_posix()] = found
    return out


def test_no_mode_imports_another_mode():
    found = cross_mode_imports()
    assert not found, f"a mode imports another mode (give what both use a generic owner): {found}"
