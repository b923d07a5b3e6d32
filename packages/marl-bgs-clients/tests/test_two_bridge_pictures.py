"""Two-Bridge pictures: recorded episodes match the engine, frames show what the state holds,
the GIF has one frame per state, and the command line writes one."""

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


@pytest.fixture(scope="module")
def episode():
    env = marl_bgs.make("two-bridge", variant="V1_Combat", num_envs=2, tick_limit=40)
    return env, *pictures.record(env, marl_bgs.random_policy(env.mode), jax.random.key(4), game=1)


def _at(image: np.ndarray, pos) -> tuple[int, ...]:
    row = int((lay.FIELD - pos[1]) * pictures.SCALE)
    col = int(pos[0] * pictures.SCALE)
    return tuple(int(v) for v in image[row, col])


def test_the_recording_is_the_engines_game(episode) -> None:
    env, states, facts = episode
    assert states.tick[0] == 0
    assert states.outcome[-1] != 0
    assert (states.outcome[:-1] == 0).all()
    assert facts.requested.shape == (len(states.tick) - 1, 5)
    # Stepping the first recorded state with the recorded actions gives the second.
    first = jax.tree.map(lambda a: a[0], states)
    nxt, _ = env.mode.transition(first, facts.requested[0][:, None])
    np.testing.assert_allclose(nxt.friend_pos, states.friend_pos[1], atol=1e-5)


def test_a_frame_shows_the_state(episode) -> None:
    _, states, _ = episode
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
    _, states, facts = episode
    path = pictures.save_gif(states, facts, tmp_path / "game.gif")
    assert iio.imread(path).shape[0] == len(states.tick)


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
