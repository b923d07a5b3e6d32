"""Fixed shapes and constants of Team Deathmatch (static: changing them recompiles).

The arena's own constants (field size, bodies, obstacles, moves) live in `marl_bgs.core.arena`.
"""

from __future__ import annotations

TEAM_SIZE = 5
NUM_SLOTS = 2 * TEAM_SIZE

NUM_TARGETS = 1 + 2 * TEAM_SIZE
NUM_ULTIMATE = 2

# Outcome codes stored in GameState.outcome.
ONGOING, A_WINS, B_WINS, DRAW = 0, 1, 2, 3

# Spawn pads of the left edge, roster slot i on pad i; the right edge mirrors them.
SPAWN_PAD_X = 0.5
SPAWN_PAD_Y = (1.0, 3.0, 5.0, 7.0, 9.0)
