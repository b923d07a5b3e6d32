"""Shared by the clients' tests: a headless SDL, and one recorded game (the docs' demo game:
TDM-Alpha vs TDM-Beta on map 47, 60 ticks at most) whose compiled programs every module reuses."""

from __future__ import annotations

import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import pytest

from marl_bgs_clients.tdm.shots import DEMO, demo_replay
from marl_bgs_clients.tdm.watch import play_one
from marl_bgs_eval.array_zip import Replay


@pytest.fixture(scope="session")
def demo() -> Replay:
    """The docs' demo game, played and recorded once per test run."""
    return demo_replay()


@pytest.fixture(scope="session")
def demo_right(demo) -> Replay:
    """The other game of the demo's spawn-swapped pair: team A starts on the right."""
    return play_one(**DEMO, a_right=True)
