"""The arena every mode plays in: a 20 x 10 field, round bodies, padded obstacles, nine moves.

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
# At most this many obstacles lie within MAX_STEP + BODY_RADIUS of any point of a map (checked
# when a map is read): movement sweeps only the obstacles a body can reach in one tick.
NEAR_OBSTACLES = 12

OBSTACLE_NONE = 0
OBSTACLE_PILLAR = 1
OBSTACLE_WALL = 2

# Geometric tolerance: touching is allowed, overlapping by more than this is not.
EPS = 1e-4

# Moves 0-8: stay, north, south, east, west, northeast, northwest, southeast, southwest.
NUM_MOVES = 9
# Index of each move after mirroring x -> MAP_WIDTH - x (east <-> west and so on).
MIRROR_MOVE = np.asarray((0, 1, 2, 4, 3, 6, 5, 8, 7), np.int32)

_s2 = float(np.sqrt(0.5))
# Unit vector of each move, world frame.
MOVE_VECTORS = np.array(
    [[0, 0], [0, 1], [0, -1], [1, 0], [-1, 0], [_s2, _s2], [-_s2, _s2], [_s2, -_s2], [-_s2, -_s2]],
    np.float32,
)
