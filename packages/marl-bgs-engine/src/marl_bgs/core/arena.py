"""An open arena a mode may play in: a 20 x 10 field, round bodies, padded obstacles, nine moves.

With `geometry.py` and `movement.py` it is there to be reused, not required: a mode with a field
of its own (lanes, bridges, a grid) uses none of the three.

Static: changing any of these changes shapes or geometry and recompiles.
"""

from __future__ import annotations

import numpy as np

MAP_WIDTH = 20.0
MAP_HEIGHT = 10.0
BODY_RADIUS = 0.5
MAX_OBSTACLES = 32
# The longest move of one tick (the largest speed a mode may give a body).
MAX_STEP = 2.0
# Movement sweeps only the obstacles a body can reach in one tick: each game keeps, for every
# NEAR_CELL x NEAR_CELL cell of the field, the NEAR_OBSTACLES obstacles nearest to the cell's
# centre. When a map is read it is checked that no more than NEAR_OBSTACLES obstacles lie within
# MAX_STEP + BODY_RADIUS of any point of a cell, so the table holds every one a body can reach.
NEAR_OBSTACLES = 12
NEAR_CELL = 1.0
NEAR_GRID = (round(MAP_WIDTH / NEAR_CELL), round(MAP_HEIGHT / NEAR_CELL))

OBSTACLE_NONE = 0
OBSTACLE_PILLAR = 1
OBSTACLE_WALL = 2

# Geometric tolerance: touching is allowed, overlapping by more than this is not.
EPS = 1e-4

# Moves 0-8: stay, north, south, east, west, northeast, northwest, southeast, southwest.
NUM_MOVES = 9
MOVE_NAMES = (
    "stay", "north", "south", "east", "west", "northeast", "northwest", "southeast", "southwest",
)  # fmt: skip
# Index of each move after mirroring x -> MAP_WIDTH - x (east <-> west and so on).
MIRROR_MOVE = np.asarray((0, 1, 2, 4, 3, 6, 5, 8, 7), np.int32)

_s2 = float(np.sqrt(0.5))
# Unit vector of each move, world frame.
MOVE_VECTORS = np.array(
    [[0, 0], [0, 1], [0, -1], [1, 0], [-1, 0], [_s2, _s2], [-_s2, _s2], [_s2, -_s2], [-_s2, -_s2]],
    np.float32,
)
