"""The map atlas and the scenario pictures: pixels at known world points have the right colour."""

import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from marl_bgs.core.arena import MAP_WIDTH
from marl_bgs.tdm.authoring import UnitSpec
from marl_bgs.tdm.constants import SPAWN_PAD_X, SPAWN_PAD_Y, TEAM_SIZE
from marl_bgs.tdm.maps import load
from marl_bgs.tdm.scenarios import Scenario, shipped
from marl_bgs_clients.canvas import pixels
from marl_bgs_clients.tdm import atlas
from marl_bgs_clients.tdm.render import (
    FIELD,
    OBSTACLE,
    PAD_COLOURS,
    RED_ZONE,
    TEAM_COLOURS,
    Layout,
)  # fmt: skip

IDS = (0, 47)  # the open arena; a test map of 32 obstacles (pillars, walls, a diamond)
TOLERANCE = 12  # the palette of 32 colours may move a colour a little


def _read(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"), np.int32)


def _is(image: np.ndarray, x: float, y: float, rgb: tuple[int, int, int], layout: Layout) -> bool:
    col, row = layout.to_px(x, y)
    return bool(np.abs(image[row, col] - np.asarray(rgb)).max() <= TOLERANCE)


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Maps 0 and 47 written once (one start-state compile for the module)."""
    return atlas.maps(tmp_path_factory.mktemp("maps"), ids=IDS)


def test_files_are_small_palette_pngs_without_overview(drawn: list[Path]) -> None:
    assert [p.name for p in drawn] == ["00.png", "47.png"]
    assert sorted(p.name for p in drawn[0].parent.iterdir()) == ["00.png", "47.png"]
    for path in drawn:
        with Image.open(path) as image:
            assert image.mode == "P"
            assert image.size == Layout().size
        assert path.stat().st_size < 60_000


def test_command_writes_the_same_bytes(
    drawn: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    atlas.main(["maps", "--out", str(tmp_path), "--ids", *map(str, IDS)])
    assert capsys.readouterr().out.split() == [str(tmp_path / p.name) for p in drawn]
    for path in drawn:
        assert (tmp_path / path.name).read_bytes() == path.read_bytes()


def test_open_arena_has_pads_red_zones_and_no_units(drawn: list[Path]) -> None:
    image, layout = _read(drawn[0]), Layout()
    for y in SPAWN_PAD_Y:
        assert _is(image, SPAWN_PAD_X, y, PAD_COLOURS[0], layout), y  # team A on the left
        assert _is(image, MAP_WIDTH - SPAWN_PAD_X, y, PAD_COLOURS[1], layout), y
        # Inside where a unit's body would be, but off the pad: the units are not drawn.
        assert _is(image, SPAWN_PAD_X + 0.4, y, RED_ZONE, layout), y
        assert _is(image, MAP_WIDTH - SPAWN_PAD_X - 0.4, y, RED_ZONE, layout), y
    for x, y in ((3.0, 2.0), (4.8, 8.0), (15.2, 2.0), (17.0, 8.0)):
        assert _is(image, x, y, RED_ZONE, layout), (x, y)
    for x, y in ((5.3, 2.0), (10.0, 5.0), (14.7, 8.0)):
        assert _is(image, x, y, FIELD, layout), (x, y)


def test_obstacles_are_drawn_where_they_stand(drawn: list[Path]) -> None:
    image, layout, spec = _read(drawn[1]), Layout(), load(47)
    thick = lambda o: min(float(o["width"]), float(o["height"])) >= 0.4  # noqa: E731
    solid = [o for o in spec.obstacles if o["kind"] == "pillar" or thick(o)]
    assert len(solid) > 20
    for o in solid:
        assert _is(image, float(o["x"]), float(o["y"]), OBSTACLE, layout), o
    for x, y in ((10.0, 5.0), (8.0, 3.0), (12.0, 7.0)):  # open ground between them
        assert _is(image, x, y, FIELD, layout), (x, y)


def test_overview_puts_each_map_in_its_tile() -> None:
    specs = [load(i) for i in IDS]
    image = pixels(atlas.overview(specs, atlas.map_scenes(IDS)))
    width, height = atlas.TILE.size
    assert image.shape[:2] == (height, atlas.COLUMNS * width)
    for o in specs[1].obstacles:
        if o["kind"] == "pillar":
            col, row = atlas.TILE.to_px(float(o["x"]), float(o["y"]))
            assert np.abs(image[row, col + width].astype(int) - OBSTACLE).max() == 0, o
            assert np.abs(image[row, col].astype(int) - OBSTACLE).max() > 0, o  # map 0: open


def _team_drawn(image: np.ndarray, x: float, y: float, team: int) -> bool:
    # Beside the centre, clear of the class letter, well inside the body's disc.
    return _is(image, x - 0.3, y, TEAM_COLOURS[team], Layout())


@pytest.fixture(scope="module")
def pictured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Scenario, list[Path]]:
    """Scenario 1 and what `scenarios` writes when it is the only one shipped."""
    scenario, out = shipped()[1], tmp_path_factory.mktemp("scenarios")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(atlas, "shipped", lambda: {scenario.id: scenario})
        return scenario, atlas.scenarios(out)


def test_living_units_are_drawn_in_their_team_colour(
    pictured: tuple[Scenario, list[Path]],
) -> None:
    scenario, paths = pictured
    assert [p.name for p in paths] == ["scenario_1.png"]  # the name docs/scenarios.md links
    image = _read(paths[0])
    assert image.shape[:2] == Layout().size[::-1]
    living = [u for u in scenario.units if u.alive]
    assert len(living) >= 4
    for unit in living:
        team = unit.slot // TEAM_SIZE
        assert _team_drawn(image, float(unit.x), float(unit.y), team), unit
        assert not _team_drawn(image, float(unit.x), float(unit.y), 1 - team), unit


def test_dead_units_are_not_drawn(pictured: tuple[Scenario, list[Path]], tmp_path: Path) -> None:
    scenario = pictured[0]
    victim = next(u for u in scenario.units if u.alive)
    units = tuple(
        UnitSpec(u.slot, u.cls, u.x, u.y, health=0.0, alive=False) if u is victim else u
        for u in scenario.units
    )
    picture = atlas.scenario_picture(replace(scenario, units=units))
    image = _read(atlas.save_png(picture, tmp_path / "dead.png"))
    for unit in units:
        drawn = any(_team_drawn(image, float(unit.x), float(unit.y), t) for t in (0, 1))
        assert drawn == unit.alive, unit
