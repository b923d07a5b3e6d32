"""`marl-bgs-watch` / `marl-bgs-clients watch`: one game played, recorded and written as an
animation without a window; bad input is refused by name."""

from __future__ import annotations

from pathlib import Path

import imageio.v3 as iio
from typer.testing import CliRunner

from marl_bgs_clients.cli import app as clients_app
from marl_bgs_clients.tdm.watch import app as watch_app
from marl_bgs_eval.tdm import replays

RUNNER = CliRunner()


def test_watch_writes_the_game_as_gif_and_replay(tmp_path, demo) -> None:
    gif, saved = tmp_path / "new" / "game.gif", tmp_path / "new" / "game.replay.zip"
    args = ["tdm-alpha", "tdm-beta", "--map", "47", "--tick-limit", "60", "--gif", str(gif),
            "--save", str(saved)]  # fmt: skip
    result = RUNNER.invoke(watch_app, args)
    assert result.exit_code == 0, result.output
    said = "tdm-alpha vs tdm-beta on map 47 Crossfire: draw at the tick limit (1-3) in 60 ticks"
    assert said in result.stdout
    # not a terminal: each step as a plain line on stderr while it happens
    lines = result.stderr.splitlines()
    assert lines[0] == "tdm-alpha vs tdm-beta: 0/2 games, 0%, 0 s elapsed"
    assert all(line.startswith("tdm-alpha vs tdm-beta: ") for line in lines[1:-2])
    assert lines[-3].startswith("tdm-alpha vs tdm-beta: 2/2 games, 100%, ")
    assert lines[-2:] == ["recording the game", f"writing {gif} ({demo.ticks + 1} frames)"]
    assert replays.load(saved) == demo  # the same game as the docs' demo
    assert iio.imread(gif).shape[0] == demo.ticks + 1


def test_watch_refuses_bad_input_by_name(tmp_path) -> None:
    result = RUNNER.invoke(clients_app, ["watch", "tdm-alpha", "tdm-beta", "--pov", "12",
                                         "--gif", str(tmp_path / "x.gif")])  # fmt: skip
    assert result.exit_code == 2
    assert "--pov" in result.output
    result = RUNNER.invoke(watch_app, ["tdm-alpha", "nobody", "--gif", str(tmp_path / "x.gif")])
    assert result.exit_code == 2
    assert "nobody" in result.output
    assert not (tmp_path / "x.gif").exists()


def test_watch_plays_a_map_file(tmp_path, demo) -> None:
    """A custom map file (here map 47's own data under another name) is played and recorded."""
    import marl_bgs.tdm.maps as maps

    source = next(Path(maps.__file__).parent.glob("data/47*.json"))
    mine = tmp_path / "my-map.json"
    mine.write_bytes(source.read_bytes())
    saved = tmp_path / "mine.replay.zip"
    args = ["tdm-alpha", "tdm-beta", "--map", str(mine), "--tick-limit", "60", "--mp4",
            str(tmp_path / "g.mp4"), "--save", str(saved)]  # fmt: skip
    result = RUNNER.invoke(watch_app, args)
    assert result.exit_code == 0, result.output
    assert replays.load(saved).arrays["actions"].shape == demo.arrays["actions"].shape
