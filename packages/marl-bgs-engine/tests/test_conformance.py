"""The conformance suite over every registered mode: the native batched env, the opponent-folded
env's game underneath, and both ecosystem adapters, all held to the mode's own rules."""

from __future__ import annotations

import pytest

import marl_bgs
from marl_bgs.adapters.jaxmarl import JaxMARLEnv
from marl_bgs.adapters.pettingzoo import PettingZooEnv
from marl_bgs.core.registry import MODES
from marl_bgs.testing import check_env, check_jaxmarl_adapter, check_pettingzoo_adapter

# Settings per mode that make games end inside a short check (so restarts are exercised too).
SHORT_GAMES = {"tdm-v2": {"map_id": 47, "tick_limit": 5}, "two-bridge-v1": {"tick_limit": 5}}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_native_env(mode: str) -> None:
    check_env(marl_bgs.make(mode, num_envs=3, **SHORT_GAMES.get(mode, {})), ticks=8)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_jaxmarl_adapter(mode: str) -> None:
    check_jaxmarl_adapter(JaxMARLEnv(mode, **SHORT_GAMES.get(mode, {})), ticks=8)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_pettingzoo_adapter(mode: str) -> None:
    check_pettingzoo_adapter(PettingZooEnv(mode, **SHORT_GAMES.get(mode, {})), ticks=8)
