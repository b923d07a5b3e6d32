"""One line of a picture's key, the type every mode's legend (`tdm.legend`, `two_bridge.legend`)
builds its key from, so the packages that draw a key (the clients' pictures, the tournament's web
replay page) read any mode's the same way."""

from __future__ import annotations

from dataclasses import dataclass

Colour = tuple[int, int, int]


@dataclass(frozen=True)
class Entry:
    """One line of the key: the `symbol` as drawn (a letter, or the sample's short name), what it
    means (`meaning`) and its `colour` (None: drawn in another entry's colour or as plain text)."""

    symbol: str
    meaning: str
    colour: Colour | None = None
