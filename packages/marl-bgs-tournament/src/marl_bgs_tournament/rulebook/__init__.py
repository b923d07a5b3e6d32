"""The rulebook's automated checks of one entrant (rulebook v1, paper Table S7).

    import marl_bgs_tournament.rulebook as rb
    table = rb.check_entrant("entrant.mbgs")  # or (system, manifest)
    table[~table["passed"]]

`check_entrant` runs every check of the System's mode (`checks_of(mode)`: the checks every mode
has, `CHECKS`, and the mode's own from its rulebook parts, `marl_bgs_tournament.modes`) and
returns one row per check (columns `check`, `passed`, `value`, `limit`, `detail`); each check is
also a public function returning one `Row`. The rulebook's games play the mode's test layouts
(`RulebookParts.test_layouts`, Team Deathmatch's test maps 47-51; a mode without: all its
layouts, the first shape group of them):

play_limits        at 512 games at once, >= 5,000 game steps/s and <= 10 GB of device memory
information_limits Team Deathmatch's own (`rulebook.tdm`): a System reads only what its views
                   permit: enemy units that no living agent of its team can see are changed in
                   ways that must not matter (health, cooldown, statuses, last actions, the
                   enemy team's messages); its inputs must not change (else the engine leaks,
                   named by leaf) nor its actions and memory with the same keys and memory
                   (else the System reads something else)
memory_reset       `init(key)` is a pure function of the key (the same memory for the same key,
                   also after the System played other games), at most `MAX_MEMORY_PER_GAME` bytes
                   per game (the portable file format's limit)
weights_unchanged  a parametric System's weights hash the same before and after play, are not
                   copied into its memory (where play could change them), and for a file equal
                   the manifest's hashes
training_declared  the manifest declares its training, no test layout (maps 47-51) and no
                   scenario
full_games         whole games of the tick limit against random (a single-team mode: its own
                   enemies) at every batch size the file declares, none ending early where the
                   mode can keep them going (`RulebookParts.full_length`; Team Deathmatch:
                   the highest winning score): a failure late in a game (a "time bomb") shows.
                   Run through `marl_bgs_tournament.sandbox`, every move is timed against the
                   rulebook's limits (`sandbox.LIMITS`); run here, a program that never ends
                   hangs this process

The perturbation test, the memory and the weights checks share one recording: `games` games on
the test layouts, random against random, for `ticks` ticks (early in a game the teams do not see
each other, so every state has hidden units to change). The System is fed its team's inputs of
every recorded state in turn and keeps its memory, but does not steer these games: what a System
may react to is its inputs alone, so any reachable state serves, and every entrant is checked on
the same states without compiling the engine again. Hidden units keep their positions (moving
one changes sight lines) and dead ones are left alone.

Play limits on a GPU (`jax.default_backend() == "gpu"`) are measured as written: 512 games, the
System as team A against the engine's random System, `GPU_TICKS` ticks through one compiled loop
of `marl_bgs_eval.play.play_tick` (compiled first, timed after, the best of `TIMING_REPEATS`);
memory is the device's peak bytes in use, this process's so far (else the compiled loop's
`memory_analysis`). A System that cannot play 512 games at once fails.

On a CPU (a laptop, CI) a GPU's speed cannot be measured, so the rule is scaled: the same loop
runs at `CPU_BATCH` (16) games for `CPU_TICKS` ticks twice, the System against random and random
against random, timed alternately in the same run (best of `TIMING_REPEATS` each), and the
System passes when its game steps/s are at least `CPU_MIN_SPEED_RATIO` (0.2) of random against
random's: a tick with the System may take at most five times a random-vs-random tick, and the
machine's own speed cancels out of the ratio. Memory on a CPU is the `memory_analysis`
of the System's compiled `act` for 512 games (arguments + outputs + temporaries + code - aliased)
<= 10 GB; a System that cannot be traced at 512 games (a file exported without that batch size)
is measured at `CPU_BATCH` games and scaled linearly to 512. Measured on a shared 2-core CPU
(16 games x 32 ticks): random against random 17,000-34,000 steps/s (as busy as the machine was);
tdm-beta (as a System file) 0.33-0.37 of it, a small linear policy 0.75-0.81, the same policy
with 16 or 64 matmuls of 256 x 256 per tick 0.09 or 0.025.
"""

from marl_bgs_tournament.rulebook.checks import check_entrant, check_names, checks_of
from marl_bgs_tournament.rulebook.games import full_games
from marl_bgs_tournament.rulebook.limits import (
    CHECKS,
    COLUMNS,
    CPU_BATCH,
    CPU_MIN_SPEED_RATIO,
    CPU_TICKS,
    GAMES,
    GPU_TICKS,
    MANIFEST_CHECKS,
    MAX_DEVICE_BYTES,
    MAX_MEMORY_PER_GAME,
    MIN_STEPS_PER_S,
    MIN_WEIGHT_SIZE,
    PLAY_BATCH,
    RULEBOOK,
    TICK_LIMIT,
    TICKS,
    TIMING_REPEATS,
    Row,
)
from marl_bgs_tournament.rulebook.memory import memory_reset, weight_hashes, weights_unchanged
from marl_bgs_tournament.rulebook.play import act_memory_bytes, play_limits
from marl_bgs_tournament.rulebook.training import training_declared

__all__ = [
    "CHECKS",
    "COLUMNS",
    "CPU_BATCH",
    "CPU_MIN_SPEED_RATIO",
    "CPU_TICKS",
    "GAMES",
    "GPU_TICKS",
    "MANIFEST_CHECKS",
    "MAX_DEVICE_BYTES",
    "MAX_MEMORY_PER_GAME",
    "MIN_STEPS_PER_S",
    "MIN_WEIGHT_SIZE",
    "PLAY_BATCH",
    "RULEBOOK",
    "TICKS",
    "TICK_LIMIT",
    "TIMING_REPEATS",
    "Row",
    "act_memory_bytes",
    "check_entrant",
    "check_names",
    "checks_of",
    "full_games",
    "memory_reset",
    "play_limits",
    "training_declared",
    "weight_hashes",
    "weights_unchanged",
]
