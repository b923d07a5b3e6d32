"""Fixed shapes and world constants of Team Deathmatch (static: changing them recompiles)."""

from __future__ import annotations

MAP_WIDTH = 20.0
MAP_HEIGHT = 10.0
BODY_RADIUS = 0.5
TEAM_SIZE = 5
NUM_SLOTS = 2 * TEAM_SIZE
MAX_OBSTACLES = 32

NUM_MOVES = 9
NUM_TARGETS = 1 + 2 * TEAM_SIZE
NUM_ULTIMATE = 2
NUM_ACTIONS = NUM_MOVES * NUM_TARGETS * NUM_ULTIMATE  # 198

MOVE_NAMES = (
    "stay", "north", "south", "east", "west", "northeast", "northwest", "southeast", "southwest",
)  # fmt: skip
# Index of each move after mirroring x -> MAP_WIDTH - x (east <-> west and so on).
MIRRORED_MOVE = (0, 1, 2, 4, 3, 6, 5, 8, 7)

OBSTACLE_NONE = 0
OBSTACLE_PILLAR = 1
OBSTACLE_WALL = 2

# Outcome codes stored in GameState.outcome.
ONGOING, A_WINS, B_WINS, DRAW = 0, 1, 2, 3

# Spawn pads of the left edge, roster slot i on pad i; the right edge mirrors them.
SPAWN_PAD_X = 0.5
SPAWN_PAD_Y = (1.0, 3.0, 5.0, 7.0, 9.0)

# Geometric tolerance: touching is allowed, overlapping by more than this is not.
EPS = 1e-4
