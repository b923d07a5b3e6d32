"""Two-Bridge's replay drawing (`DRAWING`): each state of an episode replay as its `titled`
picture (title, field with the step's shots, status line), the episode in the panel, and the
key (`marl_bgs_clients.two_bridge.pictures`)."""

from __future__ import annotations

from typing import Any

import pygame

from marl_bgs_clients.canvas import surface_of, text, wrap
from marl_bgs_clients.modes import ReplayDrawing
from marl_bgs_clients.two_bridge import pictures
from marl_bgs_eval import episode_replays
from marl_bgs_eval.array_zip import Replay
from marl_bgs_eval.two_bridge import legend


class BridgeDrawing(ReplayDrawing):
    """Two-Bridge: the whole state only (no agent views), the 64 x 64 field at 8 pixels a
    unit with its title above and status line below."""

    def __init__(self) -> None:
        self._last: tuple[Replay, Any, tuple[int, int]] | None = None  # history and size

    def _memo(self, replay: Replay) -> tuple[Any, tuple[int, int]]:
        """The last replay's states and facts, and its picture's size."""
        if self._last is None or self._last[0] is not replay:
            history = episode_replays.history(replay)
            height, width, _ = pictures.titled(*pictures.at_tick(replay, 0, history)).shape
            self._last = (replay, history, (width, height))
        return self._last[1:]

    def _at(self, replay: Replay, tick: int) -> tuple[Any, Any]:
        return pictures.at_tick(replay, tick, self._memo(replay)[0])

    def size(self, replay: Replay) -> tuple[int, int]:
        return self._memo(replay)[1]

    def draw(
        self, surface: pygame.Surface, replay: Replay, tick: int, observer: int | None = None,
        selected: int | None = None,
    ) -> None:  # fmt: skip
        del observer, selected
        system = str(replay.header.get("system", ""))
        surface.blit(surface_of(pictures.titled(*self._at(replay, tick), system)), (0, 0))

    def panel(
        self, surface: pygame.Surface, replay: Replay, tick: int, selected: int | None,
        memo: dict[str, Any],
    ) -> None:  # fmt: skip
        del selected, memo
        surface.fill((255, 255, 255))
        h = replay.header
        title, status = pictures.title_lines(self._at(replay, tick)[0], str(h["system"]))
        lines = [
            title, f"game {h['game']} of key {h['key']}", f"settings: {h['settings']}",
            f"{h['ticks']} steps", "", *wrap(status, 48), "", *wrap(legend.RULE, 48),
        ]  # fmt: skip
        text(surface, (10, 8), lines)

    def key(self, width: int) -> pygame.Surface:
        return pictures.key_band(width)


DRAWING = BridgeDrawing()
