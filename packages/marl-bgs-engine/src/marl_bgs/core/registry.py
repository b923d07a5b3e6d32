"""Mode ids: versioned names (`tdm-v2`), their aliases (`tdm`) and the builders behind them.

Modes register a `ModeKit` (`marl_bgs.core.kits`: through the entry-point group
`marl_bgs.modes`, or `register_kit`); `make(mode_id, **settings)` builds the kit's env.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marl_bgs.core.env import BatchedEnv
from marl_bgs.core.kits import ALIASES, MODES, ModeKit, register_kit, resolve

__all__ = ["ALIASES", "MODES", "make", "register", "resolve"]


def register(mode_id: str, builder: Callable[..., BatchedEnv], alias: str | None = None) -> None:
    """Register a builder under a versioned mode id (e.g. "duel-v1") and optionally an alias: a
    kit with default outcome names and no layouts (`register_kit` registers a whole kit)."""
    register_kit(ModeKit(id=mode_id, build=builder, alias=alias))


def make(mode: str, **settings: Any) -> BatchedEnv:
    """Build an environment by mode id, e.g. `make("tdm", map_id=47, num_envs=1024)`."""
    return MODES[resolve(mode)](**settings)
