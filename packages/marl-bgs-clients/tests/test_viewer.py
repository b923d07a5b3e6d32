"""The Replay Viewer: navigation by keys and the timeline, Oracle and POV, panels that add up to
evaluation's metrics, what an agent chose and what was repaired, and PNG/GIF/MP4 export."""

from __future__ import annotations

import dataclasses
from typing import Any

import imageio.v2 as iio2
import imageio.v3 as iio
import numpy as np
import pygame
import pytest

from marl_bgs_clients.canvas import pixels
from marl_bgs_clients.tdm import panels
from marl_bgs_clients.tdm.drawing import DRAWING, replay_scene
from marl_bgs_clients.tdm.key import key_rect, key_strip
from marl_bgs_clients.viewer import ReplayViewer
from marl_bgs_eval.tdm import replays


def _key(k: int) -> pygame.event.Event:
    return pygame.event.Event(pygame.KEYDOWN, key=k, mod=0)


def _crop(image: np.ndarray, rect: pygame.Rect) -> np.ndarray:
    return image[rect.top : rect.bottom, rect.left : rect.right]


def _scene(viewer: ReplayViewer):
    return replay_scene(viewer.replay, viewer.tick, viewer.observer)


def _click(pos: tuple[int, int]) -> pygame.event.Event:
    return pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1)


@pytest.fixture
def viewer(demo, tmp_path) -> ReplayViewer:
    return ReplayViewer(demo, name="demo.replay.zip", out_dir=tmp_path)


def test_keys_and_timeline_move_through_the_game(viewer, demo) -> None:
    last = demo.ticks
    steps = [(pygame.K_RIGHT, 1), (pygame.K_RIGHT, 2), (pygame.K_LEFT, 1), (pygame.K_PAGEUP, 11),
             (pygame.K_END, last), (pygame.K_RIGHT, last), (pygame.K_PAGEDOWN, last - 10),
             (pygame.K_HOME, 0), (pygame.K_LEFT, 0)]  # fmt: skip
    for key, want in steps:
        assert viewer.handle(_key(key))
        assert viewer.tick == want
    w, h = viewer.field_size
    viewer.handle(_click((w // 2, h + 13)))  # the middle of the timeline
    assert viewer.tick == pytest.approx(last / 2, abs=1)
    viewer.handle(_key(pygame.K_SPACE))
    assert viewer.playing
    assert not viewer.handle(_key(pygame.K_q))
    assert not viewer.handle(pygame.event.Event(pygame.QUIT))


def test_views_and_selection(viewer, demo) -> None:
    viewer.jump(30)
    assert _scene(viewer).observer is None
    viewer.handle(_key(pygame.K_7))
    assert (viewer.observer, viewer.selected) == (7, 7)
    assert _scene(viewer).observer == 7
    viewer.handle(_key(pygame.K_o))
    assert viewer.observer is None
    unit = _scene(viewer).unit(3)
    assert unit is not None
    viewer.handle(_click(DRAWING.layout.to_px(unit.x, unit.y)))
    assert viewer.selected == 3
    empty = (10.0, 0.1)
    assert _scene(viewer).unit_at(*empty) is None
    viewer.handle(_click(DRAWING.layout.to_px(*empty)))
    assert viewer.selected is None
    frame = pixels(viewer.frame())
    assert frame.shape == (viewer.size[1], viewer.size[0], 3)


def test_panels_add_up_to_the_metrics_up_to_each_tick(demo) -> None:
    table = replays.metrics(demo, "full")
    assert panels.upto(table, 0) is None
    for tick in (1, demo.ticks // 2, demo.ticks):
        row = panels.upto(table, tick)
        assert row is not None
        rows = {label: (a, b) for label, a, b in panels.team_rows(row)}
        want = table.iloc[tick - 1]
        died = demo.arrays["facts.died"][:tick]
        assert rows["kills"] == (died[:, 5:].sum(), died[:, :5].sum())  # from the facts
        assert rows["damage dealt"] == pytest.approx(
            (want["a_damage_dealt"], want["b_damage_dealt"])
        )
        dealt = demo.arrays["facts.damage_basic"] + demo.arrays["facts.damage_ultimate"]
        assert panels.damage_matrix(row, "a").sum() == pytest.approx(
            rows["damage dealt"][0], abs=1e-3
        )
        assert panels.damage_matrix(row, "b") == pytest.approx(
            dealt[:tick, 5:, :5].sum(0), abs=1e-3
        )
    assert table.iloc[-1]["a_damage_dealt"] > 0


def test_agent_panel_says_what_was_chosen_and_repaired(demo) -> None:
    lines = panels.agent_lines(demo, 10, 2, seen=[2, 0, 6])
    assert lines[0] == "a_2: hunter"
    assert lines[2] == "saw: a_0, b_1"
    assert any(line.startswith("chose: ") for line in lines)
    assert not any(line.startswith("repaired to") for line in lines)
    arrays = dict(demo.arrays)
    arrays["facts.move_rejected"] = arrays["facts.move_rejected"].copy()
    arrays["facts.move_rejected"][10, 2] = True
    arrays["facts.requested"] = arrays["facts.requested"].copy()
    arrays["facts.requested"][10, 2] = (4, 0, 0)
    arrays["facts.accepted"] = arrays["facts.accepted"].copy()
    arrays["facts.accepted"][10, 2] = (0, 0, 0)
    edited = dataclasses.replace(demo, arrays=arrays)
    lines = panels.agent_lines(edited, 10, 2, seen=[2])
    assert "chose: west + no_combat" in lines
    assert "repaired to: stay + no_combat" in lines
    assert panels.agent_lines(demo, demo.ticks, 2, seen=[])[-1] == "the game is over"


def test_exports_png_gif_and_mp4(viewer, demo, tmp_path) -> None:
    viewer.jump(12)
    png = viewer.export_frame()
    assert png.name == "demo-oracle-tick-0012.png"
    assert np.array_equal(iio.imread(png)[..., :3], pixels(viewer.frame()))
    viewer.handle(_key(pygame.K_2))
    gif = viewer.export_clip(".gif")
    assert gif.name == "demo-a_2.gif"
    assert iio.imread(gif).shape[0] == demo.ticks + 1
    assert viewer.tick == 12  # exporting leaves the viewer where it was
    key = pixels(key_strip(viewer.size[0]))  # every animation frame carries the key below it
    frames = iio.imread(gif)[..., :3].astype(int)
    assert frames.shape[1:3] == (viewer.size[1] + key.shape[0], viewer.size[0])
    assert np.abs(frames[0, -key.shape[0] :] - key).mean() < 3  # a GIF's palette: nearly equal
    viewer.show_key = True  # the overlay gives way to the strip below
    mp4 = viewer.export_clip(".mp4", tmp_path / "clip.mp4", fps=8)
    assert viewer.show_key
    reader: Any = iio2.get_reader(mp4)
    assert reader.count_frames() == demo.ticks + 1
    assert tuple(reader.get_meta_data()["size"]) == (viewer.size[0], frames.shape[1])
    viewer.show_key = False
    viewer.handle(_key(pygame.K_p))
    assert viewer.message.startswith("saved ")


def test_a_bad_file_is_a_message_in_the_window_and_a_good_one_opens(tmp_path, demo) -> None:
    bad = tmp_path / "broken.replay.zip"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    viewer = ReplayViewer.open(bad)
    assert viewer.replay is None
    assert viewer.message.startswith("cannot open broken.replay.zip: ")
    frame = pixels(viewer.frame())
    red = np.all(frame == np.asarray((200, 30, 30)), axis=-1)
    assert red.sum() > 100  # the reason is written in the window
    assert viewer.handle(_key(pygame.K_RIGHT))  # keys do nothing harmful without a game
    good = replays.save(demo, tmp_path / "good.replay.zip")
    viewer.handle(pygame.event.Event(pygame.DROPFILE, file=str(good)))
    assert viewer.replay == demo
    assert viewer.message == "opened good.replay.zip"


def test_actions_no_engine_makes_are_named_raw() -> None:
    assert panels.action_text(np.asarray([3, 6, 0])) == "east + enemy_0_basic"
    assert panels.action_text(np.asarray([-1, 0, 0])) == "move -1 (no such move) + no_combat"
    assert panels.action_text(np.asarray([0, 11, 2])) == "stay + (11, 2) (no such combat)"


def test_a_failing_export_is_a_message_not_a_crash(viewer, tmp_path) -> None:
    (tmp_path / "taken").write_text("a file where a folder should be")
    viewer.out_dir = tmp_path / "taken" / "inside"
    assert viewer.handle(_key(pygame.K_p))
    assert viewer.message.startswith(("FileExistsError", "NotADirectoryError"))


def test_the_viewer_shows_and_hides_the_key_with_l(demo) -> None:
    viewer = ReplayViewer(demo, name="demo")
    viewer.jump(30)
    plain = pixels(viewer.frame())
    rect = key_rect(pygame.Rect((0, 0), viewer.field_size))
    strip = pixels(key_strip(rect.width))
    assert not np.array_equal(_crop(plain, rect), strip)
    viewer.handle(_key(pygame.K_l))
    shown = pixels(viewer.frame())
    assert np.array_equal(_crop(shown, rect), strip)
    outside = np.ones(plain.shape[:2], bool)
    outside[rect.top : rect.bottom, rect.left : rect.right] = False
    assert np.array_equal(shown[outside], plain[outside])  # the rest of the window is unchanged
    viewer.handle(_key(pygame.K_l))
    assert np.array_equal(pixels(viewer.frame()), plain)


def test_results_say_how_the_game_ended(demo) -> None:
    h = demo.header
    assert (h["result"], h["ticks"]) == ("draw", h["tick_limit"])  # the demo ends at the limit
    score = f"({h['points_a']}-{h['points_b']})"
    assert panels.game_lines(demo)[3] == f"result: draw at the tick limit {score} in 60 ticks"
