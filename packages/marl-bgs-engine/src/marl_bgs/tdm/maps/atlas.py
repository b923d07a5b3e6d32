"""Draw the map atlas: one PNG per shipped map and an overview grid of all of them.

    python -m marl_bgs.tdm.maps.atlas --out docs/maps

needs matplotlib (the engine's optional `docs` extra); it is imported only when drawing, with the
non-interactive Agg backend. Obstacles are drawn with their true shape and rotation, the Red Zones
(x <= 5 and x >= 15) are shaded, and the spawn pads are blue (left team) and red (right team).
"""

from __future__ import annotations

import argparse
import io
import math
from pathlib import Path
from typing import Any

from marl_bgs.core.arena import BODY_RADIUS, MAP_HEIGHT, MAP_WIDTH
from marl_bgs.tdm.constants import SPAWN_PAD_X, SPAWN_PAD_Y
from marl_bgs.tdm.maps.registry import MapSpec, all_ids, load
from marl_bgs.tdm.maps.symmetry import wall_corners

RED_ZONE_DEPTH = 5.0
OBSTACLE_COLOUR = "#3b3b3b"
TEAM_COLOURS = ("#2f6fd6", "#d63a2f")  # left team (A) blue, right team (B) red
ZONE_COLOUR = "#f3c9c4"


def pyplot() -> Any:
    """matplotlib.pyplot with the Agg backend (SystemExit naming the `docs` extra if missing)."""
    try:
        import matplotlib
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise SystemExit("the atlas needs matplotlib: pip install 'marl-bgs-engine[docs]'") from err
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(fig: Any, path: Path) -> None:
    """Save a figure as a small palette PNG (32 colours; no timestamps, so reruns are identical)."""
    from PIL import Image  # matplotlib depends on Pillow

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    buffer.seek(0)
    image = Image.open(buffer).convert("RGB")
    image.quantize(colors=32, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def title(spec: MapSpec) -> str:
    """'<id> <name> (<split>, <n> obstacles)'."""
    n = len(spec.obstacles)
    return f"{spec.id} {spec.name} ({spec.split}, {n} obstacle{'s' * (n != 1)})"


def draw(ax: Any, spec: MapSpec, fontsize: float = 10.0) -> None:
    """Draw one map on a matplotlib Axes."""
    from matplotlib.patches import Circle

    draw_field(ax, spec)
    for side, x in enumerate((SPAWN_PAD_X, MAP_WIDTH - SPAWN_PAD_X)):
        for y in SPAWN_PAD_Y:
            ax.add_patch(Circle((x, y), BODY_RADIUS * 0.8, color=TEAM_COLOURS[side], lw=0))
    ax.set_title(title(spec), fontsize=fontsize)


def draw_field(ax: Any, spec: MapSpec) -> None:
    """Draw a map's field on an Axes: the 20 x 10 extent, shaded Red Zones and the obstacles
    (no spawn pads, no title)."""
    from matplotlib.patches import Circle, Polygon, Rectangle

    ax.set_xlim(0, MAP_WIDTH)
    ax.set_ylim(0, MAP_HEIGHT)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for x0 in (0.0, MAP_WIDTH - RED_ZONE_DEPTH):
        ax.add_patch(
            Rectangle((x0, 0), RED_ZONE_DEPTH, MAP_HEIGHT, color=ZONE_COLOUR, alpha=0.5, lw=0)
        )
    for o in spec.obstacles:
        if o["kind"] == "pillar":
            patch = Circle((float(o["x"]), float(o["y"])), float(o["radius"]))
        else:
            patch = Polygon(wall_corners(o), closed=True)
        patch.set(facecolor=OBSTACLE_COLOUR, edgecolor=OBSTACLE_COLOUR, linewidth=0.8)
        ax.add_patch(patch)


def render(out: Path, ids: list[int] | None = None) -> list[Path]:
    """Write `NN.png` per map into `out`, plus `overview.png` when drawing every map."""
    plt = pyplot()
    out.mkdir(parents=True, exist_ok=True)
    specs = [load(i) for i in (all_ids() if ids is None else ids)]
    written: list[Path] = []
    for spec in specs:
        fig, ax = plt.subplots(figsize=(6, 3.3), dpi=100)
        draw(ax, spec)
        fig.subplots_adjust(left=0.02, right=0.98, bottom=0.02, top=0.9)
        path = out / f"{spec.id:02d}.png"
        save_png(fig, path)
        plt.close(fig)
        written.append(path)
    if ids is not None:
        return written
    cols = 4
    rows = math.ceil(len(specs) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 3.2, rows * 1.85), dpi=80, squeeze=False)
    for ax in axes.flat[len(specs) :]:
        ax.axis("off")
    for ax, spec in zip(axes.flat, specs, strict=False):
        draw(ax, spec, fontsize=7.5)
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.005, top=0.985, wspace=0.04, hspace=0.3)
    path = out / "overview.png"
    save_png(fig, path)
    plt.close(fig)
    written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    """Command line: `python -m marl_bgs.tdm.maps.atlas --out docs/maps [--ids 0 47]`."""
    parser = argparse.ArgumentParser(description="Draw the map atlas (PNGs).")
    parser.add_argument("--out", type=Path, default=Path("docs/maps"))
    parser.add_argument("--ids", type=int, nargs="*", default=None, help="default: every map")
    args = parser.parse_args(argv)
    for path in render(args.out, args.ids):
        print(path)


if __name__ == "__main__":
    main()
