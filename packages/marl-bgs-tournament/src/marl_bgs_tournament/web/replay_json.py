"""A replay file of any mode as the JSON the browser's canvas viewer draws (`static/replay.js`):
`mode` (the versioned id) and `ticks`, then the mode's own part (`web.modes.PARTS`): the field,
its obstacles and marks, every tick's units and score or caption, the result in one line and the
key's colours.

Files are read with `marl_bgs_eval.replay_files.load`, which checks every array.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from marl_bgs import ConfigError
from marl_bgs_eval import EvalError
from marl_bgs_eval.array_zip import Replay
from marl_bgs_eval.replay_files import load
from marl_bgs_tournament.web.files import SeasonDataError
from marl_bgs_tournament.web.modes import PARTS


def replay_json(replay: Replay) -> dict[str, Any]:
    """The viewer's JSON of a loaded (already checked) replay of any mode with a web part."""
    mode = str(replay.header["mode"])
    try:
        part = PARTS.get(mode)
    except ConfigError as err:
        raise SeasonDataError(f"replay: {err}") from None
    return {"mode": mode, "ticks": replay.ticks, **part.replay_json(replay)}


def read_replay(path: Path) -> dict[str, Any]:
    """Load and check the replay file at `path` and build its JSON (SeasonDataError if bad)."""
    try:
        replay = load(path)
    except EvalError as err:
        said = str(err).replace(str(path), path.name)  # no server paths in answers
        raise SeasonDataError(f"{path.name}: not a valid replay: {said}") from None
    return replay_json(replay)
