"""The key on the clients' pictures: every entry of `marl_bgs_eval.tdm.legend` (team colours, class
letters, status badges, rings, Red Zones, marks) with a small sample of its symbol drawn as the
renderer draws it, wrapped into a strip of a given width.

    strip = key_strip(812)          # a Surface: the key in lines of at most 812 pixels
    frame = with_key(picture)       # the picture with the key below it (GIF and MP4 frames)

The Replay Viewer and the BattleClient lay the same strip over the field's foot when L is
pressed; animations always carry it below the picture.
"""

from __future__ import annotations

import math

import pygame

from marl_bgs_clients.canvas import TEXT, font
from marl_bgs_clients.tdm.render import draw_badge
from marl_bgs_eval.picture_key import Colour, Entry
from marl_bgs_eval.tdm.legend import GROUPS

LINES = (("teams", "classes"), ("badges",), ("rings", "zones"), ("health", "marks"))  # per line
PAPER: Colour = (255, 255, 255)
CLASS_DISC: Colour = (95, 95, 95)  # a class letter on a neutral disc: the team is its colour
GLYPH, GAP, SPACE, ROW, PAD = 16, 5, 16, 19, 6
TEXT_SIZE = 17


def _dashed_circle(surface: pygame.Surface, centre: tuple[int, int], r: int) -> None:
    box = pygame.Rect(centre[0] - r, centre[1] - r, 2 * r, 2 * r)
    for k in range(0, 12, 2):
        pygame.draw.arc(surface, TEXT, box, math.pi * k / 6, math.pi * (k + 1) / 6, width=1)


def _glyph(surface: pygame.Surface, group: str, e: Entry, box: pygame.Rect) -> None:
    """A sample of entry `e`'s symbol in `box`, drawn the renderer's way."""
    c, colour = box.center, e.colour or TEXT
    if group == "teams":
        pygame.draw.circle(surface, colour, c, box.height // 2)
    elif group == "classes":
        pygame.draw.circle(surface, CLASS_DISC, c, box.height // 2)
        letter = font(box.height + 2).render(e.symbol, True, PAPER)
        surface.blit(letter, letter.get_rect(center=c))
    elif group == "badges":
        draw_badge(surface, box.inflate(-2, -2), e.symbol, colour)
        pygame.draw.rect(surface, TEXT, box.inflate(-2, -2), width=1)  # a pale badge on paper
    elif group == "rings" and e.colour is not None:
        pygame.draw.circle(surface, colour, c, box.height // 2, width=3)
    elif group == "rings":
        _dashed_circle(surface, c, box.height // 2)
    elif group == "zones":
        pygame.draw.rect(surface, colour, box)
    elif group == "health":
        pygame.draw.rect(surface, colour, pygame.Rect(box.x, c[1] - 2, box.width, 5))
    elif e.symbol == "number":
        digit = font(box.height + 2).render("4", True, TEXT)
        surface.blit(digit, digit.get_rect(center=c))
    elif e.symbol == "arrow":
        y = c[1]
        pygame.draw.line(surface, colour, (box.x, y), (box.right - 5, y), 3)
        tips = [(box.right, y), (box.right - 6, y - 4), (box.right - 6, y + 4)]
        pygame.draw.polygon(surface, colour, tips)
    else:  # a dot
        pygame.draw.circle(surface, colour, c, box.height // 3)


def placed(width: int) -> tuple[list[tuple[int, int, str, Entry]], int]:
    """Where each entry goes in a strip `width` wide: (x, y, group, entry), and the height."""
    out, y = [], PAD
    for groups in LINES:
        x = PAD
        for group in groups:
            for e in GROUPS[group]:
                w = GLYPH + GAP + font(TEXT_SIZE).size(e.meaning)[0]
                if x > PAD and x + w > width - PAD:
                    x, y = PAD, y + ROW
                out.append((x, y, group, e))
                x += w + SPACE
        y += ROW
    height = y + PAD - (ROW - GLYPH)
    return out, height + height % 2  # even: an even picture stays even (H.264's blocks)


def key_strip(width: int) -> pygame.Surface:
    """The whole key on white, lines wrapped to `width` pixels."""
    entries, height = placed(width)
    strip = pygame.Surface((width, height))
    strip.fill(PAPER)
    pygame.draw.line(strip, TEXT, (0, 0), (width, 0))
    for x, y, group, e in entries:
        _glyph(strip, group, e, pygame.Rect(x, y, GLYPH, GLYPH))
        text = font(TEXT_SIZE).render(e.meaning, False, TEXT)
        strip.blit(text, text.get_rect(midleft=(x + GLYPH + GAP, y + GLYPH // 2)))
    return strip


def with_key(picture: pygame.Surface) -> pygame.Surface:
    """`picture` with the key strip below it, as wide as the picture."""
    strip = key_strip(picture.get_width())
    out = pygame.Surface((picture.get_width(), picture.get_height() + strip.get_height()))
    out.blit(picture, (0, 0))
    out.blit(strip, (0, picture.get_height()))
    return out


def key_rect(area: pygame.Rect) -> pygame.Rect:
    """Where the key lies when laid over the foot of `area` (the field)."""
    height = key_strip(area.width).get_height()
    return pygame.Rect(area.x, area.bottom - height, area.width, height)
