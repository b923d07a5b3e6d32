"""docs/scenarios.md is what the scenario files generate, and the pictures show the living units."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from marl_bgs.tdm.constants import TEAM_SIZE
from marl_bgs.tdm.scenarios import Scenario, report, shipped

DOC = Path(__file__).parents[3] / "docs" / "scenarios.md"
TEAM_RGB = ((0x2F, 0x6F, 0xD6), (0xD6, 0x3A, 0x2F))  # the atlas's team A blue, team B red


@pytest.mark.skipif(not DOC.exists(), reason="docs/ is not beside this checkout")
def test_page_matches_the_scenario_files() -> None:
    """Replays every line and variant once (one compiled program per controller)."""
    text = report.markdown(shipped().values(), "scenarios")
    assert text == DOC.read_text(encoding="utf-8"), (
        "docs/scenarios.md is out of date: run python -m marl_bgs.tdm.scenarios.report "
        "--doc docs/scenarios.md --images docs/scenarios"
    )


def _picture(scenario: Scenario, path: Path) -> np.ndarray:
    pytest.importorskip("matplotlib")
    from PIL import Image

    report.draw(scenario, path)
    return np.asarray(Image.open(path).convert("RGB"), np.int32)


def _has_colour(image: np.ndarray, x: float, y: float, rgb: tuple[int, int, int]) -> bool:
    # Off the centre, where the class letter is, but well inside the disc of radius 0.5.
    col, row = report.pixel(x + 0.3, y)
    return bool(np.abs(image[row, col] - np.asarray(rgb)).max() <= 40)


def test_living_units_are_drawn_in_their_team_colour(tmp_path: Path) -> None:
    scenario = next(iter(shipped().values()))
    image = _picture(scenario, tmp_path / "scenario.png")
    assert image.shape[:2] == (round(report.FIGSIZE[1] * report.DPI),
                               round(report.FIGSIZE[0] * report.DPI))  # fmt: skip
    living = [u for u in scenario.units if u.alive]
    assert living
    for unit in living:
        team = unit.slot // TEAM_SIZE
        assert _has_colour(image, float(unit.x), float(unit.y), TEAM_RGB[team]), unit
        assert not _has_colour(image, float(unit.x), float(unit.y), TEAM_RGB[1 - team]), unit


def test_dead_units_are_not_drawn(tmp_path: Path) -> None:
    scenario = next(iter(shipped().values()))
    victim = next(u for u in scenario.units if u.alive)
    units = tuple(
        dataclasses.replace(u, alive=False, health=0.0, cooldown=0) if u is victim else u
        for u in scenario.units
    )
    image = _picture(dataclasses.replace(scenario, units=units), tmp_path / "dead.png")
    for unit in units:
        drawn = any(_has_colour(image, float(unit.x), float(unit.y), rgb) for rgb in TEAM_RGB)
        assert drawn == unit.alive, unit


def test_check_reports_a_stale_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report, "markdown", lambda *args, **kwargs: "# page\n")
    page = tmp_path / "scenarios.md"
    assert report.main(["--check", str(page)]) == 1  # missing
    page.write_text("# old page\n", encoding="utf-8")
    assert report.main(["--check", str(page)]) == 1
    page.write_text("# page\n", encoding="utf-8")
    assert report.main(["--check", str(page)]) == 0
