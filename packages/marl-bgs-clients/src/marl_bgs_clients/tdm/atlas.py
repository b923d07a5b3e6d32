"""Pictures for the docs, drawn with the one renderer: the map atlas and the scenario starts.

    python -m marl_bgs_clients.tdm.atlas maps --out docs/maps            # NN.png, overview.png
    python -m marl_bgs_clients.tdm.atlas maps --out /tmp/maps --ids 0 47 # some, no overview
    python -m marl_bgs_clients.tdm.atlas scenarios --out docs/scenarios  # scenario_<id>.png

Every picture is a `Scene` built from an engine start state (`oracle_scene`) and drawn by
`marl_bgs_clients.tdm.render`, so the docs show the game exactly as the clients do. A map picture
shows the field, Red Zones, obstacles and spawn pads (no units) under a title "<id> <name>
(<split>, <n> obstacles)"; a scenario picture shows its snapshot with every living unit, the
scenario's id and challenge in the top bar and each unit's agent name below it. PNGs are written
as 32-colour palette images without timestamps, so a rerun writes the same bytes.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import jax
import numpy as np
import pygame
from PIL import Image

from marl_bgs.core.arena import BODY_RADIUS
from marl_bgs.tdm.maps import MapSpec, all_ids, load
from marl_bgs.tdm.mode import tdm_pool
from marl_bgs.tdm.scenarios import Scenario, shipped
from marl_bgs_clients.canvas import TEXT, font, pixels
from marl_bgs_clients.tdm.render import Layout, render, slot_name
from marl_bgs_clients.tdm.scene import Scene, oracle_scene
from marl_bgs_eval.tdm.legend import BADGES

COLUMNS = 4  # maps per row of the overview
TILE = Layout(scale=15.0, top=20, margin=4)  # one map of the overview
COLOURS = 32  # palette size of the written PNGs


def title(spec: MapSpec) -> str:
    """'<id> <name> (<split>, <n> obstacles)'."""
    n = len(spec.obstacles)
    return f"{spec.id} {spec.name} ({spec.split}, {n} obstacle{'s' * (n != 1)})"


def save_png(surface: pygame.Surface, path: Path) -> Path:
    """Write `surface` as a small, deterministic palette PNG (parent folders created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.fromarray(pixels(surface))
    image.quantize(colors=COLOURS, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    return path


def map_scenes(ids: Sequence[int]) -> list[Scene]:
    """Each map's start (team A on the left) as a scene without units: one pool, one compile."""
    states = jax.tree.map(np.asarray, tdm_pool(list(ids)).states)  # [map, side, ...]
    return [
        replace(oracle_scene(jax.tree.map(lambda a, k=k: a[k, 0], states)), units=(), arrows=())
        for k in range(len(ids))
    ]


def _titled(scene: Scene, text: str, layout: Layout, size: int) -> pygame.Surface:
    """The scene drawn with `text`, shrunk to fit, in place of the top bar."""
    surface = render(scene, layout)
    width = surface.get_width() - 2 * layout.margin
    pygame.draw.rect(surface, (255, 255, 255), pygame.Rect(0, 0, surface.get_width(), layout.top))
    while size > 8 and font(size).size(text)[0] > width:
        size -= 1
    label = font(size).render(text, True, TEXT)
    surface.blit(label, (layout.margin, (layout.top - label.get_height()) // 2))
    return surface


def map_picture(spec: MapSpec, scene: Scene, layout: Layout | None = None) -> pygame.Surface:
    """One map under its title (default layout: `Layout()`, as the clients draw)."""
    layout = layout or Layout()
    return _titled(scene, title(spec), layout, size=max(12, layout.top - 6))


def overview(specs: Sequence[MapSpec], scenes: Sequence[Scene]) -> pygame.Surface:
    """Every map as a `TILE`, `COLUMNS` to a row, in the order given."""
    w, h = TILE.size
    rows = math.ceil(len(specs) / COLUMNS)
    sheet = pygame.Surface((COLUMNS * w, rows * h))
    sheet.fill((255, 255, 255))
    for k, (spec, scene) in enumerate(zip(specs, scenes, strict=True)):
        sheet.blit(map_picture(spec, scene, TILE), ((k % COLUMNS) * w, (k // COLUMNS) * h))
    return sheet


def maps(out: Path, ids: Sequence[int] | None = None) -> list[Path]:
    """Write `NN.png` per map into `out` (default: every shipped map, then `overview.png`)."""
    specs = [load(i) for i in (all_ids() if ids is None else ids)]
    scenes = map_scenes([s.id for s in specs])
    written = [
        save_png(map_picture(spec, scene), out / f"{spec.id:02d}.png")
        for spec, scene in zip(specs, scenes, strict=True)
    ]
    if ids is None:
        written.append(save_png(overview(specs, scenes), out / "overview.png"))
    return written


def scenario_scene(scenario: Scenario) -> Scene:
    """The scenario's snapshot as designed (team A on the left), titled in the top bar."""
    return oracle_scene(scenario.state(), caption=f"Scenario {scenario.id}: {scenario.challenge}")


def scenario_picture(scenario: Scenario, layout: Layout | None = None) -> pygame.Surface:
    """The scenario's start with each living unit's agent name below its status badges."""
    layout = layout or Layout()
    scene = scenario_scene(scenario)
    surface = render(scene, layout)
    badge = max(9, layout.length(0.28))  # the renderer's status badge size
    for u in scene.units:
        if not u.alive:
            continue
        x, y = layout.to_px(u.x, u.y)
        badges = any(s in u.statuses for s in BADGES)
        top = y + layout.length(BODY_RADIUS) + 2 + (badge if badges else 0)
        name = font(15).render(slot_name(u.slot), True, TEXT)
        surface.blit(name, name.get_rect(midtop=(x, top)))
    return surface


def scenarios(out: Path) -> list[Path]:
    """Write `scenario_<id>.png` (the name docs/scenarios.md links) per shipped scenario."""
    return [
        save_png(scenario_picture(sc), out / f"scenario_{sc.id}.png") for sc in shipped().values()
    ]


def main(argv: list[str] | None = None) -> None:
    """Command line: `maps --out DIR [--ids N ...]` or `scenarios --out DIR`; prints each path."""
    parser = argparse.ArgumentParser(description="Draw the docs' map atlas or scenario pictures.")
    what = parser.add_subparsers(dest="what", required=True)
    drawn = what.add_parser("maps", help="NN.png per map and overview.png")
    drawn.add_argument("--out", type=Path, default=Path("docs/maps"))
    drawn.add_argument("--ids", type=int, nargs="+", default=None, help="default: every map")
    what.add_parser("scenarios", help="scenario_<id>.png per scenario").add_argument(
        "--out", type=Path, default=Path("docs/scenarios")
    )
    args = parser.parse_args(argv)
    paths = maps(args.out, args.ids) if args.what == "maps" else scenarios(args.out)
    for path in paths:
        print(path)


if __name__ == "__main__":
    main()
