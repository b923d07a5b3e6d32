"""Team Deathmatch's replay-page key (its `WebParts.key`): the groups of `marl_bgs_eval.tdm.legend`
the web canvas draws, each entry with a CSS class whose colour comes from the legend (`css`,
served as /key.css: the pages allow no inline style), and the colours the canvas draws with
(`canvas_colours`, sent in the replay's JSON). The legend lives in eval because the clients draw
the same key and the tournament does not depend on the clients.
"""

from __future__ import annotations

from typing import Any

from marl_bgs_eval.tdm import legend

GROUPS = ("teams", "classes", "badges", "rings", "zones", "health", "dead")  # what replay.js draws


def _hex(c: legend.Colour) -> str:
    return "#{:02x}{:02x}{:02x}".format(*c)


def entries() -> list[dict[str, Any]]:
    """Every entry the page shows: group, symbol, meaning, its CSS class and whether it has no
    colour of its own (`plain`)."""
    return [
        {
            "group": g,
            "symbol": e.symbol,
            "meaning": e.meaning,
            "css": f"key-{g}-{k}",
            "plain": e.colour is None,
        }
        for g in GROUPS
        for k, e in enumerate(legend.key(g))
    ]


def css() -> str:
    """The samples' colours: `.key-<group>-<k>` per entry that has one."""
    lines = []
    for g in GROUPS:
        for k, e in enumerate(legend.key(g)):
            if e.colour is not None:
                lines.append(f".key-{g}-{k} {{ --key: {_hex(e.colour)}; }}")
    return "\n".join(lines) + "\n"


def canvas_colours() -> dict[str, Any]:
    """The legend's colours replay.js draws with, as #rrggbb."""
    return {
        "team": [_hex(c) for c in legend.TEAM_COLOURS],
        "redZone": _hex(legend.RED_ZONE),
        "health": _hex(legend.HEALTH),
        "shield": _hex(legend.SHIELD),
        "dead": _hex(legend.DEAD),
        "badges": {b.symbol: _hex(b.colour or (0, 0, 0)) for b in legend.BADGES.values()},
    }
