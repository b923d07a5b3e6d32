"""The matchup heat map's colours: a score in [0, 1] falls in one of eleven steps, from red (team
A lost every game) through pale grey (even) to blue (team A won every game). The style sheet
is made from the same table (`css`), so the page and its tests agree on every colour."""

from __future__ import annotations

import math

Colour = tuple[int, int, int]
LOW: Colour = (202, 48, 42)
MID: Colour = (238, 238, 232)
HIGH: Colour = (36, 98, 196)
STEPS = 11
EMPTY: Colour = (200, 200, 200)  # no games (the diagonal)


def _mix(a: Colour, b: Colour, t: float) -> Colour:
    r, g, b_ = (round(x + (y - x) * t) for x, y in zip(a, b, strict=True))
    return (r, g, b_)


PALETTE: tuple[Colour, ...] = tuple(
    _mix(LOW, MID, k / 5) if k <= 5 else _mix(MID, HIGH, (k - 5) / 5) for k in range(STEPS)
)


def step(score: float | None) -> int | None:
    """The palette step of a score (None for no games)."""
    if score is None or not math.isfinite(score):
        return None
    return min(STEPS - 1, max(0, round(score * (STEPS - 1))))


def colour(score: float | None) -> Colour:
    """The cell colour of a score."""
    k = step(score)
    return EMPTY if k is None else PALETTE[k]


def hex_colour(c: Colour) -> str:
    """#rrggbb."""
    return "#{:02x}{:02x}{:02x}".format(*c)


def css() -> str:
    """The style sheet of the heat map's cells: `.heat-0` ... `.heat-10` and `.heat-none`."""
    lines = [f".heat-none {{ background: {hex_colour(EMPTY)}; }}"]
    for k, c in enumerate(PALETTE):
        ink = "#ffffff" if k <= 2 or k >= STEPS - 3 else "#1e1e1e"
        lines.append(f".heat-{k} {{ background: {hex_colour(c)}; color: {ink}; }}")
    return "\n".join(lines) + "\n"
