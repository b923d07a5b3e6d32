"""The rulebook's limits (v2; paper Table S7), its checks' names and the shape of their results."""

from __future__ import annotations

from typing import Any, NamedTuple

from marl_bgs_tournament.portable import MAX_MEMORY_BYTES

RULEBOOK = "v2"  # v2: the full_games check and the sandbox's limits
TICK_LIMIT = 300  # ticks of a rulebook game (a season's default)
PLAY_BATCH = 512  # games at once for the play limits
MIN_STEPS_PER_S = 5_000.0  # game steps (games x ticks) per second, GPU
MAX_DEVICE_BYTES = 10 * 10**9  # 10 GB of device memory at PLAY_BATCH games
MAX_MEMORY_PER_GAME = MAX_MEMORY_BYTES  # memory of one game (the portable file format's limit)
GPU_TICKS = 64  # ticks timed at PLAY_BATCH games on a GPU
CPU_BATCH = 16  # the scaled CPU rule's games...
CPU_TICKS = 32  # ...and ticks
CPU_MIN_SPEED_RATIO = 0.2  # the System's steps/s over random-vs-random's, same run, CPU
TIMING_REPEATS = 3  # timed runs of each loop; the fastest counts
GAMES = 16  # games of the shared recording (information, memory and weights checks)
TICKS = 8  # its ticks: every recorded state is checked
MIN_WEIGHT_SIZE = 8  # weight leaves this small (or constant) are not searched for in memory
# every mode's checks, in order; a mode's own (`RulebookParts.checks`, e.g. Team Deathmatch's
# information_limits) run after play_limits (`checks_of`)
CHECKS = ("full_games", "play_limits", "memory_reset", "weights_unchanged", "training_declared")
MANIFEST_CHECKS = ("training_declared",)  # checks that read the manifest alone, no program
COLUMNS = ("check", "passed", "value", "limit", "detail")


class Row(NamedTuple):
    """One check's result: a row of `check_entrant`'s table."""

    check: str
    passed: bool
    value: Any
    limit: Any
    detail: str
