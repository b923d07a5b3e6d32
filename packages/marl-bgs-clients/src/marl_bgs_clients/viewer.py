"""The Replay Viewer: any saved game, tick by tick, in the Oracle view or any agent's POV, with
analytical panels (metrics up to the tick, who did what to whom, what an agent saw and chose).

    marl-bgs-clients view game.replay.zip        # or: ReplayViewer.open(path).run()

Keys: Right/Left a tick, Space play/pause, Home/End first/last, PageUp/PageDown 10 ticks (or
click the timeline), O the Oracle view, 0-9 the POV of slot 0-9 (a_0..b_4), Tab or a click on a
unit selects it (its ranges, its panel), L shows or hides the key, P saves the frame as PNG, G the
game as GIF, M as MP4 (animations always carry the key), Q/Escape quits; drop a replay file on the
window to open it. A file that fails the replay checks
(malformed, hostile, another format) is never shown: the window says why instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pygame

from marl_bgs import Facts
from marl_bgs_clients import panels
from marl_bgs_clients.export import save_clip, save_frame
from marl_bgs_clients.key import key_rect, key_strip, with_key
from marl_bgs_clients.render import (
    BACKGROUND,
    SELECTED,
    TEXT,
    Layout,
    draw,
    font,
    pixels,
    slot_name,
)
from marl_bgs_clients.scene import Scene, oracle_scene, pov_scene
from marl_bgs_clients.window import open_window
from marl_bgs_eval import replays
from marl_bgs_eval.legend import DAMAGE, TEAM_COLOURS
from marl_bgs_eval.replays import Replay

PANEL_WIDTH = 430
TIMELINE_HEIGHT = 64  # the timeline, the message line and the keys
LINE = 17
PLAY_SECONDS = 0.4  # a tick while playing
HELP = "keys: L the key   Left/Right a tick   Space play   O, 0-9 the view   Tab select   " \
       "P G M save   Q quit"  # fmt: skip
MUTED = (110, 110, 110)
CELL, LABEL = (34, 16), 30  # a heat map cell's (width, height); the width of its row names
_SLOT_KEYS = {getattr(pygame, f"K_{k}"): k for k in range(10)}


@dataclass
class ReplayViewer:
    """The viewer's state; `frame()` draws it, `handle(event)` changes it, `run()` opens a
    window. Build one with `ReplayViewer(replay)` or `ReplayViewer.open(path)`."""

    replay: Replay | None
    name: str = "replay"
    layout: Layout = field(default_factory=Layout)
    tick: int = 0
    observer: int | None = None  # None: the Oracle view
    selected: int | None = None
    playing: bool = False
    show_key: bool = False  # the key laid over the field's foot (L)
    message: str = ""
    out_dir: Path = field(default_factory=Path.cwd)
    _metrics: pd.DataFrame | None = None

    @classmethod
    def open(cls, path: str | Path, **kwargs: Any) -> ReplayViewer:
        """A viewer on the replay file at `path`; a file that fails the checks gives a viewer
        with no game and the reason as its message."""
        viewer = cls(None, name=Path(path).name, **kwargs)
        viewer.load(path)
        return viewer

    def load(self, path: str | Path) -> None:
        """Show the replay at `path`, or say why it cannot be shown (keeping nothing of it)."""
        try:
            replay = replays.load(path)
        except Exception as err:  # every refusal is shown, whatever its kind
            self.replay, self._metrics = None, None
            self.message = f"cannot open {Path(path).name}: {err}"
            return
        self.replay, self._metrics, self.name = replay, None, Path(path).name
        self.tick, self.playing, self.message = 0, False, f"opened {self.name}"

    @property
    def size(self) -> tuple[int, int]:
        """The window's (width, height)."""
        w, h = self.layout.size
        return w + PANEL_WIDTH, h + TIMELINE_HEIGHT

    @property
    def metrics(self) -> pd.DataFrame:
        """Evaluation's full metrics summed up to each tick (computed on first use)."""
        assert self.replay is not None
        if self._metrics is None:
            self._metrics = replays.metrics(self.replay, "full")
        return self._metrics

    def scene(self) -> Scene:
        """The current picture's content: the Oracle view or the observer's POV."""
        assert self.replay is not None
        return replay_scene(self.replay, self.tick, self.observer)

    # -- drawing -------------------------------------------------------------------------------

    def frame(self) -> pygame.Surface:
        """The whole window's picture."""
        surface = pygame.Surface(self.size)
        surface.fill(BACKGROUND)
        if self.replay is None:
            _text(surface, (20, 20), ["Replay Viewer", "", *_wrap(self.message, 90)],
                  colour=DAMAGE)  # fmt: skip
            return surface
        try:
            field_part = surface.subsurface(pygame.Rect((0, 0), self.layout.size))
            draw(field_part, self.scene(), self.layout, self.selected)
            self._timeline(surface)
            self._panel(surface.subsurface(pygame.Rect(self.layout.size[0], 0, PANEL_WIDTH,
                                                       self.size[1])))  # fmt: skip
            if self.show_key:
                area = key_rect(pygame.Rect((0, 0), self.layout.size))
                surface.blit(key_strip(area.width), area)
        except Exception as err:  # a window shows what went wrong; it never closes on it
            surface.fill(BACKGROUND)
            text = f"cannot draw tick {self.tick}: {type(err).__name__}: {err}"
            _text(surface, (20, 20), _wrap(text, 90), colour=DAMAGE)
        _text(surface, (self.layout.margin, self.layout.size[1] + 24), [self.message[:110]])
        _text(surface, (self.layout.margin, self.layout.size[1] + 24 + LINE), [HELP], MUTED)
        return surface

    def _timeline(self, surface: pygame.Surface) -> None:
        assert self.replay is not None
        w, top = self.layout.size[0], self.layout.size[1]
        rect = pygame.Rect(self.layout.margin, top + 8, w - 2 * self.layout.margin, 10)
        pygame.draw.rect(surface, (200, 200, 200), rect)
        x = rect.x + round(rect.width * self.tick / max(self.replay.ticks, 1))
        pygame.draw.rect(surface, TEXT, pygame.Rect(rect.x, rect.y, x - rect.x, rect.height))
        pygame.draw.circle(surface, SELECTED, (x, rect.centery), 7)

    def timeline_tick(self, col: int) -> int:
        """The tick under column `col` of the timeline."""
        assert self.replay is not None
        w, m = self.layout.size[0], self.layout.margin
        share = (col - m) / max(w - 2 * m, 1)
        return int(np.clip(round(share * self.replay.ticks), 0, self.replay.ticks))

    def _panel(self, panel: pygame.Surface) -> None:
        assert self.replay is not None
        panel.fill((255, 255, 255))
        y = _text(panel, (10, 8), panels.game_lines(self.replay))
        row = panels.upto(self.metrics, self.tick)
        y = _text(panel, (10, y + 6), [f"up to tick {self.tick}:        A        B"], bold=True)
        lines = [f"{label:<18}{a:>8.0f} {b:>8.0f}" for label, a, b in panels.team_rows(row)]
        y = _text(panel, (10, y), lines, mono=True)
        y = max(_matrix(panel, (10 + k * 210, y + 6), panels.damage_matrix(row, side), side)
                for k, side in enumerate("ab"))  # fmt: skip
        if self.selected is not None:
            seen = self._seen(self.selected)
            lines = panels.agent_lines(self.replay, self.tick, self.selected, seen)
            y = _text(panel, (10, y + 8), lines)

    def _seen(self, slot: int) -> list[int]:
        """The slots agent `slot`'s view held at this tick (itself included)."""
        assert self.replay is not None
        swap = self.replay.header["a_spawn"] == "right"
        scene = pov_scene(replays.view(self.replay, slot, self.tick), slot, swap)
        return [u.slot for u in scene.units]

    # -- input ---------------------------------------------------------------------------------

    def handle(self, event: pygame.event.Event) -> bool:
        """Apply one input event; False when the viewer should close. A failure (an export
        that cannot be written, ...) becomes the window's message."""
        if event.type == pygame.QUIT:
            return False
        try:
            if event.type == pygame.DROPFILE:
                self.load(event.file)
            elif event.type == pygame.KEYDOWN:
                return self._key(event.key)
            elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
                self._click(event.pos)
        except Exception as err:  # shown, never raised out of the window's loop
            self.message = f"{type(err).__name__}: {err}"
        return True

    def _key(self, key: int) -> bool:
        if key in (pygame.K_q, pygame.K_ESCAPE):
            return False
        if self.replay is None:
            return True
        last = self.replay.ticks
        moves = {pygame.K_RIGHT: 1, pygame.K_LEFT: -1, pygame.K_PAGEUP: 10, pygame.K_PAGEDOWN: -10}
        if key in moves:
            self.jump(self.tick + moves[key])
        elif key == pygame.K_HOME:
            self.jump(0)
        elif key == pygame.K_END:
            self.jump(last)
        elif key == pygame.K_SPACE:
            self.playing = not self.playing
        elif key == pygame.K_o:
            self.observer = None
        elif key in _SLOT_KEYS:
            self.observer = self.selected = _SLOT_KEYS[key]
        elif key == pygame.K_l:
            self.show_key = not self.show_key
        elif key == pygame.K_TAB:
            self.selected = 0 if self.selected is None else (self.selected + 1) % 10
        elif key == pygame.K_p:
            self.message = f"saved {self.export_frame()}"
        elif key in (pygame.K_g, pygame.K_m):
            self.message = f"saved {self.export_clip('.gif' if key == pygame.K_g else '.mp4')}"
        return True

    def _click(self, pos: tuple[int, int]) -> None:
        if self.replay is None:
            return
        col, row = pos
        if row >= self.layout.size[1] and col < self.layout.size[0]:
            self.jump(self.timeline_tick(col))
            return
        self.selected = self.scene().unit_at(*self.layout.to_world(col, row))

    def jump(self, tick: int) -> None:
        """Go to state `tick`, clipped to 0 .. the game's last."""
        assert self.replay is not None
        self.tick = int(np.clip(tick, 0, self.replay.ticks))

    # -- files ---------------------------------------------------------------------------------

    def _stem(self) -> str:
        view = "oracle" if self.observer is None else slot_name(self.observer)
        return f"{self.name.removesuffix('.zip').removesuffix('.replay')}-{view}"

    def export_frame(self, path: str | Path | None = None) -> Path:
        """Save the current picture (field and panels) as PNG."""
        path = path or self.out_dir / f"{self._stem()}-tick-{self.tick:04d}.png"
        return save_frame(pixels(self.frame()), path)

    def export_clip(self, suffix: str = ".gif", path: str | Path | None = None,
                    fps: float = 4.0) -> Path:  # fmt: skip
        """Save the whole game in the current view as a GIF or MP4 (one frame a tick, the key
        below each)."""
        assert self.replay is not None
        path = path or self.out_dir / f"{self._stem()}{suffix}"
        keep = self.tick, self.show_key
        self.show_key = False  # below the picture instead

        def frames() -> Iterator[np.ndarray]:
            for t in range(self.replay.ticks + 1 if self.replay else 0):
                self.tick = t
                yield pixels(with_key(self.frame()))

        try:
            return save_clip(frames(), path, fps)
        finally:
            self.tick, self.show_key = keep

    def run(self) -> None:  # pragma: no cover - needs a person at the window
        """Open the window and serve input until it is closed (`NoDisplayError` when no window
        can be shown: never a loop on an invisible one)."""
        screen = open_window(self.size, f"MARL-BGs Replay Viewer: {self.name}")
        clock, waited = pygame.time.Clock(), 0.0
        running = True
        while running:
            for event in pygame.event.get():
                running = running and self.handle(event)
            waited += clock.tick(30) / 1000
            if self.playing and self.replay is not None and waited >= PLAY_SECONDS:
                waited = 0.0
                self.jump(self.tick + 1)
                self.playing = self.tick < self.replay.ticks
            screen.blit(self.frame(), (0, 0))
            pygame.display.flip()
        pygame.quit()


def replay_scene(replay: Replay, tick: int, observer: int | None = None) -> Scene:
    """State `tick` of a replay as a scene: the Oracle view (hit amounts from the step that led
    to it) or agent `observer`'s POV (its engine view of that state)."""
    if observer is None:
        facts = None
        if tick > 0:
            facts = Facts(**{
                k.removeprefix("facts."): v[tick - 1] for k, v in replay.arrays.items()
                if k.startswith("facts.")
            })  # fmt: skip
        return oracle_scene(replays.oracle(replay, tick), facts)
    view = replays.view(replay, observer, tick)
    return pov_scene(view, observer, replay.header["a_spawn"] == "right")


def _wrap(text: str, width: int) -> list[str]:
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    return [*lines, line] if line else lines


def _text(
    surface: pygame.Surface, at: tuple[int, int], lines: list[str], colour: tuple = TEXT,
    bold: bool = False, mono: bool = False,
) -> int:  # fmt: skip
    """Draw lines of text from `at`; returns the row below them."""
    x, y = at
    face = pygame.font.SysFont("monospace", 14) if mono else font(18)
    face.set_bold(bold)
    for line in lines:
        surface.blit(face.render(line, True, colour), (x, y))
        y += LINE
    face.set_bold(False)
    return y


def _matrix(surface: pygame.Surface, at: tuple[int, int], m: np.ndarray, side: str) -> int:
    """A 5 x 5 heat map of damage dealt by `side`'s agents (rows) to the other team's (columns),
    with its title and every row and column named; returns the row below it."""
    x, y = at
    axes = panels.damage_axes(side)
    y = _text(surface, (x, y), [axes.title])
    (cell, height), label = CELL, LABEL
    small = font(14)
    corner = small.render(axes.corner, True, MUTED)
    surface.blit(corner, corner.get_rect(midleft=(x, y + height // 2)))
    for j, name in enumerate(axes.cols):
        text = small.render(name, True, TEXT)
        surface.blit(
            text, text.get_rect(center=(x + label + j * cell + cell // 2, y + height // 2))
        )
    y += height + 2
    top = float(m.max()) or 1.0
    colour = np.asarray(TEAM_COLOURS[0 if side == "a" else 1], float)
    for i, name in enumerate(axes.rows):
        text = small.render(name, True, TEXT)
        surface.blit(text, text.get_rect(midleft=(x, y + i * (height + 2) + height // 2)))
        for j in range(5):
            shade = (235 - (235 - colour) * m[i, j] / top).astype(int)
            rect = pygame.Rect(x + label + j * cell, y + i * (height + 2), cell - 2, height)
            pygame.draw.rect(surface, tuple(int(c) for c in shade), rect)
            if m[i, j]:
                value = small.render(f"{m[i, j]:.0f}", True, TEXT)
                surface.blit(value, value.get_rect(center=rect.center))
    return y + 5 * (height + 2)
