"""The clients' per-mode parts, by versioned mode id: one `ReplayDrawing` per mode, registered
through the entry-point group `marl_bgs_clients.modes` (entry name: the mode's id or alias;
value: "module:DRAWING") or with `PARTS.register(mode, drawing)`. The Replay Viewer,
`marl-bgs-clients view` / `export` and their GIF / MP4 files ask `drawing(replay)` and never
import a mode by name.

    [project.entry-points."marl_bgs_clients.modes"]
    duel = "my_duel.clients:DRAWING"
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import pygame

from marl_bgs import ConfigError
from marl_bgs.core.kits import PartRegistry
from marl_bgs_clients.canvas import text
from marl_bgs_eval.array_zip import Replay
from marl_bgs_eval.errors import EvalError

GROUP = "marl_bgs_clients.modes"


class ReplayDrawing(ABC):
    """How the clients draw one mode's replays on the shared canvas (`marl_bgs_clients.canvas`).

    A mode subclasses it: `size` and `draw` are required; the rest have plain defaults (no
    agent views, no clickable units, the header as the panel, no key). `agents`: the slots a
    viewer may look through (keys 0-9) and select (Tab), 0 for none."""

    agents: int = 0

    @abstractmethod
    def size(self, replay: Replay) -> tuple[int, int]:
        """The (width, height) in pixels of one tick's picture."""

    @abstractmethod
    def draw(
        self, surface: pygame.Surface, replay: Replay, tick: int, observer: int | None = None,
        selected: int | None = None,
    ) -> None:  # fmt: skip
        """Draw state `tick` (0 .. ticks) on `surface` (of `size`): the whole state, or what
        agent `observer` saw; `selected`: the slot to point out."""

    def slot_name(self, slot: int) -> str:
        """The name of slot `slot` (in file names and captions)."""
        return f"slot {slot}"

    def unit_at(
        self, replay: Replay, tick: int, observer: int | None, pos: tuple[int, int]
    ) -> int | None:
        """The slot drawn under pixel `pos` (column, row), or None."""
        del replay, tick, observer, pos
        return None

    def panel(
        self, surface: pygame.Surface, replay: Replay, tick: int, selected: int | None,
        memo: dict[str, Any],
    ) -> None:  # fmt: skip
        """The side panel at state `tick` (`memo`: a dict kept while the replay is open)."""
        del tick, selected, memo
        surface.fill((255, 255, 255))
        text(surface, (10, 8), [f"{k}: {v}" for k, v in replay.header.items()][:40])

    def key(self, width: int) -> pygame.Surface | None:
        """The key (what each colour and mark means) wrapped to `width` pixels, or None."""
        del width
        return None


PARTS: PartRegistry[ReplayDrawing] = PartRegistry(GROUP, "a replay drawing")


def drawing(replay: Replay) -> ReplayDrawing:
    """The drawing of the mode a replay was recorded in (EvalError naming the modes that have
    one when it has none)."""
    try:
        return PARTS.get(str(replay.header["mode"]))
    except ConfigError as err:
        raise EvalError(f"replay: {err}") from None
