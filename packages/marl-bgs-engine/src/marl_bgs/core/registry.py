"""Mode ids: versioned names (`tdm-v2`), their aliases (`tdm`) and the builders behind them.

A mode registers a builder `(**settings) -> BatchedEnv`; `make(mode_id, **settings)` looks it up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marl_bgs.core.checks import did_you_mean, shown
from marl_bgs.core.env import BatchedEnv
from marl_bgs.core.errors import ConfigError
from marl_bgs.core.opponent import OpponentEnv

Env = BatchedEnv | OpponentEnv  # what a builder returns (a scenario env folds in its opponent)
MODES: dict[str, Callable[..., Env]] = {}
ALIASES: dict[str, str] = {}


def register(mode_id: str, builder: Callable[..., Env], alias: str | None = None) -> None:
    """Register a versioned mode id (e.g. "tdm-v2") and optionally an alias (e.g. "tdm")."""
    if mode_id in MODES and MODES[mode_id] is not builder:
        raise ConfigError(f"mode: {mode_id!r} is already registered")
    MODES[mode_id] = builder
    if alias is not None:
        ALIASES[alias] = mode_id


def resolve(mode: str) -> str:
    """The versioned id of a mode id or alias."""
    allowed = sorted(MODES) + sorted(ALIASES)
    resolved = ALIASES.get(mode, mode) if isinstance(mode, str) else None
    if resolved not in MODES:
        hint = did_you_mean(mode, allowed)
        raise ConfigError(f"mode: unknown mode {shown(mode)}{hint}; allowed {allowed}")
    return str(resolved)


def make(mode: str, **settings: Any) -> Any:
    """Build an environment by mode id, e.g. `make("tdm", map_id=47, num_envs=1024)`, or
    `make("tdm", scenario=6, num_envs=256)` (team A's env, the controller folded in)."""
    return MODES[resolve(mode)](**settings)
