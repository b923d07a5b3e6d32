"""Team Deathmatch's replay drawing (`DRAWING`): a tick in the Oracle view or any agent's POV
(`replay_scene`, drawn by `marl_bgs_clients.tdm.render`), and the viewer's analytical panel:
metrics up to the tick, who did what to whom, what the selected agent saw and chose."""

from __future__ import annotations

from typing import Any

import numpy as np
import pygame

from marl_bgs import Facts
from marl_bgs_clients.canvas import MUTED, TEXT, font, text
from marl_bgs_clients.modes import ReplayDrawing
from marl_bgs_clients.tdm import panels
from marl_bgs_clients.tdm.key import key_strip
from marl_bgs_clients.tdm.render import Layout, draw, slot_name
from marl_bgs_clients.tdm.scene import Scene, oracle_scene, pov_scene
from marl_bgs_eval.array_zip import Replay
from marl_bgs_eval.tdm import replays
from marl_bgs_eval.tdm.legend import TEAM_COLOURS

CELL, LABEL = (34, 16), 30  # a heat map cell's (width, height); the width of its row names


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


class TDMDrawing(ReplayDrawing):
    """Team Deathmatch on the 20 x 10 field (`layout`), ten agents to look through."""

    agents = 10

    def __init__(self, layout: Layout | None = None) -> None:
        self.layout = layout or Layout()

    def size(self, replay: Replay) -> tuple[int, int]:
        del replay
        return self.layout.size

    def draw(
        self, surface: pygame.Surface, replay: Replay, tick: int, observer: int | None = None,
        selected: int | None = None,
    ) -> None:  # fmt: skip
        draw(surface, replay_scene(replay, tick, observer), self.layout, selected)

    def slot_name(self, slot: int) -> str:
        return slot_name(slot)

    def unit_at(
        self, replay: Replay, tick: int, observer: int | None, pos: tuple[int, int]
    ) -> int | None:
        return replay_scene(replay, tick, observer).unit_at(*self.layout.to_world(*pos))

    def panel(
        self, surface: pygame.Surface, replay: Replay, tick: int, selected: int | None,
        memo: dict[str, Any],
    ) -> None:  # fmt: skip
        surface.fill((255, 255, 255))
        y = text(surface, (10, 8), panels.game_lines(replay))
        if "metrics" not in memo:  # evaluation's full metrics summed up to each tick
            memo["metrics"] = replays.metrics(replay, "full")
        row = panels.upto(memo["metrics"], tick)
        y = text(surface, (10, y + 6), [f"up to tick {tick}:        A        B"], bold=True)
        lines = [f"{label:<18}{a:>8.0f} {b:>8.0f}" for label, a, b in panels.team_rows(row)]
        y = text(surface, (10, y), lines, mono=True)
        y = max(_matrix(surface, (10 + k * 210, y + 6), panels.damage_matrix(row, side), side)
                for k, side in enumerate("ab"))  # fmt: skip
        if selected is not None:
            seen = seen_slots(replay, tick, selected)
            text(surface, (10, y + 8), panels.agent_lines(replay, tick, selected, seen))

    def key(self, width: int) -> pygame.Surface:
        return key_strip(width)


def seen_slots(replay: Replay, tick: int, slot: int) -> list[int]:
    """The slots agent `slot`'s view held at state `tick` (itself included)."""
    swap = replay.header["a_spawn"] == "right"
    scene = pov_scene(replays.view(replay, slot, tick), slot, swap)
    return [u.slot for u in scene.units]


def _matrix(surface: pygame.Surface, at: tuple[int, int], m: np.ndarray, side: str) -> int:
    """A 5 x 5 heat map of damage dealt by `side`'s agents (rows) to the other team's (columns),
    with its title and every row and column named; returns the row below it."""
    x, y = at
    axes = panels.damage_axes(side)
    y = text(surface, (x, y), [axes.title])
    (cell, height), label = CELL, LABEL
    small = font(14)
    corner = small.render(axes.corner, True, MUTED)
    surface.blit(corner, corner.get_rect(midleft=(x, y + height // 2)))
    for j, name in enumerate(axes.cols):
        label_text = small.render(name, True, TEXT)
        surface.blit(
            label_text,
            label_text.get_rect(center=(x + label + j * cell + cell // 2, y + height // 2)),
        )
    y += height + 2
    top = float(m.max()) or 1.0
    colour = np.asarray(TEAM_COLOURS[0 if side == "a" else 1], float)
    for i, name in enumerate(axes.rows):
        label_text = small.render(name, True, TEXT)
        surface.blit(
            label_text, label_text.get_rect(midleft=(x, y + i * (height + 2) + height // 2))
        )
        for j in range(5):
            shade = (235 - (235 - colour) * m[i, j] / top).astype(int)
            rect = pygame.Rect(x + label + j * cell, y + i * (height + 2), cell - 2, height)
            pygame.draw.rect(surface, tuple(int(c) for c in shade), rect)
            if m[i, j]:
                value = small.render(f"{m[i, j]:.0f}", True, TEXT)
                surface.blit(value, value.get_rect(center=rect.center))
    return y + 5 * (height + 2)


DRAWING = TDMDrawing()
