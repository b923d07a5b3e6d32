"""Check 5, training declared: the manifest alone, no program runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from marl_bgs_tournament import modes
from marl_bgs_tournament.portable.format import mode_of
from marl_bgs_tournament.rulebook.limits import Row
from marl_bgs_tournament.rulebook.recording import _as_manifest


def training_declared(manifest: dict[str, Any] | str | Path | None) -> Row:
    """The manifest declares its training: none of its mode's test layouts (Team Deathmatch's
    test maps 47-51) among its maps, no scenario."""
    m = _as_manifest(manifest)
    test = () if m is None else modes.held_out_layouts(mode_of(m["mode"], "manifest.mode"))
    limit = f"declared; no test map {list(test)}; no scenario"
    training = None if m is None else m.get("training")
    if training is None:
        why = "no manifest" if m is None else "manifest.training is null"
        return Row("training_declared", False, None, limit, f"training undeclared ({why})")
    maps = [int(x) for x in training.get("maps", [])]
    scenarios = [str(x) for x in training.get("scenarios", [])]
    problems = []
    if touched := sorted(set(maps) & set(test)):
        problems.append(f"trained on test map(s) {touched}")
    if scenarios:
        problems.append(f"trained on scenario(s) {scenarios[:8]}")
    value = f"{len(set(maps))} maps, {len(scenarios)} scenarios"
    detail = "; ".join(problems) or f"declared: maps {sorted(set(maps))}, no scenario"
    return Row("training_declared", not problems, value, limit, detail)
