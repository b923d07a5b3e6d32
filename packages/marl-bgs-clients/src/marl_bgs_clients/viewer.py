"""The Replay Viewer: a saved game of any mode, tick by tick, drawn by its mode's
`ReplayDrawing` (`marl_bgs_clients.modes`) with the mode's panel beside it (Team Deathmatch:
metrics up to the tick, who did what to whom, what an agent saw and chose).

    marl-bgs-clients view game.replay.zip        # or: ReplayViewer.open(path).run()
    marl-bgs-clients export game.replay.zip --out game.gif

Keys: Right/Left a tick, Space play/pause, Home/End first/last, PageUp/PageDown 10 ticks (or
click the timeline), L shows or hides the key, P saves the frame as PNG, G the game as GIF, M as
MP4 (animations always carry the key), Q/Escape quits; drop a replay file on the window to open
it. In modes with agent views (Team Deathmatch): O the Oracle view, 0-9 the POV of slot 0-9
(a_0..b_4), Tab or a click on a unit selects it (its ranges, its panel). A file that fails the
replay checks (malformed, hostile, another format) is never shown: the window says why instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pygame

from marl_bgs_clients.canvas import (
    BACKGROUND,
    LINE,
    MUTED,
    PROBLEM,
    SELECTED,
    TEXT,
    pixels,
    text,
    wrap,
)  # fmt: skip
from marl_bgs_clients.export import save_clip, save_frame
from marl_bgs_clients.modes import ReplayDrawing, drawing
from marl_bgs_clients.window import open_window
from marl_bgs_eval import replay_files
from marl_bgs_eval.array_zip import Replay

PANEL_WIDTH = 430
TIMELINE_HEIGHT = 64  # the timeline, the message line and the keys
MARGIN = 6
EMPTY = (812, 440)  # the field's size while no game is open
PLAY_SECONDS = 0.4  # a tick while playing
HELP = "keys: L the key   Left/Right a tick   Space play   O, 0-9 the view   Tab select   " \
       "P G M save   Q quit"  # fmt: skip
_SLOT_KEYS = {getattr(pygame, f"K_{k}"): k for k in range(10)}


@dataclass
class ReplayViewer:
    """The viewer's state; `frame()` draws it, `handle(event)` changes it, `run()` opens a
    window. Build one with `ReplayViewer(replay)` or `ReplayViewer.open(path)`."""

    replay: Replay | None
    name: str = "replay"
    tick: int = 0
    observer: int | None = None  # None: the Oracle view
    selected: int | None = None
    playing: bool = False
    show_key: bool = False  # the key laid over the field's foot (L)
    message: str = ""
    out_dir: Path = field(default_factory=Path.cwd)
    _memo: dict[str, Any] = field(default_factory=dict)  # the open replay's panel data

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
            replay = replay_files.load(path)
            drawing(replay)  # a mode the clients cannot draw is refused like a bad file
        except Exception as err:  # every refusal is shown, whatever its kind
            self.replay, self._memo = None, {}
            self.message = f"cannot open {Path(path).name}: {err}"
            return
        self.replay, self._memo, self.name = replay, {}, Path(path).name
        self.tick, self.playing, self.message = 0, False, f"opened {self.name}"
        self.observer = self.selected = None

    @property
    def part(self) -> ReplayDrawing:
        """The open replay's mode drawing."""
        assert self.replay is not None
        return drawing(self.replay)

    @property
    def field_size(self) -> tuple[int, int]:
        """The (width, height) of the tick's picture (left of the panel, above the timeline)."""
        try:
            return EMPTY if self.replay is None else self.part.size(self.replay)
        except Exception:  # a replay no drawing fits: `frame` says why
            return EMPTY

    @property
    def size(self) -> tuple[int, int]:
        """The window's (width, height)."""
        w, h = self.field_size
        return w + PANEL_WIDTH, max(h, 360) + TIMELINE_HEIGHT

    # -- drawing -------------------------------------------------------------------------------

    def frame(self) -> pygame.Surface:
        """The whole window's picture."""
        surface = pygame.Surface(self.size)
        surface.fill(BACKGROUND)
        if self.replay is None:
            text(surface, (20, 20), ["Replay Viewer", "", *wrap(self.message, 90)],
                 colour=PROBLEM)  # fmt: skip
            return surface
        w, h = self.field_size
        bottom = self.size[1] - TIMELINE_HEIGHT
        try:
            part = self.part
            part.draw(surface.subsurface(pygame.Rect(0, 0, w, h)), self.replay, self.tick,
                      self.observer, self.selected)  # fmt: skip
            self._timeline(surface)
            panel = surface.subsurface(pygame.Rect(w, 0, PANEL_WIDTH, self.size[1]))
            part.panel(panel, self.replay, self.tick, self.selected, self._memo)
            strip = part.key(w) if self.show_key else None
            if strip is not None:
                surface.blit(strip, (0, h - strip.get_height()))
        except Exception as err:  # a window shows what went wrong; it never closes on it
            surface.fill(BACKGROUND)
            said = f"cannot draw tick {self.tick}: {type(err).__name__}: {err}"
            text(surface, (20, 20), wrap(said, 90), colour=PROBLEM)
        text(surface, (MARGIN, bottom + 24), [self.message[:110]])
        text(surface, (MARGIN, bottom + 24 + LINE), [HELP], MUTED)
        return surface

    def _timeline(self, surface: pygame.Surface) -> None:
        assert self.replay is not None
        w, top = self.field_size[0], self.size[1] - TIMELINE_HEIGHT
        rect = pygame.Rect(MARGIN, top + 8, w - 2 * MARGIN, 10)
        pygame.draw.rect(surface, (200, 200, 200), rect)
        x = rect.x + round(rect.width * self.tick / max(self.replay.ticks, 1))
        pygame.draw.rect(surface, TEXT, pygame.Rect(rect.x, rect.y, x - rect.x, rect.height))
        pygame.draw.circle(surface, SELECTED, (x, rect.centery), 7)

    def timeline_tick(self, col: int) -> int:
        """The tick under column `col` of the timeline."""
        assert self.replay is not None
        w, m = self.field_size[0], MARGIN
        share = (col - m) / max(w - 2 * m, 1)
        return int(np.clip(round(share * self.replay.ticks), 0, self.replay.ticks))

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
        elif key in _SLOT_KEYS and _SLOT_KEYS[key] < self.part.agents:
            self.observer = self.selected = _SLOT_KEYS[key]
        elif key == pygame.K_l:
            self.show_key = not self.show_key
        elif key == pygame.K_TAB and self.part.agents:
            self.selected = 0 if self.selected is None else (self.selected + 1) % self.part.agents
        elif key == pygame.K_p:
            self.message = f"saved {self.export_frame()}"
        elif key in (pygame.K_g, pygame.K_m):
            self.message = f"saved {self.export_clip('.gif' if key == pygame.K_g else '.mp4')}"
        return True

    def _click(self, pos: tuple[int, int]) -> None:
        if self.replay is None:
            return
        col, row = pos
        (w, h), bottom = self.field_size, self.size[1] - TIMELINE_HEIGHT
        if row >= bottom and col < w:
            self.jump(self.timeline_tick(col))
        elif col < w and row < h:
            self.selected = self.part.unit_at(self.replay, self.tick, self.observer, pos)

    def jump(self, tick: int) -> None:
        """Go to state `tick`, clipped to 0 .. the game's last."""
        assert self.replay is not None
        self.tick = int(np.clip(tick, 0, self.replay.ticks))

    # -- files ---------------------------------------------------------------------------------

    def _stem(self) -> str:
        view = "oracle" if self.observer is None else self.part.slot_name(self.observer)
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
                yield pixels(self._with_key(self.frame()))

        try:
            return save_clip(frames(), path, fps)
        finally:
            self.tick, self.show_key = keep

    def _with_key(self, picture: pygame.Surface) -> pygame.Surface:
        """`picture` with the mode's key below it, as wide as the picture (if it has one)."""
        strip = self.part.key(picture.get_width())
        if strip is None:
            return picture
        out = pygame.Surface((picture.get_width(), picture.get_height() + strip.get_height()))
        out.blit(picture, (0, 0))
        out.blit(strip, (0, picture.get_height()))
        return out

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
            if screen.get_size() != self.size:  # a dropped file of another mode
                screen = open_window(self.size, f"MARL-BGs Replay Viewer: {self.name}")
            screen.blit(self.frame(), (0, 0))
            pygame.display.flip()
        pygame.quit()
