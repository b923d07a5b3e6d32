"""One replay format for every mode (`marl_bgs_eval.replay_files`): the header names the format,
the engine, the versioned mode id and the ticks, the tick schema comes from the mode's
`EvalParts.replay`, and files of the formats before it (committed in tests/data, a few ticks
each) still load, as replays of the new format."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from marl_bgs_eval import EvalError, array_zip, episode_replays, replay_files
from marl_bgs_eval.modes import PARTS
from marl_bgs_eval.tdm import replay as tdm_replay

# Loading a file verifies its games, which a default build recorded (docs/testing.md).
pytestmark = pytest.mark.default_compile

DATA = Path(__file__).parent / "data"
LEGACY = {
    "tdm-v1.replay.zip": ("marl-bgs-replay-v1", "tdm-v2", 4),
    "two-bridge-v1.episode.zip": ("marl-bgs-episode-replay-v1", "two-bridge-v1", 6),
}


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_files_of_the_old_formats_load_as_the_new(name: str, tmp_path: Path) -> None:
    old_format, mode, ticks = LEGACY[name]
    assert (DATA / name).stat().st_size < 32_000  # small enough to keep in the repository
    raw = array_zip.read(
        DATA / name, "replay", lambda h, s: None, replay_files.layout, replay_files.derived
    )
    assert raw.header["format"] == old_format
    replay = replay_files.load(DATA / name)
    assert replay.header["format"] == replay_files.FORMAT == "marl-bgs-replay-v2"
    assert (replay.header["mode"], replay.ticks) == (mode, ticks)
    assert set(replay.header) == {*replay_files.FIELDS, *replay_files.schema(mode).fields}
    again = replay_files.load(replay_files.save(replay, tmp_path / "again.replay.zip"))
    assert again == replay  # saved in the new format, read back unchanged
    for array, make in replay_files.schema(mode).derived.items():  # absent from the old file
        np.testing.assert_array_equal(replay.arrays[array], make(replay.arrays))


def test_the_tick_schema_is_the_modes() -> None:
    assert set(PARTS.modes()) >= {"tdm-v2", "two-bridge-v1"}
    assert PARTS.get("tdm").replay is tdm_replay.REPLAY  # an alias finds the part too
    tdm = replay_files.load(DATA / "tdm-v1.replay.zip")
    assert replay_files.layout(tdm.header) == tdm_replay.layout(tdm.ticks)
    bridge = replay_files.load(DATA / "two-bridge-v1.episode.zip")
    assert replay_files.layout(bridge.header) == episode_replays.layout(
        "two-bridge-v1", bridge.header["settings"], bridge.ticks
    )
    assert "who" in replay_files.layout(tdm.header)
    assert "reward" in replay_files.layout(bridge.header)


def test_a_mode_is_named_by_its_versioned_id() -> None:
    replay = replay_files.load(DATA / "two-bridge-v1.episode.zip")
    for mode, message in [
        ("two-bridge-v0", r"header.mode: recorded in 'two-bridge-v0', this engine plays \["),
        ("two-bridge", r"header.mode: recorded in 'two-bridge', this engine plays"),
        (None, r"header.mode: recorded in None"),
    ]:
        edited = array_zip.Replay(header={**replay.header, "mode": mode}, arrays=replay.arrays)
        with pytest.raises(EvalError, match=message):
            replay_files.check_replay(edited)


def test_the_values_are_the_modes_to_check() -> None:
    tdm = replay_files.load(DATA / "tdm-v1.replay.zip")
    arrays = {**tdm.arrays, "who": tdm.arrays["who"] + 3}
    with pytest.raises(EvalError, match=r"^replay: array who: team A names no leaf"):
        replay_files.check_replay(array_zip.Replay(header=tdm.header, arrays=arrays))
    replay_files.check_replay(array_zip.Replay(header=tdm.header, arrays=arrays), values=False)
    bridge = replay_files.load(DATA / "two-bridge-v1.episode.zip")
    arrays = {**bridge.arrays, "actions": (bridge.arrays["actions"] + 1) % 2}
    with pytest.raises(EvalError, match=r"^replay: tick \d+: .* differs from what the engine"):
        replay_files.check_replay(array_zip.Replay(header=bridge.header, arrays=arrays))
