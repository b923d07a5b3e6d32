"""Hearing the game loop move, for a watchdog outside: `watch(event, tick)` on the host.

With a watch, `play_schedule` compiles its programs before any game starts, then plays one
tick of the batch per call and tells the watch around each: `INIT_START`/`INIT_END` around the
first games' memory (`init`), `TICK_START`/`TICK_END` around each tick (both teams' moves, the
engine's step and the memory of games that start in its slots). A watchdog that hears
`TICK_START` at tick 41 and then nothing for 2 s knows that tick hangs. No host call enters the
compiled programs, so they stay as cacheable as without a watch (a program with host
callbacks is never written to JAX's persistent compilation cache).
"""

from __future__ import annotations

from collections.abc import Callable

Watch = Callable[[int, int], None]  # (event, tick) on the host
INIT_START, INIT_END, TICK_START, TICK_END = range(4)
