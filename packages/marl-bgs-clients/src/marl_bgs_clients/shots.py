"""The docs' screenshots and the README's animation, drawn from one recorded game.

    marl-bgs-clients screenshots --out docs/clients

The game: TDM-Alpha (A) vs TDM-Beta (B) on test map 47, seed 0, 60 ticks at most (`DEMO`). The
pictures: the Replay Viewer in the Oracle view and in an agent's POV at the same moment (paper
Figure S1), the BattleClient at a person's turn, and the whole game as an animated GIF.
"""

from __future__ import annotations

from pathlib import Path

from marl_bgs_clients.battle import BattleClient
from marl_bgs_clients.export import save_clip, save_frame
from marl_bgs_clients.render import pixels, render
from marl_bgs_clients.session import HumanGame
from marl_bgs_clients.viewer import ReplayViewer, replay_scene
from marl_bgs_clients.watch import play_one
from marl_bgs_eval.replays import Replay

DEMO = {"system_a": "tdm-alpha", "system_b": "tdm-beta", "map_ref": "47", "tick_limit": 60}
MOMENT = 30  # the tick the still pictures show
POV_SLOT = 7  # b_2, TDM-Beta's Hunter


def demo_replay() -> Replay:
    """The docs' game, played and recorded (the same every time)."""
    return play_one(**DEMO)


def game_gif(replay: Replay, path: Path, fps: float = 6.0) -> Path:
    """The game in the Oracle view, one frame a tick, field only (the README's animation)."""
    frames = [pixels(render(replay_scene(replay, t))) for t in range(replay.ticks + 1)]
    return save_clip(frames, path, fps)


def draw_all(out: Path) -> list[Path]:
    """Write every picture of docs/clients.md into `out`."""
    replay = demo_replay()
    viewer = ReplayViewer(replay, name="demo")
    viewer.jump(MOMENT)
    viewer.selected = 2
    written = [save_frame(pixels(viewer.frame()), out / "viewer-oracle.png")]
    viewer.observer = viewer.selected = POV_SLOT
    written.append(save_frame(pixels(viewer.frame()), out / "viewer-pov.png"))
    game = HumanGame(DEMO["system_a"], DEMO["system_b"], humans=[2], map_ref=47, tick_limit=60)
    client = BattleClient(game, out=out / "battle.replay.zip")
    for _ in range(6):  # walk the Hunter east a few ticks, then show its turn
        client.choose_move(3)
        client.commit()
    client.choose_move(5)
    written.append(save_frame(pixels(client.frame()), out / "battle-client.png"))
    written.append(game_gif(replay, out / "game.gif"))
    return written
