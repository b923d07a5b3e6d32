"""Two-Bridge pictures: frames show what an episode replay's states hold, the GIF has one frame
per state, and the command line plays, saves and redraws one."""

from __future__ import annotations

import imageio.v3 as iio
import jax
import numpy as np
import pytest
from typer.testing import CliRunner

import marl_bgs
from marl_bgs.two_bridge import layout as lay
from marl_bgs_clients import two_bridge as pictures
from marl_bgs_clients.cli import app
from marl_bgs_clients.render import pixels
from marl_bgs_eval import EvalError, episode_replays

SETTINGS = {"variant": "V1_Combat", "tick_limit": 40}


@pytest.fixture(scope="module")
def episode():
    env = marl_bgs.make("two-bridge", **SETTINGS)
    policy = marl_bgs.random_policy(env.mode)
    return episode_replays.record(policy, jax.random.key(4), settings=SETTINGS, games=[1])[0]


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
    for kind, colour, meaning in pictures.KEY:  # every sample's colour is in the key
        assert np.all(key == np.asarray(colour), axis=-1).any(), (kind, meaning)


def test_a_frame_shows_the_state(episode) -> None:
    states, _ = episode_replays.history(episode)
    state = jax.tree.map(lambda a: a[0], states)
    image = pictures.frame(state)
    assert image.shape == (512, 512, 3)
    assert image.dtype == np.uint8
    assert _at(image, (32.0, 5.0)) == pictures.CLIFF
    assert _at(image, (32.0, 17.0)) == pictures.GROUND  # a bridge
    for pos in np.asarray(state.friend_pos):
        assert _at(image, pos) == pictures.FRIEND
    assert _at(image, np.asarray(state.beacon)) == pictures.BEACON
    health = np.array(state.friend_health)
    health[0] = 0.0
    dead = state.replace(friend_health=health)
    assert _at(pictures.frame(dead), np.asarray(state.friend_pos[0])) == pictures.DEAD


def test_the_gif_has_a_frame_per_state(episode, tmp_path) -> None:
    path = pictures.save_gif(episode, tmp_path / "game.gif")
    assert iio.imread(path).shape[0] == episode.ticks + 1


def test_the_command_writes_an_episode(tmp_path) -> None:
    out = tmp_path / "random.gif"
    result = CliRunner().invoke(app, ["two-bridge", "--variant", "V1_Navigate", "--seed", "2",
                                      "--gif", str(out), "--fps", "30"])  # fmt: skip
    assert result.exit_code == 0, result.output
    steps = int(result.output.split(": ")[1].split(" steps")[0])
    assert iio.imread(out).shape[0] == steps + 1  # moving Marines: every frame differs
    bad = CliRunner().invoke(app, ["two-bridge", "--variant", "V4_Base", "--gif", str(out)])
    assert bad.exit_code == 2
    assert "variant" in bad.output


def test_the_command_saves_and_redraws_a_replay(episode, tmp_path) -> None:
    """A saved episode (the module's 40-step one: playing is tested above) is drawn from its
    file, saved again by the command, and the copy draws the same GIF; a damaged file is
    refused by name."""
    source = episode_replays.save(episode, tmp_path / "source.episode.zip")
    saved, first, again = tmp_path / "game.episode.zip", tmp_path / "a.gif", tmp_path / "b.gif"
    args = ["two-bridge", "--replay", str(source), "--gif", str(first), "--save", str(saved)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{first}: {episode.ticks} steps, ")
    redraw = CliRunner().invoke(app, ["two-bridge", "--replay", str(saved), "--gif", str(again)])
    assert redraw.exit_code == 0, redraw.output
    drawn = iio.imread(again)
    assert drawn.shape[0] == episode.ticks + 1
    np.testing.assert_array_equal(iio.imread(first), drawn)
    saved.write_bytes(saved.read_bytes()[:-30])  # damaged: refused with the file named
    bad = CliRunner().invoke(app, ["two-bridge", "--replay", str(saved), "--gif", str(again)])
    assert bad.exit_code == 2
    assert "game.episode.zip" in bad.output
