"""Team Deathmatch's replay-page key (its `WebParts.key` and `WebParts.key_css`, see
`web.replay_key`): the groups of `marl_bgs_eval.tdm.legend` the web canvas draws, and the colours
the canvas draws with (`canvas_colours`, sent in the replay's JSON). The legend lives in eval
because the clients draw the same key and the tournament does not depend on the clients.
"""

from __future__ import annotations

from typing import Any

from marl_bgs_eval.tdm import legend
from marl_bgs_tournament.web import replay_key
from marl_bgs_tournament.web.heatmap import hex_colour

GROUPS = ("teams", "classes", "badges", "rings", "zones", "health", "dead")  # what replay.js draws


def _groups() -> replay_key.Groups:
    return {g: legend.key(g) for g in GROUPS}


def entries() -> list[dict[str, Any]]:
    """Every entry the page shows (`web.replay_key.entries`)."""
    return replay_key.entries(_groups())


def css() -> str:
    """The samples' colours (`web.replay_key.css`)."""
    return replay_key.css(_groups())


def canvas_colours() -> dict[str, Any]:
    """The legend's colours replay.js draws with, as #rrggbb."""
    return {
        "team": [hex_colour(c) for c in legend.TEAM_COLOURS],
        "redZone": hex_colour(legend.RED_ZONE),
        "health": hex_colour(legend.HEALTH),
        "shield": hex_colour(legend.SHIELD),
        "dead": hex_colour(legend.DEAD),
        "badges": {b.symbol: hex_colour(b.colour or (0, 0, 0)) for b in legend.BADGES.values()},
    }
