"""Two-Bridge's replay-page key (its `WebParts.key` and `WebParts.key_css`, see
`web.replay_key`): the groups of `marl_bgs_eval.two_bridge.legend` the web canvas draws (the
Marines, the dead, health, the beacon's ring, cliff and ground; not the clients' shots, spawn
regions or clock), and the colours the canvas draws with (`canvas_colours`, sent in the replay's
JSON), the same as the clients' pictures.
"""

from __future__ import annotations

from typing import Any

from marl_bgs_eval.two_bridge import legend
from marl_bgs_tournament.web import replay_key
from marl_bgs_tournament.web.heatmap import hex_colour

GROUPS = ("teams", "dead", "health", "rings", "ground")  # what replay.js draws


def _groups() -> replay_key.Groups:
    return {g: legend.GROUPS[g] for g in GROUPS}


def entries() -> list[dict[str, Any]]:
    """Every entry the page shows (`web.replay_key.entries`)."""
    return replay_key.entries(_groups())


def css() -> str:
    """The samples' colours (`web.replay_key.css`)."""
    return replay_key.css(_groups())


def canvas_colours() -> dict[str, Any]:
    """The legend's colours replay.js draws with, as #rrggbb: the Marines (team A) and enemies
    (team B), health on the dead's grey as the clients draw it, the ground as the field, the
    cliff as obstacles and the beacon's ring as the mark."""
    return {
        "team": [hex_colour(legend.FRIEND), hex_colour(legend.ENEMY)],
        "health": hex_colour(legend.HEALTH),
        "healthBack": hex_colour(legend.DEAD),
        "dead": hex_colour(legend.DEAD),
        "field": hex_colour(legend.GROUND),
        "obstacle": hex_colour(legend.CLIFF),
        "mark": hex_colour(legend.BEACON),
    }
