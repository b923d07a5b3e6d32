"""The browser viewer's JSON is built by each mode's web part (`web.modes.PARTS`): a Two-Bridge
replay (the committed tiny episode of the eval package's tests) is drawn like a Team Deathmatch
one, with its cliff as obstacles, the beacon as a mark, a caption per step and the colours of
Two-Bridge's legend (the clients' pictures'), not Team Deathmatch's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from marl_bgs.two_bridge import layout as lay
from marl_bgs_eval import episode_replays, replay_files
from marl_bgs_eval.tdm import legend as tdm_legend
from marl_bgs_eval.two_bridge import legend
from marl_bgs_tournament.web.heatmap import hex_colour
from marl_bgs_tournament.web.modes import PARTS
from marl_bgs_tournament.web.replay_json import replay_json

EPISODE = Path(__file__).parents[2] / "marl-bgs-eval/tests/data/two-bridge-v1.episode.zip"


@pytest.mark.default_compile  # loading verifies games a default build recorded
def test_a_two_bridge_replay_becomes_the_viewers_json() -> None:
    assert set(PARTS.modes()) >= {"tdm-v2", "two-bridge-v1"}
    replay = replay_files.load(EPISODE)  # verified once, by the engine
    got = replay_json(replay)
    states, _ = episode_replays.history(replay)
    assert (got["mode"], got["ticks"], len(got["frames"])) == ("two-bridge-v1", 6, 7)
    assert (got["width"], got["height"]) == (lay.FIELD, lay.FIELD)
    assert got["status"].endswith(f"in {replay.ticks} steps")
    colours = got["colours"]
    assert colours["team"] == [hex_colour(legend.FRIEND), hex_colour(legend.ENEMY)]
    assert colours["team"][0] != hex_colour(tdm_legend.TEAM_COLOURS[0])  # not TDM's blue
    want = {"dead": legend.DEAD, "health": legend.HEALTH, "mark": legend.BEACON,
            "field": legend.GROUND, "obstacle": legend.CLIFF}  # fmt: skip
    assert {k: colours[k] for k in want} == {k: hex_colour(c) for k, c in want.items()}
    for t, frame in enumerate(got["frames"]):
        friends = [u for u in frame["units"] if u["team"] == 0]
        enemies = [u for u in frame["units"] if u["team"] == 1]
        got_pos = [v for u in friends for v in (u["x"], u["y"])]
        assert got_pos == pytest.approx(np.asarray(states.friend_pos)[t].ravel().tolist(), abs=1e-3)
        assert [u["health"] for u in enemies] == pytest.approx(
            np.asarray(states.enemy_health)[t].tolist(), abs=0.01
        )
        alive = int((np.asarray(states.friend_health)[t] > 0).sum())
        assert f"Marines alive {alive}/5" in frame["caption"]
    (mark,) = got["marks"]
    assert (mark["x"], mark["y"], mark["radius"]) == pytest.approx(
        (*np.asarray(states.beacon)[0].tolist(), lay.BEACON_RADIUS)
    )
    covered = np.zeros(lay.PATHABLE.shape, bool)  # the walls cover exactly the cliff's cells
    for w in got["obstacles"]:
        r = int(w["y"] // lay.CELL)
        c0, c1 = (
            round((w["x"] - w["width"] / 2) / lay.CELL),
            round((w["x"] + w["width"] / 2) / lay.CELL),
        )
        assert not covered[r, c0:c1].any()
        covered[r, c0:c1] = True
    assert np.array_equal(covered, ~lay.PATHABLE)
