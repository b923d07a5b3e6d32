"""How fast the clients draw: scenes, the renderer, a Replay Viewer frame, GIF and MP4 export.

    SDL_VIDEODRIVER=dummy python benchmarks/clients_speed.py   # in a venv with marl-bgs-clients

Uses the docs' demo game (`marl_bgs_clients.tdm.shots.demo_replay`); prints milliseconds per call
(mean over every tick of the game) and seconds per export. Nothing here is a test.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

from marl_bgs_clients.tdm.drawing import replay_scene
from marl_bgs_clients.tdm.render import render
from marl_bgs_clients.tdm.shots import demo_replay
from marl_bgs_clients.viewer import ReplayViewer


def per_tick_ms(fn: Callable[[int], object], ticks: int) -> float:
    """Mean milliseconds of fn(t) over t = 0 .. ticks (after one warm-up call)."""
    fn(0)
    start = time.perf_counter()
    for t in range(ticks + 1):
        fn(t)
    return (time.perf_counter() - start) / (ticks + 1) * 1000


def main() -> None:
    replay = demo_replay()
    n = replay.ticks
    scene = replay_scene(replay, n // 2)
    viewer = ReplayViewer(replay)
    rows = {
        "Oracle scene (ms)": per_tick_ms(lambda t: replay_scene(replay, t), n),
        "POV scene (ms)": per_tick_ms(lambda t: replay_scene(replay, t, 7), n),
        "render a scene (ms)": per_tick_ms(lambda t: render(scene, selected=2), n),
        "Replay Viewer frame (ms)": per_tick_ms(lambda t: (viewer.jump(t), viewer.frame()), n),
    }
    with tempfile.TemporaryDirectory() as out:
        for suffix in (".gif", ".mp4"):
            start = time.perf_counter()
            viewer.export_clip(suffix, Path(out) / f"game{suffix}")
            rows[f"export {n + 1} frames as {suffix} (s)"] = time.perf_counter() - start
    for name, value in rows.items():
        print(f"{name:<36}{value:10.2f}")


if __name__ == "__main__":
    main()
