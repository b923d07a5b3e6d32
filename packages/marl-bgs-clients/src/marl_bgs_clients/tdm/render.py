"""Team Deathmatch's renderer: draws a `Scene` onto the shared canvas (`marl_bgs_clients.canvas`)
for the clients, the docs and the map atlas.

    surface = render(scene, selected=3)   # a new Surface; draw(surface, scene, ...) draws on one
    pygame.image.save(surface, "frame.png")

The picture: a top bar (score, clock, whose view), then the 20 x 10 field: Red Zones shaded, the
obstacles, spawn pads, the sight areas of the units whose eyes the view uses, aura rings of Mages
and Warriors, range circles of the selected unit (Basic solid, Ultimate dashed), every shown unit as
a disc in its team's colour with its class letter, a health bar above and status badges below (a
gold ring for the spawn shield), and last actions as arrows (red: damage, green: healing, thick:
Ultimate; grey: the move). `Layout.to_px` maps world points to pixels, so tests can read pixels at
known places. Works without a window: only `pygame.font` is initialised.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pygame

from marl_bgs.core.arena import BODY_RADIUS, MAP_HEIGHT, MAP_WIDTH
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.maps.symmetry import wall_corners
from marl_bgs.tdm.mode import AGENTS
from marl_bgs_clients.canvas import BACKGROUND, SELECTED, TEXT, font
from marl_bgs_clients.tdm.scene import NO_SLOT, Arrow, Obstacle, Scene, UnitDraw
from marl_bgs_eval.picture_key import Colour
from marl_bgs_eval.tdm.legend import (  # the key's colours: one owner for every picture
    BADGES,
    DAMAGE,
    HEAL,
    HEALTH,
    MOVE,
    PAD_COLOURS,
    RED_ZONE,
    SHIELD,
    TEAM_COLOURS,
)

FIELD: Colour = (236, 233, 224)
OBSTACLE: Colour = (59, 59, 59)
HEALTH_BACK: Colour = (70, 70, 70)
SIGHT_ALPHA = 38
LETTER = {v: k for k, v in C.CLASS_LETTERS.items()}
BAR_HEIGHT = 28


@dataclass(frozen=True)
class Layout:
    """Where the field lies in a picture: `scale` pixels per map unit, `top` rows above it."""

    scale: float = 40.0
    top: int = BAR_HEIGHT
    margin: int = 6

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the whole picture."""
        return (
            round(MAP_WIDTH * self.scale) + 2 * self.margin,
            round(MAP_HEIGHT * self.scale) + self.top + 2 * self.margin,
        )

    def to_px(self, x: float, y: float) -> tuple[int, int]:
        """The pixel (column, row) of world point (x, y); y grows upward in the world."""
        return (
            round(self.margin + x * self.scale),
            round(self.top + self.margin + (MAP_HEIGHT - y) * self.scale),
        )

    def to_world(self, col: int, row: int) -> tuple[float, float]:
        """The world point under pixel (col, row)."""
        x = (col - self.margin) / self.scale
        return x, MAP_HEIGHT - (row - self.top - self.margin) / self.scale

    def length(self, d: float) -> int:
        """A world distance in pixels."""
        return max(1, round(d * self.scale))

    def health_bar(self, unit: UnitDraw) -> pygame.Rect:
        """The full-health rectangle of a unit's health bar (the filled part is proportional)."""
        cx, cy = self.to_px(unit.x, unit.y)
        width, r = self.length(2 * BODY_RADIUS), self.length(BODY_RADIUS)
        return pygame.Rect(cx - width // 2, cy - r - 8, width, 5)


def render(
    scene: Scene, layout: Layout | None = None, selected: int | None = None,
    highlight: tuple[int, ...] = (),
) -> pygame.Surface:  # fmt: skip
    """A new surface with the scene drawn (see `draw`)."""
    layout = layout or Layout()
    surface = pygame.Surface(layout.size)
    draw(surface, scene, layout, selected, highlight)
    return surface


def draw(
    surface: pygame.Surface, scene: Scene, layout: Layout, selected: int | None = None,
    highlight: tuple[int, ...] = (),
) -> None:  # fmt: skip
    """Draw the scene. `selected`: the slot whose ranges are shown; `highlight`: slots ringed as
    choosable (the BattleClient's legal targets)."""
    surface.fill(BACKGROUND)
    _field(surface, scene, layout, selected)
    for u in scene.units:
        if u.alive and u.class_id in (C.MAGE, C.WARRIOR):
            _ring(surface, layout, u, C.AURA_RADIUS, TEAM_COLOURS[u.team], dashed=True)
    sel = scene.unit(selected) if selected is not None else None
    if sel is not None and sel.alive:
        _ring(surface, layout, sel, float(C.BASIC_RANGE[sel.class_id]), SELECTED)
        if C.ULT_RANGE[sel.class_id] > 0:
            _ring(surface, layout, sel, float(C.ULT_RANGE[sel.class_id]), SELECTED, dashed=True)
    for a in scene.arrows:
        _arrow(surface, scene, layout, a)
    living = [u for u in scene.units if u.alive]
    for u in living:
        _body(surface, layout, u, u.slot == selected, u.slot in highlight)
    for u in living:  # labels over every body, so a neighbour never hides a health bar
        _labels(surface, layout, u)
    _bar(surface, scene, layout)


def _field(surface: pygame.Surface, scene: Scene, layout: Layout, selected: int | None) -> None:
    x0, y0 = layout.to_px(0, MAP_HEIGHT)
    x1, y1 = layout.to_px(MAP_WIDTH, 0)
    pygame.draw.rect(surface, FIELD, pygame.Rect(x0, y0, x1 - x0, y1 - y0))
    depth = scene.red_zone_depth
    if depth > 0:
        w = layout.length(depth)
        pygame.draw.rect(surface, RED_ZONE, pygame.Rect(x0, y0, w, y1 - y0))
        pygame.draw.rect(surface, RED_ZONE, pygame.Rect(x1 - w, y0, w, y1 - y0))
    if scene.observer is not None:
        _sight(surface, scene, layout, scene.sighted)
    elif selected is not None:
        _sight(surface, scene, layout, (selected,))
    for team, x, y in scene.spawn_pads():
        pygame.draw.circle(
            surface, PAD_COLOURS[team], layout.to_px(x, y), layout.length(0.3 * BODY_RADIUS)
        )
    for o in scene.obstacles:
        _obstacle(surface, layout, o)
    pygame.draw.rect(surface, TEXT, pygame.Rect(x0, y0, x1 - x0, y1 - y0), width=1)


def _obstacle(surface: pygame.Surface, layout: Layout, o: Obstacle) -> None:
    if o.kind == 1:
        pygame.draw.circle(surface, OBSTACLE, layout.to_px(o.x, o.y), layout.length(o.width))
        return
    wall: dict[str, float | str] = {
        "x": o.x, "y": o.y, "width": o.width, "height": o.height, "theta": o.theta,
    }  # fmt: skip
    corners = wall_corners(wall)  # the engine's own wall geometry
    pygame.draw.polygon(surface, OBSTACLE, [layout.to_px(x, y) for x, y in corners])


def _sight(surface: pygame.Surface, scene: Scene, layout: Layout, sighted: tuple[int, ...]) -> None:
    """A translucent area over the sight radius of the units whose eyes the view uses (the POV
    team's; in the Oracle view the selected unit's)."""
    if not sighted:
        return
    overlay = pygame.Surface(surface.get_size(), pygame.SRCALPHA)
    for slot in sighted:
        u = scene.unit(slot)
        if u is None or not u.alive:
            continue
        radius = layout.length(float(C.SIGHT[u.class_id]))
        colour = (*TEAM_COLOURS[u.team], 255)
        pygame.draw.circle(overlay, colour, layout.to_px(u.x, u.y), radius)
    overlay.set_alpha(SIGHT_ALPHA)  # one alpha for the union, so overlaps are not darker
    surface.blit(overlay, (0, 0))


def _ring(
    surface: pygame.Surface, layout: Layout, u: UnitDraw, radius: float, colour: Colour,
    dashed: bool = False,
) -> None:  # fmt: skip
    centre, r = layout.to_px(u.x, u.y), layout.length(radius)
    if not dashed:
        pygame.draw.circle(surface, colour, centre, r, width=2)
        return
    steps = max(12, r // 4)
    for k in range(0, steps, 2):
        a0, a1 = 2 * math.pi * k / steps, 2 * math.pi * (k + 1) / steps
        rect = pygame.Rect(centre[0] - r, centre[1] - r, 2 * r, 2 * r)
        pygame.draw.arc(surface, colour, rect, a0, a1, width=1)


def _body(
    surface: pygame.Surface, layout: Layout, u: UnitDraw, selected: bool, highlighted: bool
) -> None:
    centre, r = layout.to_px(u.x, u.y), layout.length(BODY_RADIUS)
    if highlighted:
        pygame.draw.circle(surface, SELECTED, centre, r + 6, width=3)
    if u.statuses.get("shield"):
        pygame.draw.circle(surface, SHIELD, centre, r + 3, width=3)
    pygame.draw.circle(surface, TEAM_COLOURS[u.team], centre, r)
    pygame.draw.circle(surface, SELECTED if selected else (255, 255, 255), centre, r, width=2)
    letter = font(max(12, r + 4)).render(LETTER.get(u.class_id, "?"), True, (255, 255, 255))
    surface.blit(letter, letter.get_rect(center=centre))


def _labels(surface: pygame.Surface, layout: Layout, u: UnitDraw) -> None:
    """A unit's health bar, status badges and Ultimate cooldown."""
    centre, r = layout.to_px(u.x, u.y), layout.length(BODY_RADIUS)
    bar = layout.health_bar(u)
    pygame.draw.rect(surface, HEALTH_BACK, bar)
    filled = round(bar.width * max(0.0, min(1.0, u.health / max(u.max_health, 1e-6))))
    if filled:
        pygame.draw.rect(surface, HEALTH, pygame.Rect(bar.x, bar.y, filled, bar.height))
    badges = [BADGES[s] for s in BADGES if s in u.statuses]
    size = max(9, layout.length(0.28))
    x = centre[0] - len(badges) * size // 2
    for badge in badges:
        draw_badge(surface, pygame.Rect(x, centre[1] + r + 2, size, size), badge.symbol,
                   badge.colour or TEXT)  # fmt: skip
        x += size
    if u.cooldown > 0 and u.class_id:
        cd = font(14).render(str(u.cooldown), True, TEXT)
        surface.blit(cd, cd.get_rect(midleft=(centre[0] + r + 2, centre[1] - r // 2)))


def draw_badge(surface: pygame.Surface, box: pygame.Rect, letter: str, colour: Colour) -> None:
    """A status badge: its letter on a square of its colour."""
    pygame.draw.rect(surface, colour, box)
    label = font(box.height + 2).render(letter, True, TEXT)
    surface.blit(label, label.get_rect(center=box.center))


def _arrow(surface: pygame.Surface, scene: Scene, layout: Layout, a: Arrow) -> None:
    src = scene.unit(a.actor)
    if src is None:
        return
    start = np.asarray(layout.to_px(src.x, src.y), float)
    if a.kind == "move":
        end = start + np.asarray((a.dx, -a.dy)) * layout.length(0.9)
        _line_with_head(surface, MOVE, start, end, 2)
        return
    dst = scene.unit(a.target) if a.target != NO_SLOT else None
    if dst is None:
        return
    healing = src.team == dst.team
    colour = HEAL if healing else DAMAGE
    width = 4 if a.kind == "ultimate" else 2
    if a.target == a.actor:  # a self-cast: a burst of short spokes
        for k in range(8):
            ang = math.pi * k / 4
            d = np.asarray((math.cos(ang), math.sin(ang)))
            r = layout.length(BODY_RADIUS)
            pygame.draw.line(
                surface, colour, _pt(start + d * (r + 2)), _pt(start + d * (r + 8)), width
            )
        return
    end = np.asarray(layout.to_px(dst.x, dst.y), float)
    d = end - start
    norm = float(np.hypot(*d))
    if norm < 1.0:
        return
    d /= norm
    gap = min(layout.length(BODY_RADIUS), norm / 3)  # bodies in contact still get an arrow
    _line_with_head(surface, colour, start + d * gap, end - d * gap, width)
    if a.amount:
        text = font(15).render(f"{abs(a.amount):.0f}", True, colour)
        surface.blit(text, text.get_rect(center=tuple((start + end) / 2 + np.asarray((0, -9)))))


def _line_with_head(
    surface: pygame.Surface, colour: Colour, start: np.ndarray, end: np.ndarray, width: int
) -> None:
    pygame.draw.line(surface, colour, _pt(start), _pt(end), width)
    d = end - start
    norm = float(np.hypot(*d)) or 1.0
    d /= norm
    side = np.asarray((-d[1], d[0]))
    head = 5 + 2 * width
    back = end - d * head
    tips = (end, back + side * head / 2, back - side * head / 2)
    pygame.draw.polygon(surface, colour, [_pt(p) for p in tips])


def _pt(a: np.ndarray) -> tuple[float, float]:
    return float(a[0]), float(a[1])


def caption_text(scene: Scene) -> str:
    """The top bar's text: score, clock and whose view it is."""
    a, b = scene.score
    who = "Oracle view" if scene.observer is None else f"POV of {slot_name(scene.observer)}"
    sides = "A left" if scene.a_left else "A right"
    return (
        f"A {a} : {b} B  (to {scene.winning_score})   tick {scene.tick}/{scene.tick_limit}   "
        f"{who}   {sides}   {scene.caption}"
    ).rstrip()


def slot_name(slot: int) -> str:
    """`a_0` .. `a_4`, `b_0` .. `b_4`: the engine's agent names (`marl_bgs.tdm.mode.AGENTS`)."""
    return AGENTS[slot]


def _bar(surface: pygame.Surface, scene: Scene, layout: Layout) -> None:
    pygame.draw.rect(surface, (255, 255, 255), pygame.Rect(0, 0, surface.get_width(), layout.top))
    text = font(20).render(caption_text(scene), True, TEXT)
    surface.blit(text, (layout.margin, (layout.top - text.get_height()) // 2))
    for team, x in ((0, surface.get_width() - 44), (1, surface.get_width() - 22)):
        pygame.draw.rect(surface, TEAM_COLOURS[team], pygame.Rect(x, 6, 16, layout.top - 12))
