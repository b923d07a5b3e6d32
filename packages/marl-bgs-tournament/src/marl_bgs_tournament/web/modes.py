"""The web viewer's per-mode parts, by versioned mode id: one `WebParts` per mode, registered
through the entry-point group `marl_bgs_tournament.modes` (entry name: the mode's id or alias;
value: "module:PARTS") or with `PARTS.register(mode, parts)`. Generic code
(`web.replay_json`) asks `PARTS.get(mode)` and never imports a mode by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from marl_bgs.core.kits import PartRegistry
from marl_bgs_eval.array_zip import Replay


@dataclass(frozen=True, eq=False)
class WebParts:
    """What the leaderboard's browser viewer needs of a mode. `replay_json(replay)`: the JSON
    the canvas draws (`static/replay.js`): `width`, `height` (world units), `body_radius`,
    `obstacles`, `status` (one line: who played, how it ended) and `frames` (each tick's
    `units` and `score` or `caption`), plus what the mode's drawing adds. `key()`: the replay
    page's key entries (`group`, `symbol`, `meaning`, `css`, `plain`), `key_css()` their sample
    colours (served as /key.css); a mode without a key of its own has none."""

    replay_json: Callable[[Replay], dict[str, Any]]
    key: Callable[[], list[dict[str, Any]]] = list
    key_css: Callable[[], str] = str


PARTS: PartRegistry[WebParts] = PartRegistry("marl_bgs_tournament.modes", "a browser replay part")
