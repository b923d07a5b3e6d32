"""A replay page's key (a mode's `WebParts.key` and `WebParts.key_css`) made from the groups of
its legend's entries (`marl_bgs_eval.picture_key.Entry`) that its canvas draws. Each entry gets a
CSS class, `key-<group>-<k>`, whose colour `css` sets (served as /key.css: the pages allow no
inline style); the style sheet shapes a sample by its group (`teams` a disc, `rings` and `dead` a
ring, `health` a bar, any other a square)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from marl_bgs_eval.picture_key import Entry
from marl_bgs_tournament.web.heatmap import hex_colour

Groups = Mapping[str, Sequence[Entry]]  # group -> its entries, in the page's order


def entries(groups: Groups) -> list[dict[str, Any]]:
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
        for g, group in groups.items()
        for k, e in enumerate(group)
    ]


def css(groups: Groups) -> str:
    """The samples' colours: `.key-<group>-<k>` per entry that has one."""
    lines = [
        f".key-{g}-{k} {{ --key: {hex_colour(e.colour)}; }}"
        for g, group in groups.items()
        for k, e in enumerate(group)
        if e.colour is not None
    ]
    return "\n".join(lines) + "\n"
