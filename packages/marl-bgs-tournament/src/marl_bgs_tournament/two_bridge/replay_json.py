"""Two-Bridge's part of the browser viewer's JSON (`PARTS`, see `web.replay_json`): the 64 x 64
field with its cliff as obstacles, the beacon and its capture radius as a mark, every step's
Marines (team A, blue) and enemies (team B, red) with their health, a caption per step (Marines
and enemies alive) and the colours of `marl_bgs_eval.two_bridge.legend` (`replay_key`, also the
page's key); the states come from the engine-verified episode replay."""

from __future__ import annotations

from typing import Any

import numpy as np

from marl_bgs.two_bridge import OUTCOMES
from marl_bgs.two_bridge import layout as lay
from marl_bgs_eval import episode_replays
from marl_bgs_eval.array_zip import Replay
from marl_bgs_tournament.two_bridge import replay_key
from marl_bgs_tournament.web.modes import WebParts

BODY_RADIUS = 0.6  # as the clients draw a Marine


def cliff() -> list[dict[str, Any]]:
    """The cells no one may walk on, as walls: one per run of such cells along a grid row."""
    out, cell = [], lay.CELL
    for r, row in enumerate(~lay.PATHABLE):
        edges = np.flatnonzero(np.diff(np.concatenate([[0], row.astype(np.int8), [0]])))
        for c0, c1 in zip(edges[::2], edges[1::2], strict=True):
            out.append({"kind": "wall", "x": float((c0 + c1) / 2 * cell),
                        "y": float((r + 0.5) * cell), "width": float((c1 - c0) * cell),
                        "height": float(cell), "theta": 0.0})  # fmt: skip
    return out


def _units(pos: np.ndarray, health: np.ndarray, team: int, first: int) -> list[dict[str, Any]]:
    return [
        {"slot": first + i, "team": team, "class": "", "x": round(float(p[0]), 3),
         "y": round(float(p[1]), 3), "health": round(float(v), 2),
         "max_health": float(lay.MARINE_HEALTH), "alive": bool(v > 0), "badges": "",
         "shield": False}
        for i, (p, v) in enumerate(zip(pos, health, strict=True))
    ]  # fmt: skip


def replay_json(replay: Replay) -> dict[str, Any]:
    """The viewer's JSON of a loaded (already checked) Two-Bridge episode replay."""
    states, _ = episode_replays.history(replay)
    h = replay.header
    friends, enemies = np.asarray(states.friend_health), np.asarray(states.enemy_health)
    limit = int(np.asarray(states.tick_limit)[0])
    frames = []
    for t in range(replay.ticks + 1):
        units = _units(np.asarray(states.friend_pos)[t], friends[t], 0, 0) + _units(
            np.asarray(states.enemy_pos)[t], enemies[t], 1, lay.NUM_FRIENDS
        )
        caption = (f"step {t} of {limit} · Marines alive {int((friends[t] > 0).sum())}/"
                   f"{friends.shape[1]} · enemies alive {int((enemies[t] > 0).sum())}/"
                   f"{enemies.shape[1]}")  # fmt: skip
        frames.append({"tick": t, "score": [0, 0], "caption": caption, "units": units})
    beacon = np.asarray(states.beacon)[0]
    return {
        "status": f"Two-Bridge {h['settings']}: {h['system']} (blue) against the built-in enemies "
        f"(red): {OUTCOMES[h['outcome']]} in {h['ticks']} steps",
        "width": lay.FIELD, "height": lay.FIELD, "body_radius": BODY_RADIUS,
        "red_zone_depth": 0.0, "aura_radius": 0.0, "aura_classes": [],
        "colours": replay_key.canvas_colours(), "obstacles": cliff(),
        "marks": [{"x": float(beacon[0]), "y": float(beacon[1]), "radius": lay.BEACON_RADIUS}],
        "frames": frames,
    }  # fmt: skip


PARTS = WebParts(replay_json=replay_json, key=replay_key.entries, key_css=replay_key.css)
