"""The key's strip draws every entry of `marl_bgs_eval.tdm.legend`, and the viewer's heat maps name
their rows and columns (the L toggles and animation frames are tested with the viewer and the
client)."""

from __future__ import annotations

import numpy as np
import pygame
import pytest

from marl_bgs_clients.canvas import pixels
from marl_bgs_clients.tdm import panels
from marl_bgs_clients.tdm.drawing import CELL, LABEL, _matrix
from marl_bgs_clients.tdm.key import GLYPH, key_strip, placed
from marl_bgs_eval.tdm import legend


def _ink(image: np.ndarray) -> np.ndarray:
    """Pixels as dark as text (antialiased letters have some of TEXT's darkness)."""
    return image.astype(int).sum(axis=-1) < 3 * 110


def test_the_strip_draws_every_entry_of_the_key() -> None:
    entries, height = placed(812)
    assert [e for _, _, _, e in entries] == list(legend.key())
    strip = pixels(key_strip(812))
    assert strip.shape == (height, 812, 3)
    for x, y, _group, e in entries:
        assert x + GLYPH <= 812
        glyph = strip[y : y + GLYPH, x : x + GLYPH]
        if e.colour is not None:  # its colour is in its sample
            assert np.all(glyph == np.asarray(e.colour), axis=-1).any(), e
        words = strip[y : y + GLYPH, x + GLYPH : x + GLYPH + 30]
        assert _ink(words).sum() > 5, e  # its meaning is written
    assert placed(1242)[1] < height  # a wider strip needs fewer lines


@pytest.mark.parametrize(("side", "rows", "cols"), [("a", "a", "b"), ("b", "b", "a")])
def test_heat_maps_name_their_rows_and_columns(side, rows, cols) -> None:
    axes = panels.damage_axes(side)
    assert axes.rows == [f"{rows}_{k}" for k in range(5)]
    assert axes.cols == [f"{cols}_{k}" for k in range(5)]
    assert axes.title == f"damage dealt, {rows.upper()} to {cols.upper()}"
    surface = pygame.Surface((210, 160))
    surface.fill((255, 255, 255))
    bottom = _matrix(surface, (0, 0), np.zeros((5, 5)), side)
    image = pixels(surface)
    ink = _ink(image)
    width, height = CELL
    first = bottom - 5 * (height + 2)
    for i in range(5):  # each row's name left of its cells
        assert ink[first + i * (height + 2) : first + (i + 1) * (height + 2), :LABEL].any(), i
    for j in range(5):  # each column's name above its cells
        x = LABEL + j * width
        assert ink[first - height - 2 : first, x : x + width].any(), j
