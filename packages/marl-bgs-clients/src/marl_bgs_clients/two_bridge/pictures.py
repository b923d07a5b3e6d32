"""Two-Bridge pictures: an episode replay (`marl_bgs_eval.episode_replays`) drawn frame by frame
(no window) and written as a GIF; the Replay Viewer draws the same pictures (`drawing`).

    key, settings = jax.random.key(0), {"variant": "V2_Base"}
    replay = episode_replays.record(policy, key, mode="two-bridge", settings=settings)[0]
    save_gif(replay, "game.gif")                       # or a file: episode_replays.load(path)

The field (`frame`, numpy only) is drawn from the state: walkable ground, the cliff, the two
bridges, the six spawn regions outlined, the beacon with its capture radius, living friends
(blue) and enemies (red) with health bars, the dead as grey crosses, a shot line from each Marine
that fired, and the elapsed share of the step limit as a bar along the bottom edge. A whole
picture (`picture`) adds a title above it (variant and team), and below it the status line (step,
Marines alive, outcome) and the key: the colours, the key's entries (`KEY`) and the rule (`RULE`)
are `marl_bgs_eval.two_bridge.legend`'s, which the tournament's web replay page draws too.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import imageio.v3 as iio
import jax
import numpy as np
import pygame

from marl_bgs.two_bridge import BridgeFacts, BridgeState
from marl_bgs.two_bridge import layout as lay
from marl_bgs_clients.canvas import TEXT, font, pixels
from marl_bgs_eval import episode_replays
from marl_bgs_eval.array_zip import Replay
from marl_bgs_eval.errors import EvalError
from marl_bgs_eval.two_bridge import legend

SCALE = 8  # pixels per raw unit: a 512 x 512 picture
PAPER = (255, 255, 255)
TITLE_HEIGHT, STATUS_HEIGHT, ROW, GLYPH = 28, 22, 19, 14


@cache
def _field() -> np.ndarray:
    size = int(lay.FIELD * SCALE)
    ys, xs = (np.mgrid[0:size, 0:size] + 0.5) / SCALE
    y = lay.FIELD - ys  # row 0 is the top of the field
    walkable = lay.PATHABLE[np.floor(y / lay.CELL).astype(int), np.floor(xs / lay.CELL).astype(int)]
    image = np.where(walkable[..., None], legend.GROUND, legend.CLIFF).astype(np.uint8)
    for x0, x1, y0, y1 in lay.REGIONS:
        inside = (xs >= x0) & (xs <= x1) & (y >= y0) & (y <= y1)
        edge = inside & ~((xs >= x0 + 0.4) & (xs <= x1 - 0.4) & (y >= y0 + 0.4) & (y <= y1 - 0.4))
        image[edge] = legend.REGION
    return image


def _pixel(pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of raw positions [..., 2]."""
    return (lay.FIELD - pos[..., 1]) * SCALE, pos[..., 0] * SCALE


def _disk(
    image: np.ndarray, pos: np.ndarray, radius: float, colour: Any, ring: bool = False
) -> None:
    r, c = _pixel(pos)
    r0, c0 = max(int(r - radius) - 1, 0), max(int(c - radius) - 1, 0)
    r1, c1 = int(r + radius) + 2, int(c + radius) + 2
    ys, xs = np.mgrid[r0:r1, c0:c1] + 0.5
    d = np.hypot(ys - r, xs - c)
    inside = (d <= radius) & ((d >= radius - 1.5) if ring else True)
    window = image[r0:r1, c0:c1]
    window[inside[: window.shape[0], : window.shape[1]]] = colour


def _line(image: np.ndarray, a: np.ndarray, b: np.ndarray, colour: Any) -> None:
    (ra, ca), (rb, cb) = _pixel(a), _pixel(b)
    n = int(max(abs(rb - ra), abs(cb - ca))) + 1
    rows = np.clip(np.linspace(ra, rb, n).astype(int), 0, image.shape[0] - 1)
    cols = np.clip(np.linspace(ca, cb, n).astype(int), 0, image.shape[1] - 1)
    image[rows, cols] = colour


def _unit(image: np.ndarray, pos: np.ndarray, health: float, colour: Any) -> None:
    if health <= 0:
        r, c = (int(v) for v in _pixel(pos))
        for d in range(-4, 5):
            for rr, cc in ((r + d, c + d), (r + d, c - d)):
                if 0 <= rr < image.shape[0] and 0 <= cc < image.shape[1]:
                    image[rr, cc] = legend.DEAD
        return
    _disk(image, pos, 0.6 * SCALE, colour)
    r, c = (int(v) for v in _pixel(pos))
    width = round(health / lay.MARINE_HEALTH * 10)
    top = max(r - 9, 0)
    image[top : top + 2, max(c - 5, 0) : max(c - 5, 0) + 10] = legend.DEAD
    image[top : top + 2, max(c - 5, 0) : max(c - 5, 0) + width] = legend.HEALTH


def frame(state: BridgeState, facts: BridgeFacts | None = None) -> np.ndarray:
    """uint8 [512, 512, 3]: one state (one game, no batch axis), with the shots of `facts`."""
    image = _field().copy()
    beacon = np.asarray(state.beacon)
    _disk(image, beacon, lay.BEACON_RADIUS * SCALE, legend.BEACON, ring=True)
    _disk(image, beacon, 0.8 * SCALE, legend.BEACON)
    friends, enemies = np.asarray(state.friend_pos), np.asarray(state.enemy_pos)
    if facts is not None:
        for i, j in enumerate(np.asarray(facts.friend_target)):
            if j >= 0:
                _line(image, friends[i], enemies[j], legend.FRIEND)
        for j, i in enumerate(np.asarray(facts.enemy_target)):
            if i >= 0:
                _line(image, enemies[j], friends[i], legend.ENEMY)
    for pos, health in zip(enemies, np.asarray(state.enemy_health), strict=True):
        _unit(image, pos, float(health), legend.ENEMY)
    for pos, health in zip(friends, np.asarray(state.friend_health), strict=True):
        _unit(image, pos, float(health), legend.FRIEND)
    elapsed = float(np.asarray(state.tick)) / max(float(np.asarray(state.tick_limit)), 1.0)
    image[-4:, : round(elapsed * image.shape[1])] = legend.CLOCK
    return image


def variant(state: BridgeState) -> str:
    """The variant one game is (its enemy count and layout), e.g. "V2_Base"."""
    n = int(np.asarray(state.enemy_pos).shape[0])
    units = next(k for k, v in lay.ENEMY_COUNTS.items() if v == n)
    return f"{units}_{list(lay.LAYOUTS)[int(np.asarray(state.layout))]}"


def title_lines(state: BridgeState, system: str = "") -> tuple[str, str]:
    """The title (what is played) and the status line (step, Marines alive, outcome)."""
    team = f": {system}" if system else ""
    friends = int((np.asarray(state.friend_health) > 0).sum())
    enemies = np.asarray(state.enemy_health)
    code = int(np.asarray(state.outcome))
    outcome = f"outcome: {lay.OUTCOMES[code]}" if code else lay.OUTCOMES[code]
    return (
        f"Two-Bridge {variant(state)}{team}",
        f"step {int(np.asarray(state.tick))} of {int(np.asarray(state.tick_limit))}   "
        f"Marines alive {friends}/{lay.NUM_FRIENDS}   enemies alive "
        f"{int((enemies > 0).sum())}/{enemies.shape[0]}   {outcome}",
    )


def _sample(surface: pygame.Surface, kind: str, colour: Any, box: pygame.Rect) -> None:
    c = box.center
    if kind == "disc":
        pygame.draw.circle(surface, colour, c, box.height // 2)
    elif kind == "cross":
        pygame.draw.line(surface, colour, box.topleft, box.bottomright, 2)
        pygame.draw.line(surface, colour, box.bottomleft, box.topright, 2)
    elif kind in ("bar", "line"):
        pygame.draw.line(
            surface, colour, (box.x, c[1]), (box.right, c[1]), 3 if kind == "bar" else 1
        )
    elif kind == "beacon":
        pygame.draw.circle(surface, colour, c, box.height // 2, width=2)
        pygame.draw.circle(surface, colour, c, box.height // 5)
    elif kind == "outline":
        pygame.draw.rect(surface, colour, box, width=2)
    else:
        pygame.draw.rect(surface, colour, box)
        pygame.draw.rect(surface, TEXT, box, width=1)


def key_band(width: int) -> pygame.Surface:
    """The key: a sample and a meaning per entry of the legend's `KEY`, wrapped to `width`, then
    its `RULE`."""
    spots, x, y = [], 6, 6
    for e in legend.KEY:
        w = GLYPH + 5 + font(16).size(e.meaning)[0]
        if x > 6 and x + w > width - 6:
            x, y = 6, y + ROW
        spots.append((x, y, e.symbol, e.colour, e.meaning))
        x += w + 14
    band = pygame.Surface((width, y + 2 * ROW + 6))
    band.fill(PAPER)
    for x, y, kind, colour, meaning in spots:
        _sample(band, kind, colour, pygame.Rect(x, y, GLYPH, GLYPH))
        band.blit(font(16).render(meaning, False, TEXT), (x + GLYPH + 5, y + 1))
    band.blit(font(16).render(legend.RULE, False, TEXT), (6, y + ROW + 1))
    return band


@cache
def _key_pixels(width: int) -> np.ndarray:
    return pixels(key_band(width))


def _band(text: str, width: int, height: int, size: int) -> np.ndarray:
    band = pygame.Surface((width, height))
    band.fill(PAPER)
    band.blit(font(size).render(text, False, TEXT), (6, (height - size) // 2 + 2))
    return pixels(band)


def titled(state: BridgeState, facts: BridgeFacts | None = None, system: str = "") -> np.ndarray:
    """uint8 [H, 512, 3] of one state: the title, the field (`frame`) and the status line (step,
    Marines alive, outcome)."""
    field = frame(state, facts)
    title, status = title_lines(state, system)
    width = field.shape[1]
    return np.concatenate([
        _band(title, width, TITLE_HEIGHT, 22), field, _band(status, width, STATUS_HEIGHT, 17),
    ])  # fmt: skip


def picture(state: BridgeState, facts: BridgeFacts | None = None, system: str = "") -> np.ndarray:
    """`titled` with the key below it. What changes between steps lies together (the status
    line under the field), so a GIF stores little more than the field's changes."""
    field = titled(state, facts, system)
    return np.concatenate([field, _key_pixels(field.shape[1])])


def at_tick(replay: Replay, tick: int, history: Any = None) -> tuple[Any, Any]:
    """(state, facts of the step that led to it, or None) of state `tick` of a Two-Bridge
    episode replay; `history`: its `episode_replays.history`, when already known."""
    if not replay.header.get("mode", "").startswith("two-bridge-"):
        raise EvalError(
            f"replay: a Two-Bridge episode expected, got mode {replay.header.get('mode')!r}"
        )
    states, facts = history if history is not None else episode_replays.history(replay)
    one = lambda tree, t: jax.tree.map(lambda a: a[t], tree)  # noqa: E731
    return one(states, tick), None if tick == 0 else one(facts, tick - 1)


def frames(replay: Replay) -> np.ndarray:
    """uint8 [T + 1, H, 512, 3]: every state of a Two-Bridge episode replay as a `picture`;
    step t's shots drawn on frame t + 1."""
    at_tick(replay, 0, ((), ()))  # the mode, before the history is built
    history = episode_replays.history(replay)
    system = str(replay.header.get("system", ""))
    return np.stack([
        picture(*at_tick(replay, t, history), system) for t in range(replay.ticks + 1)
    ])  # fmt: skip


def save_gif(replay: Replay, path: str | Path, fps: int = 10) -> Path:
    """Write a Two-Bridge episode replay as an animated GIF."""
    path = Path(path)
    iio.imwrite(path, frames(replay), duration=1000 / fps, loop=0)
    return path
