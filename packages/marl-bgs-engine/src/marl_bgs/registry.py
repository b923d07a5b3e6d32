"""Mode ids: versioned names (`tdm-v1`) and their aliases (`tdm`)."""

from __future__ import annotations

from typing import Any

from marl_bgs.config import ConfigError
from marl_bgs.env import TeamDeathmatch

MODES = {"tdm-v1": TeamDeathmatch}
ALIASES = {"tdm": "tdm-v1"}


def make(mode: str, **kwargs: Any) -> TeamDeathmatch:
    """Build an environment by mode id, e.g. `make("tdm", map_id=47, num_envs=1024)`."""
    resolved = ALIASES.get(mode, mode)
    if resolved not in MODES:
        raise ConfigError(f"mode: unknown mode {mode!r}; allowed {sorted(MODES) + sorted(ALIASES)}")
    return MODES[resolved](**kwargs)
