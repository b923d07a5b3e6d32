"""The Jinja2 templates (package data in `templates/`) and the filters the pages format with."""

from __future__ import annotations

import math
from pathlib import Path
from urllib.parse import quote

from starlette.templating import Jinja2Templates

from marl_bgs_tournament.web import heatmap

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
DASH = "—"


def elo(value: float | None) -> str:
    """An Elo to the nearest point: 1523."""
    return DASH if value is None else f"{value:.0f}"


def percent(value: float | None) -> str:
    """A share as a percentage: 63.2%."""
    return DASH if value is None else f"{100 * value:.1f}%"


def score(value: float | None) -> str:
    """A score per game: 0.63."""
    return DASH if value is None or not math.isfinite(value) else f"{value:.2f}"


def measure(value: float | None) -> str:
    """A measure's value with four significant digits."""
    return DASH if value is None else f"{value:.4g}"


def heat(value: float | None) -> str:
    """The heat map class of a score."""
    k = heatmap.step(value)
    return "heat-none" if k is None else f"heat-{k}"


def urlname(name: str) -> str:
    """A System name as one URL path segment (every special character escaped)."""
    return quote(name, safe="")


def templates() -> Jinja2Templates:
    """The templates, autoescaped, with the filters above."""
    t = Jinja2Templates(directory=TEMPLATES)
    filters = {"elo": elo, "percent": percent, "score": score, "measure": measure,
               "heat": heat, "urlname": urlname}  # fmt: skip
    t.env.filters.update(filters)
    return t
