"""Team Deathmatch's part of the browser viewer's JSON (`PARTS`, see `web.replay_json`): the
field, its obstacles, every tick's units (slot, team, class letter, position, health of max
health, alive, status badges, spawn shield) and score, the final result in words and the key's
colours (`marl_bgs_eval.tdm.legend`).

The obstacles come from the engine's own table of the shipped map the header names (checked
against the recorded map hash), and only a custom map's come from the file's obstacle arrays.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import marl_bgs
from marl_bgs.core.arena import BODY_RADIUS, MAP_HEIGHT, MAP_WIDTH, OBSTACLE_PILLAR
from marl_bgs.tdm import classes as C
from marl_bgs.tdm.maps import load as load_map
from marl_bgs.tdm.tables import SLOT_TEAM
from marl_bgs_eval.array_zip import Replay
from marl_bgs_eval.tdm.legend import BADGES, result_text
from marl_bgs_tournament.tdm import replay_key
from marl_bgs_tournament.web.files import SeasonDataError
from marl_bgs_tournament.web.modes import WebParts

LETTERS = {v: k for k, v in C.CLASS_LETTERS.items()}
AURA_CLASSES = (LETTERS[C.MAGE], LETTERS[C.WARRIOR])  # the classes whose aura ring is drawn
HEADER_KEYS = (
    "game", "system_a", "system_b", "map", "map_name", "result", "points_a", "points_b",
    "ticks", "tick_limit", "winning_score", "a_spawn", "roster_a", "roster_b",
)  # fmt: skip


def _shipped_obstacles(map_id: int, map_hash: str) -> list[dict[str, Any]] | None:
    """The obstacles of shipped map `map_id` from the engine's table, if its hash matches."""
    if map_id not in marl_bgs.maps.all_ids():
        return None
    spec = load_map(map_id)
    if spec.content_hash != map_hash:
        return None
    return [
        {"kind": "pillar", "x": o["x"], "y": o["y"], "radius": o["radius"]}
        if o["kind"] == "pillar"
        else {"kind": "wall", "x": o["x"], "y": o["y"], "width": o["width"],
              "height": o["height"], "theta": o.get("theta", 0.0)}
        for o in spec.obstacles
    ]  # fmt: skip


def _recorded_obstacles(arrays: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """The obstacles a custom map's replay recorded (finite, inside the field, or refused)."""
    out = []
    keys = ("kind", "active", "center", "size", "theta")
    kind, active, center, size, theta = (arrays[f"state.obstacles.{k}"] for k in keys)
    for k in range(kind.shape[0]):
        if not active[k] or kind[k] == 0:
            continue
        (x, y), (w, h), t = center[k].tolist(), size[k].tolist(), float(theta[k])
        values = (x, y, w, h, t)
        if not all(math.isfinite(v) for v in values) or not (
            0 <= x <= MAP_WIDTH and 0 <= y <= MAP_HEIGHT and 0 < w <= 20 and 0 < h <= 20
        ):
            raise SeasonDataError(f"replay: obstacle {k} lies outside the field")
        if int(kind[k]) == OBSTACLE_PILLAR:
            out.append({"kind": "pillar", "x": x, "y": y, "radius": w})
        else:
            out.append({"kind": "wall", "x": x, "y": y, "width": w, "height": h, "theta": t})
    return out


def frames(arrays: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """Every recorded state (the start, then after each tick) as units and score."""
    cls = arrays["state.units.class_id"]
    pos = np.round(arrays["state.units.pos"].astype(np.float64), 3)
    health = np.round(arrays["state.units.health"].astype(np.float64), 2)
    alive, ticks, score = arrays["state.units.alive"], arrays["state.tick"], arrays["state.score"]
    status = {b.symbol: arrays[f"state.units.{s}"] > 0 for s, b in BADGES.items()}
    shield = arrays["state.units.shield"] > 0
    out = []
    for t in range(cls.shape[0]):
        units = [
            {
                "slot": s, "team": int(SLOT_TEAM[s]), "class": LETTERS.get(int(cls[t, s]), "?"),
                "x": float(pos[t, s, 0]), "y": float(pos[t, s, 1]),
                "health": float(health[t, s]),
                "max_health": float(C.MAX_HEALTH[int(cls[t, s])]), "alive": bool(alive[t, s]),
                "badges": "".join(b for b, on in status.items() if on[t, s]),
                "shield": bool(shield[t, s]),
            }
            for s in range(cls.shape[1])
            if int(cls[t, s]) > 0
        ]  # fmt: skip
        out.append({"tick": int(ticks[t]), "score": [int(v) for v in score[t]], "units": units})
    return out


def replay_json(replay: Replay) -> dict[str, Any]:
    """The viewer's JSON of a loaded (already checked) Team Deathmatch replay."""
    h, arrays = replay.header, replay.arrays
    obstacles = _shipped_obstacles(int(h["map"]), str(h["map_hash"]))
    return {
        **{k: h[k] for k in HEADER_KEYS},
        "result_text": result_text(h),
        "status": f"{h['system_a']} (A, blue) vs {h['system_b']} (B, red), map {h['map_name']}: "
        f"{result_text(h)} in {h['ticks']} ticks",
        "width": MAP_WIDTH, "height": MAP_HEIGHT, "body_radius": BODY_RADIUS,
        "red_zone_depth": float(h["red_zone_depth"]),
        "aura_radius": C.AURA_RADIUS, "aura_classes": list(AURA_CLASSES),
        "colours": replay_key.canvas_colours(),
        "obstacles": obstacles if obstacles is not None else _recorded_obstacles(arrays),
        "frames": frames(arrays),
    }  # fmt: skip


PARTS = WebParts(replay_json=replay_json, key=replay_key.entries, key_css=replay_key.css)
