"""Image files: one frame as PNG, a clip as GIF or MP4 (imageio; MP4 through imageio-ffmpeg).

Frames are uint8 RGB arrays [height, width, 3] (`render.pixels`). Writing refuses an unknown
suffix by name, so nothing is written in a format the user did not ask for.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import imageio.v2 as iio2
import imageio.v3 as iio
import numpy as np

FRAME_SUFFIXES = (".png",)
CLIP_SUFFIXES = (".gif", ".mp4")


class ExportError(ValueError):
    """A file name or setting that cannot be written (the message names the field)."""


def _suffix(path: Path, allowed: tuple[str, ...], field: str) -> str:
    suffix = path.suffix.lower()
    if suffix not in allowed:
        raise ExportError(f"{field}: expected a file ending in one of {list(allowed)}, got {path}")
    return suffix


def save_frame(frame: np.ndarray, path: str | Path) -> Path:
    """Write one frame as a PNG."""
    path = Path(path)
    _suffix(path, FRAME_SUFFIXES, "path")
    path.parent.mkdir(parents=True, exist_ok=True)
    iio.imwrite(path, frame)
    return path


def save_clip(frames: Iterable[np.ndarray], path: str | Path, fps: float = 4.0) -> Path:
    """Write frames as an animation: `.gif` (looping) or `.mp4` (H.264). `fps`: frames a second."""
    path = Path(path)
    suffix = _suffix(path, CLIP_SUFFIXES, "path")
    if not isinstance(fps, int | float) or isinstance(fps, bool) or not 0.5 <= fps <= 60:
        raise ExportError(f"fps: expected a number in [0.5, 60], got {fps!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".gif":  # Pillow writes a GIF from all its frames at once
        stack = list(frames)
        if not stack:
            raise ExportError("frames: a clip needs at least one frame")
        iio.imwrite(path, np.stack(stack), duration=1000.0 / fps, loop=0)
        return path
    written = 0
    writer: Any = iio2.get_writer(path, fps=fps, codec="libx264", macro_block_size=2)
    with writer:  # frames are encoded as they come, never all held at once
        for frame in frames:
            writer.append_data(frame)
            written += 1
    if not written:
        path.unlink(missing_ok=True)
        raise ExportError("frames: a clip needs at least one frame")
    return path
