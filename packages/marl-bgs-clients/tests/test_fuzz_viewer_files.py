"""Fuzz: the Replay Viewer opens any file without crashing. A file that fails the replay checks is
never shown; the window says why (dropped on the window) or `marl-bgs-clients view` says it in one
line and exits 2 before any window. A file that passes them is the game that was saved."""

from __future__ import annotations

import hashlib
import io
import json
import random
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pygame
import pytest
from typer.testing import CliRunner

from marl_bgs_clients import preflight
from marl_bgs_clients.canvas import pixels
from marl_bgs_clients.cli import app
from marl_bgs_clients.viewer import ReplayViewer
from marl_bgs_eval.tdm import replays

pytestmark = pytest.mark.fuzz_family("Replay Viewer files")
RANDOM_CASES = 40


@pytest.fixture(scope="module")
def original(demo, tmp_path_factory) -> bytes:
    path = replays.save(demo, tmp_path_factory.mktemp("fuzz") / "demo.replay.zip")
    return path.read_bytes()


def _rezip(data: bytes, change) -> bytes:
    """The zip with its members passed through `change(name, bytes) -> [(name, bytes), ...]`."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            for name, body in change(info.filename, src.read(info)):
                dst.writestr(name, body)
    return out.getvalue()


def _header(**fields) -> Callable[[str, bytes], list[tuple[str, bytes]]]:
    """A member change that sets header fields (a value of None: the header is not JSON)."""

    def change(name: str, body: bytes) -> list[tuple[str, bytes]]:
        if name != "header.json":
            return [(name, body)]
        if fields.get("broken"):
            return [(name, b"{not json")]
        header = json.loads(body)
        return [(name, json.dumps({**header, **fields}).encode())]

    return change


def _add(extra: str) -> Callable[[str, bytes], list[tuple[str, bytes]]]:
    """A member change that adds one member `extra` (beside the header)."""
    return lambda n, b: [(n, b), (extra, b"x")] if n == "header.json" else [(n, b)]


def _drop(prefix: str) -> Callable[[str, bytes], list[tuple[str, bytes]]]:
    return lambda n, b: [] if n.startswith(prefix) else [(n, b)]


def _replace(member: str, body: Callable[[bytes], bytes]) -> Callable:
    return lambda n, b: [(n, body(b) if n == member else b)]


HANDMADE: dict[str, Callable[[bytes], bytes]] = {
    "empty": lambda d: b"",
    "not a zip": lambda d: b"hello, I am a replay",
    "truncated": lambda d: d[: len(d) // 2],
    "only the end": lambda d: d[-200:],
    "json pretending": lambda d: json.dumps({"format": "marl-bgs-replay-v1"}).encode(),
    "path traversal member": lambda d: _rezip(d, _add("../../evil.txt")),
    "extra member": lambda d: _rezip(d, _add("notes.npy")),
    "missing member": lambda d: _rezip(d, _drop("facts.died")),
    "header not json": lambda d: _rezip(d, _header(broken=True)),
    "header wrong format": lambda d: _rezip(d, _header(format="marl-bgs-replay-v0")),
    "header ticks lie": lambda d: _rezip(d, _header(ticks=7)),
    "header huge": lambda d: _rezip(d, _header(map_name="x" * 3_000_000)),
    "array bytes changed": lambda d: _rezip(d, _replace("actions.npy", lambda b: b[:-4] + b"1234")),
    "pickled array": lambda d: _rezip(d, _replace("who.npy", lambda b: _pickled())),
    "class 7, signed": lambda d: _signed(d, "state.units.class_id", lambda a: a * 7),
    "target 40, signed": lambda d: _signed(d, "state.units.last_target", lambda a: a + 40),
    "nan position, signed": lambda d: _signed(d, "state.units.pos", lambda a: a * np.nan),
}


def _signed(data: bytes, name: str, edit: Callable[[np.ndarray], np.ndarray]) -> bytes:
    """Array `name` edited and its checksum recomputed in the header: what a forger does."""
    with zipfile.ZipFile(io.BytesIO(data)) as src:
        old = np.load(io.BytesIO(src.read(f"{name}.npy")))
    buffer = io.BytesIO()
    np.save(buffer, edit(old).astype(old.dtype), allow_pickle=False)
    blob = buffer.getvalue()

    def change(member: str, body: bytes) -> list[tuple[str, bytes]]:
        if member == f"{name}.npy":
            return [(member, blob)]
        if member == "header.json":
            header = json.loads(body)
            header["arrays"][name]["sha256"] = hashlib.sha256(blob).hexdigest()
            return [(member, json.dumps(header).encode())]
        return [(member, body)]

    return _rezip(data, change)


def _pickled() -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray([object()], dtype=object), allow_pickle=True)
    return buffer.getvalue()


def _mutated(data: bytes, seed: int) -> bytes:
    rng = random.Random(seed)
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        kind = rng.random()
        at = rng.randrange(len(out))
        if kind < 0.5:
            out[at] = rng.randrange(256)
        elif kind < 0.75:
            del out[at : at + rng.randint(1, 64)]
        else:
            out[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    return bytes(out)


def _open_and_use(path: Path, demo, record_property) -> ReplayViewer:
    viewer = ReplayViewer.open(path)
    frame = pixels(viewer.frame())  # never raises: a game or the reason is drawn
    assert frame.shape[0] > 0
    for key in (pygame.K_RIGHT, pygame.K_END, pygame.K_3, pygame.K_o):
        assert viewer.handle(pygame.event.Event(pygame.KEYDOWN, key=key, mod=0))
    if viewer.replay is None:
        assert viewer.message.startswith(f"cannot open {path.name}: ")
        record_property("outcome", "error")
    else:
        assert viewer.replay == demo  # a file that passes every check is the saved game
        record_property("outcome", "accepted")
    return viewer


@pytest.mark.parametrize("case", sorted(HANDMADE))
def test_handmade_hostile_files(case, original, demo, tmp_path, record_property) -> None:
    path = tmp_path / "case.replay.zip"
    path.write_bytes(HANDMADE[case](original))
    assert _open_and_use(path, demo, record_property).replay is None


@pytest.mark.parametrize("seed", range(RANDOM_CASES))
def test_random_byte_mutations(seed, original, demo, tmp_path, record_property) -> None:
    path = tmp_path / "case.replay.zip"
    path.write_bytes(_mutated(original, seed))
    _open_and_use(path, demo, record_property)


def test_paths_that_are_not_files(tmp_path, demo, record_property) -> None:
    for path in (tmp_path / "missing.replay.zip", tmp_path):
        assert _open_and_use(path, demo, record_property).replay is None


@pytest.mark.parametrize("case", sorted(HANDMADE))
def test_the_command_refuses_hostile_files_before_any_window(
    case, original, tmp_path, monkeypatch, record_property
) -> None:
    """Even with a display, `view` refuses each hostile file in one line, exit code 2."""
    monkeypatch.setattr(preflight, "display_problem", lambda: None)
    opened: list[ReplayViewer] = []
    monkeypatch.setattr(ReplayViewer, "run", lambda self: opened.append(self))
    path = tmp_path / "case.replay.zip"
    path.write_bytes(HANDMADE[case](original))
    result = CliRunner().invoke(app, ["view", str(path)])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"error: {path}") or result.stderr.startswith(
        f"error: cannot open {path}: "
    )
    assert not opened
    record_property("outcome", "error")
