"""Two-Bridge pictures: frames show what an episode replay's states hold, the GIF has one frame
per state, and the Replay Viewer and `marl-bgs-clients export` open a Two-Bridge replay."""

from __future__ import annotations

import imageio.v3 as iio
import jax
import numpy as np
import pygame
import pytest
from typer.testing import CliRunner

import marl_bgs
from marl_bgs.two_bridge import layout as lay
from marl_bgs_clients.canvas import pixels
from marl_bgs_clients.cli import app
from marl_bgs_clients.modes import drawing
from marl_bgs_clients.two_bridge import pictures
from marl_bgs_clients.two_bridge.drawing import BridgeDrawing
from marl_bgs_clients.viewer import TIMELINE_HEIGHT, ReplayViewer
from marl_bgs_eval import EvalError, episode_replays
from marl_bgs_eval.two_bridge import legend

SETTINGS = {"variant": "V1_Combat", "tick_limit": 40}


@pytest.fixture(scope="module")
def episode():
    env = marl_bgs.make("two-bridge", **SETTINGS)
    policy = marl_bgs.random_policy(env.mode)
    return episode_replays.record(
        policy, jax.random.key(4), mode="two-bridge", settings=SETTINGS, games=[1]
    )[0]


def _at(image: np.ndarray, pos) -> tuple[int, ...]:
    row = int((lay.FIELD - pos[1]) * pictures.SCALE)
    col = int(pos[0] * pictures.SCALE)
    return tuple(int(v) for v in image[row, col])


def test_frames_follow_the_replay(episode) -> None:
    states, facts = episode_replays.history(episode)
    images = pictures.frames(episode)
    top, below = pictures.TITLE_HEIGHT, pictures.TITLE_HEIGHT + 512 + pictures.STATUS_HEIGHT
    key = pictures.key_band(512).get_height()
    assert images.shape == (episode.ticks + 1, below + key, 512, 3)
    for t in (0, episode.ticks):
        state = jax.tree.map(lambda a, t=t: a[t], states)
        field = pictures.frame(
            state, None if t == 0 else jax.tree.map(lambda a, t=t: a[t - 1], facts)
        )
        np.testing.assert_array_equal(images[t, top : top + 512], field)
        np.testing.assert_array_equal(images[t, below:], pixels(pictures.key_band(512)))
    tdm = episode_replays.Replay(header={**episode.header, "mode": "tdm-v2"}, arrays={})
    with pytest.raises(EvalError, match="a Two-Bridge episode expected"):
        pictures.frames(tdm)


def test_pictures_have_a_title_the_step_the_outcome_and_a_key(episode) -> None:
    states, _ = episode_replays.history(episode)
    first = jax.tree.map(lambda a: a[0], states)
    last = jax.tree.map(lambda a: a[-1], states)
    assert pictures.variant(first) == SETTINGS["variant"]
    title, status = pictures.title_lines(first, "random")
    assert title == "Two-Bridge V1_Combat: random"
    assert status == "step 0 of 40   Marines alive 5/5   enemies alive 3/3   running"
    outcome = marl_bgs.two_bridge.OUTCOMES[episode.header["outcome"]]
    alive = int((np.asarray(last.friend_health) > 0).sum())
    assert pictures.title_lines(last)[1].startswith(f"step {episode.ticks} of 40   "
                                                    f"Marines alive {alive}/5")  # fmt: skip
    assert pictures.title_lines(last)[1].endswith(f"outcome: {outcome}")
    image = pictures.frames(episode)[0]
    top, below = pictures.TITLE_HEIGHT, pictures.TITLE_HEIGHT + 512 + pictures.STATUS_HEIGHT
    ink = image.astype(int).sum(axis=-1) < 330
    assert ink[:top].sum() > 200  # the title is written
    assert ink[top + 512 : below].sum() > 300  # the status line is written
    key = image[below:]
    for e in legend.KEY:  # every sample's colour is in the key
        assert np.all(key == np.asarray(e.colour), axis=-1).any(), e


def test_a_frame_shows_the_state(episode) -> None:
    states, _ = episode_replays.history(episode)
    state = jax.tree.map(lambda a: a[0], states)
    image = pictures.frame(state)
    assert image.shape == (512, 512, 3)
    assert image.dtype == np.uint8
    assert _at(image, (32.0, 5.0)) == legend.CLIFF
    assert _at(image, (32.0, 17.0)) == legend.GROUND  # a bridge
    for pos in np.asarray(state.friend_pos):
        assert _at(image, pos) == legend.FRIEND
    assert _at(image, np.asarray(state.beacon)) == legend.BEACON
    health = np.array(state.friend_health)
    health[0] = 0.0
    dead = state.replace(friend_health=health)
    assert _at(pictures.frame(dead), np.asarray(state.friend_pos[0])) == legend.DEAD


def test_the_gif_has_a_frame_per_state(episode, tmp_path) -> None:
    path = pictures.save_gif(episode, tmp_path / "game.gif")
    assert iio.imread(path).shape[0] == episode.ticks + 1


def test_the_old_command_names_the_new_way() -> None:
    result = CliRunner().invoke(app, ["two-bridge", "--variant", "V1_Navigate", "--gif", "x.gif"])
    assert result.exit_code == 2
    assert "`marl-bgs-clients two-bridge` is gone" in result.output
    assert "marl-bgs-clients export FILE --out game.gif" in result.output


def test_view_and_export_open_a_two_bridge_replay(episode, tmp_path) -> None:
    """A Two-Bridge replay opens in the Replay Viewer and exports like any mode's: its mode's
    drawing (`modes.PARTS`) draws each state's titled picture, the key below GIF frames."""
    source = episode_replays.save(episode, tmp_path / "game.replay.zip")
    assert isinstance(drawing(episode), BridgeDrawing)
    viewer = ReplayViewer.open(source)
    assert viewer.replay == episode
    assert viewer.message == "opened game.replay.zip"
    states, facts = episode_replays.history(episode)
    one = lambda tree, t: jax.tree.map(lambda a: a[t], tree)  # noqa: E731
    viewer.jump(7)
    titled = pictures.titled(one(states, 7), one(facts, 6), episode.header["system"])
    np.testing.assert_array_equal(
        pixels(viewer.frame())[: titled.shape[0], : titled.shape[1]], titled
    )
    for key in (pygame.K_3, pygame.K_TAB):  # no agent views in Two-Bridge: nothing changes
        assert viewer.handle(pygame.event.Event(pygame.KEYDOWN, key=key, mod=0))
    assert (viewer.observer, viewer.selected) == (None, None)
    gif = tmp_path / "game.gif"
    result = CliRunner().invoke(app, ["export", str(source), "--out", str(gif), "--fps", "30"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{gif}: {episode.ticks} ticks of two-bridge-v1")
    frames = iio.imread(gif)
    key = pixels(pictures.key_band(viewer.size[0]))
    assert frames.shape[:3] == (episode.ticks + 1, viewer.size[1] + key.shape[0], viewer.size[0])
    np.testing.assert_array_equal(frames[0, viewer.size[1] :, :, :3], key)
    png = tmp_path / "t.png"
    assert CliRunner().invoke(app, ["export", str(source), "--out", str(png), "--tick", "7"]
                              ).exit_code == 0  # fmt: skip
    above = viewer.size[1] - TIMELINE_HEIGHT  # the picture and the panel (not the message)
    np.testing.assert_array_equal(iio.imread(png)[:above, :, :3], pixels(viewer.frame())[:above])
    for args, said in [
        (["--pov", "2"], "--pov: two-bridge-v1 has no agent view 2"),
        (["--out", str(tmp_path / "x.jpg")], "--out: expected a file ending in .gif, .mp4"),
    ]:
        bad = CliRunner().invoke(app, ["export", str(source), "--out", str(gif), *args])
        assert bad.exit_code == 2
        assert said in bad.output
    source.write_bytes(source.read_bytes()[:-30])  # damaged: refused with the file named
    bad = CliRunner().invoke(app, ["export", str(source), "--out", str(gif)])
    assert bad.exit_code == 2
    assert "game.replay.zip: not a replay file" in bad.output
