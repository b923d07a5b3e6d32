"""What the rulebook and seasons need from a mode, by mode id: `RulebookParts`, found through
`PARTS` (the leaderboard's browser viewer has its own parts: `web.modes`).

A mode's rulebook parts are registered with `register(mode, parts)` or through the entry-point
group `marl_bgs_tournament.rulebook` (name: the mode's alias, value: "module:PARTS"); Team
Deathmatch's are `marl_bgs_tournament.rulebook.tdm`, Two-Bridge's
`marl_bgs_tournament.rulebook.two_bridge`. Generic code (the rulebook, seasons, the command
line) asks `parts(mode)` and reads layouts through the engine's kit (`marl_bgs.kit(mode)`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import marl_bgs
from marl_bgs import ConfigError, ModeKit, PartRegistry
from marl_bgs_tournament.errors import TournamentError

# check(system, *, games, ticks, seed) -> rulebook.Row: a mode's own rulebook check
Check = Callable[..., Any]


@dataclass(frozen=True, eq=False)
class RulebookParts:
    """A mode's rulebook parts; the defaults fit a mode with no held-out layouts, games that
    may end before their tick limit and no rulebook checks of its own."""

    # the layouts training must never touch, which seasons and the rulebook's games play (a
    # `Layouts.select` text, e.g. Team Deathmatch's "test"); None: none held out, all are played
    test_layouts: str | None = None
    # the mode's settings under which no game ends before its tick limit (the `full_games`
    # check then requires every game to last); empty: games may end early
    full_length: Mapping[str, Any] = field(default_factory=dict)
    # the mode's own rulebook checks by name, run after `play_limits` (e.g. information limits)
    checks: Mapping[str, Check] = field(default_factory=dict)


PARTS: PartRegistry[RulebookParts] = PartRegistry("marl_bgs_tournament.rulebook", "rulebook parts")


def register(mode: str, parts: RulebookParts) -> None:
    """Give `mode` (an id or alias of a registered mode) its rulebook parts."""
    if not isinstance(parts, RulebookParts):
        raise TournamentError(
            f"parts: expected a marl_bgs_tournament.modes.RulebookParts, got {type(parts).__name__}"
        )
    PARTS.register(mode, parts)


def kit(mode: str) -> ModeKit:
    """The engine kit of a mode id or alias (a TournamentError if unknown)."""
    try:
        return marl_bgs.kit(mode)
    except ConfigError as err:
        raise TournamentError(str(err)) from None


def parts(mode: str) -> RulebookParts:
    """The rulebook parts of a mode id or alias."""
    try:
        return PARTS.get(mode)
    except ConfigError as err:
        raise TournamentError(str(err)) from None


def select(mode: str, text: str, field_name: str = "maps") -> tuple[int, ...]:
    """The layout indices `text` picks in `mode` (`Layouts.select`: `47,48`, `0-39`, a split
    name such as `train`, `validation` or `test`, `all`, or layout names); `none` picks none."""
    lay = kit(mode).layouts
    if lay is None:
        raise TournamentError(f"{field_name}: mode {kit(mode).id!r} has no layouts to choose")
    if isinstance(text, str) and text.strip() == "none":
        return ()
    try:
        return tuple(lay.select(text))
    except ConfigError as err:
        raise TournamentError(f"{field_name}: {err}") from None


def held_out_layouts(mode: str) -> tuple[int, ...]:
    """The layouts of `mode` held out from training (`RulebookParts.test_layouts`; none:
    empty)."""
    held = parts(mode).test_layouts
    return () if held is None else select(mode, held, "test_layouts")


def season_layouts(mode: str) -> tuple[int, ...]:
    """The layouts a season and the rulebook's games play by default: the held-out ones, else
    all of the mode's."""
    return held_out_layouts(mode) or select(mode, "all")
