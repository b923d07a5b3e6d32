"""The service's clock on a child: what the child reports, and when it has taken too long.

The child writes one line per report on its report pipe:

    move <event> <team> <tick>    a fence of a team's move or memory start (`marl_bgs_eval.watch`)
    phase <label>                 host work begins (loading, compiling, a rulebook check)
    teams <tick limit> <a> <b>    the Systems and tick limit of the games that follow

`Watchdog` turns them into a deadline and the reason to give if it passes: within a team's move
`move_seconds` (and what is left of its `game_seconds` over the last tick_limit ticks), else
`host_seconds` from the latest report.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from marl_bgs_eval.watch import INIT_END, INIT_START, MOVE_END, MOVE_START
from marl_bgs_tournament.sandbox.limits import Limits

MAX_LINE = 4096  # longest report line taken


def move_line(event: int, team: int, tick: int) -> bytes:
    """A report line for a fence."""
    return f"move {event} {team} {tick}\n".encode()


def teams_line(a: str, b: str, tick_limit: int) -> bytes:
    """A report line naming the games that follow."""
    return f"teams {int(tick_limit)} {a[:64]} {b[:64]}\n".encode()


def phase_line(label: str) -> bytes:
    """A report line for the start of host work (`label` on one line)."""
    return f"phase {' '.join(label.split())[:200]}\n".encode()


class Watchdog:
    """Deadlines of one child: `names` are the teams' System names, `tick_limit` a game's."""

    def __init__(self, limits: Limits, names: Sequence[str], tick_limit: int, now: float) -> None:
        self.limits, self.names, self.tick_limit = limits, list(names), int(tick_limit)
        self.phase = "starting"
        self.deadline = now + limits.host_seconds
        self.reason = self._host_reason()
        self.running: tuple[int, int, int, float] | None = None  # event, team, tick, started
        self.spent = self._fresh()  # each team's latest move times (seconds)

    def _host_reason(self) -> str:
        return f"exceeded {self.limits.host_seconds:g} s of host work ({self.phase})"

    def _fresh(self) -> list[deque[float]]:
        # a game's ticks are played in a row, one move of its batch each: any game lies within
        # the last tick_limit moves, this one and tick_limit - 1 before it
        return [deque(maxlen=max(self.tick_limit - 1, 1)) for _ in range(2)]

    def teams(self, names: Sequence[str], tick_limit: int) -> None:
        """The Systems (team A, team B) and tick limit of the games that follow."""
        self.names, self.tick_limit = list(names), int(tick_limit)
        self.spent = self._fresh()

    def line(self, raw: bytes, now: float) -> None:
        """Take one report line (ValueError for a malformed one)."""
        text = raw.decode("ascii").strip()
        kind, _, rest = text.partition(" ")
        if kind == "phase":
            self.phase, self.running = rest, None
            self.deadline, self.reason = now + self.limits.host_seconds, self._host_reason()
        elif kind == "teams":
            limit, a, b = rest.split(" ")
            self.teams([a, b], int(limit))
        elif kind == "move":
            event, team, tick = (int(x) for x in rest.split(" "))
            if event not in (MOVE_START, MOVE_END, INIT_START, INIT_END) or team not in (0, 1):
                raise ValueError(f"report line {text[:80]!r}")
            self._fence(event, team, tick, now)
        else:
            raise ValueError(f"report line {text[:80]!r}")

    def _fence(self, event: int, team: int, tick: int, now: float) -> None:
        name = self.names[team] if team < len(self.names) else f"team {team}"
        if event in (MOVE_START, INIT_START):
            self.running = (event, team, tick, now)
            left = self.limits.game_seconds - sum(self.spent[team])
            if left < self.limits.move_seconds:
                self.deadline = now + max(left, 0.0)
                self.reason = (
                    f"{name} exceeded {self.limits.game_seconds:g} s per game: its moves took "
                    f"more than that over the {self.tick_limit} ticks to tick {tick}"
                )
            else:
                self.deadline = now + self.limits.move_seconds
                what = "per tick" if event == MOVE_START else "to start a game's memory"
                self.reason = (
                    f"{name} exceeded {self.limits.move_seconds:g} s {what} at tick {tick}"
                )
            return
        if event == MOVE_END and self.running is not None:
            self.spent[team].append(now - self.running[3])
        self.running = None
        self.deadline, self.reason = now + self.limits.host_seconds, self._host_reason()
