"""Two-Bridge's game section of a training config: the variants a run trains on."""

from __future__ import annotations

from dataclasses import dataclass

from marl_bgs import ConfigError
from marl_bgs.core.checks import shown
from marl_bgs.two_bridge import VARIANTS
from marl_bgs.two_bridge.layout import TICK_LIMIT
from marl_bgs.two_bridge.mode import parse_variants


@dataclass(frozen=True)
class BridgeGame:
    """The games a Two-Bridge learner trains on: indices into `VARIANTS` sharing one unit count
    (`--variant V1_Navigate`, `--set game.variants=V1` read them by name or split), drawn per
    episode; and the longest game in steps."""

    variants: tuple[int, ...] = (VARIANTS.index("V2_Base"),)
    tick_limit: int = TICK_LIMIT

    @property
    def names(self) -> tuple[str, ...]:
        """The variants by name."""
        return tuple(VARIANTS[i] for i in self.variants)


def check(game: BridgeGame) -> BridgeGame:
    """`game` checked (a `ConfigError` naming the field and what is allowed)."""
    if not game.variants or any(
        isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(VARIANTS)
        for i in game.variants
    ):
        raise ConfigError(
            f"game.variants: indices 0-{len(VARIANTS) - 1} of {list(VARIANTS)}, got "
            f"{shown(game.variants)}"
        )
    parse_variants(list(game.names))  # one unit count, none twice
    if isinstance(game.tick_limit, bool) or not 1 <= game.tick_limit <= 100_000:
        raise ConfigError(f"game.tick_limit: 1-100000, got {shown(game.tick_limit)}")
    return game
