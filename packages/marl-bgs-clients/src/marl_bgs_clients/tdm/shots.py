"""The docs' screenshots and the README's animation, drawn from one recorded game.

    marl-bgs-clients screenshots --out docs/clients

The game: TDM-Alpha (A) vs TDM-Beta (B) on test map 47, seed 0, 60 ticks at most (`DEMO`). The
pictures: the Replay Viewer in the Oracle view and in an agent's POV at the same moment (paper
Figure S1), the BattleClient at a person's turn, and the whole game as an animated GIF.
"""

from __future__ import annotations

from pathlib import Path

from marl_bgs.tdm.tables import REL_TO_ABS
from marl_bgs_clients.canvas import pixels
from marl_bgs_clients.export import save_clip, save_frame
from marl_bgs_clients.tdm.battle import BattleClient
from marl_bgs_clients.tdm.drawing import replay_scene
from marl_bgs_clients.tdm.key import with_key
from marl_bgs_clients.tdm.render import render
from marl_bgs_clients.tdm.session import replay_game
from marl_bgs_clients.tdm.watch import play_one
from marl_bgs_clients.viewer import ReplayViewer
from marl_bgs_eval.array_zip import Replay

DEMO = {"system_a": "tdm-alpha", "system_b": "tdm-beta", "map_ref": 47, "tick_limit": 60}
MOMENT = 46  # the tick the still pictures show: a_2, TDM-Alpha's Hunter, has a target in range
HUNTER = 2
POV_SLOT = 7  # b_2, TDM-Beta's Hunter


def demo_replay() -> Replay:
    """The docs' game, played and recorded (the same every time)."""
    return play_one(**DEMO)


def game_gif(replay: Replay, path: Path, fps: float = 6.0) -> Path:
    """The game in the Oracle view, one frame a tick, the field and the key (the README's
    animation)."""
    frames = [pixels(with_key(render(replay_scene(replay, t)))) for t in range(replay.ticks + 1)]
    return save_clip(frames, path, fps)


def follow(client: BattleClient, replay: Replay, ticks: int) -> None:
    """Make the current person's agent choose, through the client, what the engine accepted
    from the replay's System for it, for `ticks` ticks (the client's game must be the replay's
    game; the client's only person)."""
    slot = client.current
    for t in range(ticks):
        move, rel, ult = (int(a) for a in replay.arrays["facts.accepted"][t, slot])
        client.choose_move(client.own_move(slot, move))  # mirroring is its own inverse
        if rel:
            client.choose_target(int(REL_TO_ABS[slot, rel]), bool(ult))
        client.ult_mode = bool(ult) and not rel  # an untargeted Ultimate is cast on commit
        client.commit()


def draw_all(out: Path) -> list[Path]:
    """Write every picture of docs/clients.md into `out`."""
    replay = demo_replay()
    viewer = ReplayViewer(replay, name="demo")
    viewer.jump(MOMENT)
    viewer.selected = HUNTER
    written = [save_frame(pixels(viewer.frame()), out / "viewer-oracle.png")]
    viewer.observer = viewer.selected = POV_SLOT
    written.append(save_frame(pixels(viewer.frame()), out / "viewer-pov.png"))
    game = replay_game(replay, humans=[HUNTER])
    client = BattleClient(game, out=out / "battle.replay.zip")  # not saved: the game goes on
    follow(client, replay, MOMENT)  # the person plays the Hunter as TDM-Alpha did
    client.choose_move(0)
    written.append(save_frame(pixels(client.frame()), out / "battle-client.png"))
    written.append(game_gif(replay, out / "game.gif"))
    return written
