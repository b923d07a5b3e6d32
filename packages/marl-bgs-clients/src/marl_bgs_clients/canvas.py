"""The shared canvas every mode's drawing uses: pygame surfaces drawn without a window, the
fonts, the text colours, lines of text, and a surface's pixels for image files and tests.

    surface = pygame.Surface((320, 200))
    y = text(surface, (10, 8), ["first line", "second"])   # returns the row below them
    image = pixels(surface)                                 # uint8 [200, 320, 3]
"""

from __future__ import annotations

import numpy as np
import pygame

Colour = tuple[int, int, int]
BACKGROUND: Colour = (246, 244, 238)
TEXT: Colour = (30, 30, 30)
SELECTED: Colour = (250, 210, 40)
MUTED: Colour = (110, 110, 110)
PROBLEM: Colour = (200, 30, 30)  # what cannot be shown, and why
LINE = 17  # the rows a line of text takes
_fonts: dict[int, pygame.font.Font] = {}


def font(size: int) -> pygame.font.Font:
    """pygame's default font at `size` pixels (cached; initialises pygame.font once)."""
    if size not in _fonts:
        if not pygame.font.get_init():
            pygame.font.init()
        _fonts[size] = pygame.font.Font(None, size)
    return _fonts[size]


def text(
    surface: pygame.Surface, at: tuple[int, int], lines: list[str], colour: Colour = TEXT,
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


def wrap(words_text: str, width: int) -> list[str]:
    """`words_text` cut into lines of at most `width` characters (at spaces)."""
    lines, line = [], ""
    for w in words_text.split():
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    return [*lines, line] if line else lines


def pixels(surface: pygame.Surface) -> np.ndarray:
    """The surface's RGB pixels as uint8 [height, width, 3] (for image files and tests)."""
    return np.ascontiguousarray(pygame.surfarray.array3d(surface).transpose(1, 0, 2))


def surface_of(image: np.ndarray) -> pygame.Surface:
    """A surface holding uint8 RGB pixels [height, width, 3] (the inverse of `pixels`)."""
    return pygame.surfarray.make_surface(np.ascontiguousarray(image.transpose(1, 0, 2)))
