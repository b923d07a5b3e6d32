"""Real headless Chromium pictures of the pages: the leaderboard is drawn, the heat map's cells
have their scores' colours, and the replay canvas shows each team's units where the JSON puts
them at the tick asked for."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
import pandas as pd
from PIL import Image

from marl_bgs_eval.tdm import legend
from marl_bgs_tournament.web import heatmap

Shot = Callable[..., Path]
TEAM_COLOURS = ((47, 111, 214), (214, 58, 47))  # replay.js: team A blue, team B red
FIELD, RED_ZONE = (236, 233, 224), (243, 201, 196)
TICK = 25


def _pixels(png: Path) -> np.ndarray:
    with Image.open(png) as im:
        return np.asarray(im.convert("RGB")).astype(np.int32)


def _near(px: np.ndarray, colour: tuple[int, int, int], tol: int = 12) -> np.ndarray:
    return np.abs(px - np.asarray(colour)).max(axis=-1) <= tol


def test_leaderboard_picture_is_drawn(
    web_site: str, web_screenshot: Shot, web_shots_dir: Path
) -> None:
    px = _pixels(web_screenshot(web_site + "/", web_shots_dir / "leaderboard.png"))
    assert _near(px[:20], (42, 47, 58), 3).mean() > 0.5, "the header bar is missing"
    assert _near(px, (255, 255, 255), 0).sum() > 50_000, "the table's white rows are missing"
    assert len(np.unique(px.reshape(-1, 3), axis=0)) > 50, "the page looks blank"


def test_heat_map_cells_have_their_scores_colours(
    web_site: str, web_season_dir: Path, web_screenshot: Shot, web_shots_dir: Path
) -> None:
    px = _pixels(web_screenshot(web_site + "/matchups", web_shots_dir / "matchups.png"))
    matrix = pd.read_csv(web_season_dir / "matchups.csv", index_col="system_a").to_numpy()
    wanted: dict[tuple[int, int, int], int] = {}
    for score in matrix.ravel():
        c = heatmap.colour(None if math.isnan(score) else float(score))
        wanted[c] = wanted.get(c, 0) + 1
    legend = {heatmap.PALETTE[0], heatmap.PALETTE[5], heatmap.PALETTE[10]}
    for colour, cells in wanted.items():
        found = int(_near(px, colour, 2).sum())
        assert found >= 1500 * cells, f"colour {colour}: {found} pixels for {cells} cell(s)"
    for k, colour in enumerate(heatmap.PALETTE):
        if colour not in wanted and colour not in legend:
            assert _near(px, colour, 1).sum() < 200, f"step {k} appears but no score has it"


def _canvas_box(px: np.ndarray) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) of the drawn field: its plain and Red Zone colours."""
    mask = _near(px, FIELD, 3) | _near(px, RED_ZONE, 3)
    rows, cols = np.flatnonzero(mask.sum(axis=1) > 100), np.flatnonzero(mask.sum(axis=0) > 100)
    return int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1


def test_replay_canvas_shows_the_units_at_the_asked_tick(
    web_site: str, web_screenshot: Shot, web_shots_dir: Path, web_dom: Callable[[str], str]
) -> None:
    game = httpx.get(web_site + "/api/replays/0", timeout=60).json()
    dom = web_dom(f"{web_site}/replays/0?tick={TICK}")
    assert f'data-tick="{TICK}"' in dom
    assert f"tick {TICK} of {game['ticks']}" in dom
    assert f"{game['result_text']} in {game['ticks']} ticks" in dom  # the result in words
    png = web_screenshot(
        f"{web_site}/replays/0?tick={TICK}", web_shots_dir / f"replay-tick{TICK}.png"
    )
    px = _pixels(png)
    left, top, right, bottom = _canvas_box(px)
    assert (right - left, bottom - top) == (800, 400), "the canvas is not where it should be"
    scale = (right - left) / game["width"]
    frame = game["frames"][TICK]
    assert frame["tick"] == TICK
    radius = game["body_radius"] * scale
    for u in frame["units"]:
        if not u["alive"]:
            continue
        cx, cy = left + u["x"] * scale, top + (game["height"] - u["y"]) * scale
        spots = [
            (round(cy + 0.7 * radius * math.sin(a)), round(cx + 0.7 * radius * math.cos(a)))
            for a in np.linspace(0, 2 * math.pi, 12, endpoint=False)
        ]
        hits = sum(_near(px[r, c], TEAM_COLOURS[u["team"]], 30) for r, c in spots)
        assert hits >= 4, f"slot {u['slot']} at ({u['x']}, {u['y']}): {hits} of 12 spots"
    inside = px[top:bottom, left:right]
    for colour in TEAM_COLOURS:
        assert _near(inside, colour, 20).sum() > 1500, f"team colour {colour} barely drawn"
    assert _near(inside, (59, 59, 59), 3).sum() > 2000, "the obstacles are missing"
    assert len(np.unique(inside.reshape(-1, 3), axis=0)) > 20, "the canvas looks blank"
    below = px[bottom + 40 :]  # the key under the canvas: its samples in the legend's colours
    for entry in (legend.BADGES["burst"], *legend.key("zones", "rings", "dead")):
        if entry.colour is not None:
            assert _near(below, entry.colour, 6).sum() > 20, f"key sample {entry} missing"


def test_replay_of_a_corrupt_file_says_so(
    web_site: str, web_screenshot: Shot, web_shots_dir: Path
) -> None:
    px = _pixels(web_screenshot(web_site + "/replays/999", web_shots_dir / "replay-corrupt.png"))
    assert _near(px, (253, 232, 230), 2).sum() > 2000, "no error box shown"
    assert not (_near(px, TEAM_COLOURS[0], 20).sum() > 1000), "units drawn from a corrupt file"


def test_teamwork_page_shows_its_chart(
    web_site: str, web_season_dir: Path, web_screenshot: Shot, web_shots_dir: Path
) -> None:
    """The study's chart loads in the page: its bars' colours (`plot_screen`: light for p >= 0.05,
    mid for p < 0.05, dark for Holm p < 0.05) cover a visible area of the screenshot."""
    rows = pd.read_csv(web_season_dir / "studies" / "teamwork.csv")
    rows = rows[rows["varies"]]
    assert len(rows) > 0
    px = _pixels(web_screenshot(web_site + "/studies/teamwork", web_shots_dir / "teamwork.png"))
    bars = (201, 214, 234), (91, 139, 208), (31, 59, 115)
    assert sum(int(_near(px, c, 6).sum()) for c in bars) > 2_000, "the chart's bars are missing"
