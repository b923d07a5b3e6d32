"""The service's clock on a child: what the child reports, and when it has taken too long.

The child writes one line per report on its report pipe:

    tick <event> <tick>       a tick (or the first games' memory) starts or ends
                              (`marl_bgs_eval.watch`)
    phase <label>             host work begins (loading, compiling, a rulebook check)
    games <tick limit> <who>  the games that follow: their tick limit and who plays them

`Watchdog` turns them into a deadline and the reason to give if it passes: within a tick
`move_seconds` (and what is left of `game_seconds` over the last tick_limit ticks), else
`host_seconds` from the latest report. Exactly at a limit still passes.
"""

from __future__ import annotations

from collections import deque

from marl_bgs_eval.watch import INIT_END, INIT_START, TICK_END, TICK_START
from marl_bgs_tournament.sandbox.limits import Limits

MAX_LINE = 4096  # longest report line taken


def tick_line(event: int, tick: int) -> bytes:
    """A report line for a `marl_bgs_eval.watch` event."""
    return f"tick {event} {tick}\n".encode()


def one_line(text: str) -> str:
    """`text` on one line of at most 200 characters."""
    return " ".join(text.split())[:200]


def phase_line(label: str) -> bytes:
    """A report line for the start of host work."""
    return f"phase {one_line(label)}\n".encode()


def games_line(tick_limit: int, who: str) -> bytes:
    """A report line naming the games that follow."""
    return f"games {int(tick_limit)} {one_line(who)}\n".encode()


class Watchdog:
    """Deadlines of one child whose games are played by `who` with `tick_limit` ticks."""

    def __init__(self, limits: Limits, who: str, tick_limit: int, now: float) -> None:
        self.limits = limits
        self.phase = "starting"
        self.games(who, tick_limit)
        self._host(now)

    def games(self, who: str, tick_limit: int) -> None:
        """The games that follow: who plays them and their tick limit."""
        self.who, self.tick_limit = who, int(tick_limit)
        # A game's ticks are played in a row, one call per tick of its batch: any game lies
        # within the latest tick_limit ticks, the running one and tick_limit - 1 before it.
        self.spent: deque[float] = deque(maxlen=max(self.tick_limit - 1, 1))
        self.started: float | None = None

    def _host(self, now: float) -> None:
        self.started = None
        self.deadline = now + self.limits.host_seconds
        self.reason = f"exceeded {self.limits.host_seconds:g} s of host work ({self.phase})"

    def expired(self, now: float) -> bool:
        """Whether the deadline has passed (exactly at it has not)."""
        return now > self.deadline

    def line(self, raw: bytes, now: float) -> None:
        """Take one report line (ValueError for a malformed one)."""
        text = raw.decode("ascii").strip()
        kind, _, rest = text.partition(" ")
        if kind == "phase":
            self.phase = rest
            self._host(now)
        elif kind == "games":
            limit, _, who = rest.partition(" ")
            self.games(who, int(limit))
            self._host(now)
        elif kind == "tick":
            event, tick = (int(x) for x in rest.split(" "))
            if event not in (INIT_START, INIT_END, TICK_START, TICK_END):
                raise ValueError(f"report line {text[:80]!r}")
            self._tick(event, tick, now)
        else:
            raise ValueError(f"report line {text[:80]!r}")

    def _tick(self, event: int, tick: int, now: float) -> None:
        lim = self.limits
        if event == INIT_START:
            self.started, self.deadline = now, now + lim.move_seconds
            self.reason = f"{self.who} exceeded {lim.move_seconds:g} s to start the games' memory"
        elif event == TICK_START:
            self.started = now
            left = lim.game_seconds - sum(self.spent)
            if left < lim.move_seconds:
                self.deadline = now + max(left, 0.0)
                self.reason = (
                    f"{self.who} exceeded {lim.game_seconds:g} s per game: {self.tick_limit} "
                    f"ticks in a row took longer, to tick {tick}"
                )
            else:
                self.deadline = now + lim.move_seconds
                self.reason = f"{self.who} exceeded {lim.move_seconds:g} s per tick at tick {tick}"
        else:
            if event == TICK_END and self.started is not None:
                self.spent.append(now - self.started)
            self._host(now)
