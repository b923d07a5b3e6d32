"""The Two-Bridge field and every rule value, in the mode's coordinates (one owner for each).

Coordinates are the original's raw StarCraft II units (x to the right, y up). The paper gives no
raw map size, only that the playable corridor is a 32 x 32 crop of a 64 x 64 minimap; we take a
128-unit map, so the corridor is 64 x 64 raw units and a minimap cell 2 x 2 (cell (row, col) =
(floor(y / 2), floor(x / 2))). That makes the field larger than the mini-games', as the paper
says; at one unit per cell a uniform random team reached the beacon in 97% of Navigate episodes.
The raw distances carry over unchanged: beacon radius 5.0, attack range 6.0, a move command 2.0
away, 600 steps. What a step covers follows from the Marine's speed (3.15 raw units per second
at the Faster game speed, 22.4 game loops per second) and the step multiplier of 8 loops:
3.15 * 8 / 22.4 = 1.125 raw units. Damage likewise from the Marine's 6 damage per 0.61 s:
6 * (8 / 22.4) / 0.61 = 3.5 per step. docs/two-bridge.md derives each value.
"""

from __future__ import annotations

import numpy as np

FIELD = 64.0  # the field is FIELD x FIELD raw units
GRID = 32  # minimap cells per side
CELL = FIELD / GRID  # raw units per minimap cell
CLIFF_X = (30.0, 34.0)  # the impassable cliff spans these x, top to bottom...
BRIDGES_Y = ((14.0, 20.0), (44.0, 50.0))  # ...except on the two bridges

# Six spawn regions (x0, x1, y0, y1): R1-R3 on the left (top, middle, bottom), R4-R6 on the right.
REGIONS = np.array(
    [
        [6.0, 20.0, 46.0, 60.0],
        [6.0, 20.0, 26.0, 38.0],
        [6.0, 20.0, 4.0, 18.0],
        [44.0, 58.0, 46.0, 60.0],
        [44.0, 58.0, 26.0, 38.0],
        [44.0, 58.0, 4.0, 18.0],
    ],
    np.float32,
)
LEFT, RIGHT = (0, 1, 2), (3, 4, 5)

NUM_FRIENDS = 5
ENEMY_COUNTS = {"V1": 3, "V2": 5, "V3": 8}  # unit-count variants: enemies against 5 friends
MARINE_HEALTH = 45.0
MOVE_STEP = 1.125  # raw units a Marine covers in one step (see the module docstring)
DAMAGE = 3.5  # health one Marine's fire removes per step
ATTACK_RANGE = 6.0
SIGHT_RANGE = 9.0  # the Marine's sight: what fog of war (an option) lets a team see
BEACON_RADIUS = 5.0
TICK_LIMIT = 600

# Objective-proximity layouts: which entity stands alone on the left side; the other two take
# two different regions on the right. Names follow the paper's maps (V2_Base, ...).
ENTITIES = ("friends", "enemies", "beacon")
LAYOUTS = {"Base": "friends", "Combat": "beacon", "Navigate": "enemies"}
VARIANTS = tuple(f"{units}_{layout}" for units in ENEMY_COUNTS for layout in LAYOUTS)

# Outcome codes (0 while the game runs), mutually exclusive, checked in this order each step.
RUNNING, NAVIGATION_WIN, COMBAT_WIN, COMBAT_LOSS, TIMEOUT_LOSS = 0, 1, 2, 3, 4
OUTCOMES = ("running", "navigation win", "combat win", "combat loss", "timeout loss")

# Actions of one Marine: 0 no-op, 1-8 moves, 9 + j attack enemy slot j. The moves are the
# paper's offsets (dx, dy) in raw units, as unit vectors here (a step covers MOVE_STEP).
NUM_BASE_ACTIONS = 9
MOVE_OFFSETS = np.array(
    [[0, -2], [0, 2], [-2, 0], [2, 0], [2, -2], [-2, -2], [2, 2], [-2, 2]], np.float32
)
MOVE_DIRECTIONS = np.concatenate(
    [np.zeros((1, 2), np.float32), MOVE_OFFSETS / np.linalg.norm(MOVE_OFFSETS, axis=1)[:, None]]
)

# Team reward (the paper's MAPPO and QMIX "reduced" reward).
HEALTH_WEIGHT = 0.05
KILL_BONUS = 1.0
TERMINAL_REWARD = {NAVIGATION_WIN: 25.0, COMBAT_WIN: 10.0, COMBAT_LOSS: -10.0, TIMEOUT_LOSS: -15.0}

# Minimap channel 1 (player-relative) codes; a cell shows the largest code on it.
EMPTY, ALLY, NEUTRAL, ENEMY = 0.0, 1.0, 2.0, 3.0


def pathability() -> np.ndarray:
    """bool [GRID, GRID] (row = y, col = x): True where a Marine may stand."""
    centres = (np.arange(GRID, dtype=np.float32) + 0.5) * CELL
    x, y = np.meshgrid(centres, centres)
    on_cliff = (x > CLIFF_X[0]) & (x < CLIFF_X[1])
    on_bridge = np.zeros_like(on_cliff)
    for y0, y1 in BRIDGES_Y:
        on_bridge |= (y > y0) & (y < y1)
    return ~on_cliff | on_bridge


PATHABLE = pathability()
