"""Check 5, training declared: the manifest alone, no program runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from marl_bgs_tournament.rulebook.limits import TEST_MAPS, Row
from marl_bgs_tournament.rulebook.recording import _as_manifest


def training_declared(manifest: dict[str, Any] | str | Path | None) -> Row:
    """The manifest declares its training: no test map among its maps, no scenario."""
    m = _as_manifest(manifest)
    limit = f"declared; no test map {list(TEST_MAPS)}; no scenario"
    training = None if m is None else m.get("training")
    if training is None:
        why = "no manifest" if m is None else "manifest.training is null"
        return Row("training_declared", False, None, limit, f"training undeclared ({why})")
    maps = [int(x) for x in training.get("maps", [])]
    scenarios = [str(x) for x in training.get("scenarios", [])]
    problems = []
    if test := sorted(set(maps) & set(TEST_MAPS)):
        problems.append(f"trained on test map(s) {test}")
    if scenarios:
        problems.append(f"trained on scenario(s) {scenarios[:8]}")
    value = f"{len(set(maps))} maps, {len(scenarios)} scenarios"
    detail = "; ".join(problems) or f"declared: maps {sorted(set(maps))}, no scenario"
    return Row("training_declared", not problems, value, limit, detail)
