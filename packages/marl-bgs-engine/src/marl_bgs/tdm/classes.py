"""The class table (paper Table S3) as arrays indexed by class id (0 = unused slot)."""

from __future__ import annotations

import numpy as np

UNUSED, MAGE, WARRIOR, HUNTER, ROGUE, PRIEST = range(6)
CLASS_NAMES = ("unused", "mage", "warrior", "hunter", "rogue", "priest")
CLASS_LETTERS = {"M": MAGE, "W": WARRIOR, "H": HUNTER, "R": ROGUE, "P": PRIEST}
LETTERS = "".join(CLASS_LETTERS)  # "MWHRP": class id k is LETTERS[k - 1]

_C = np.float32
#                        unused  mage  warrior hunter rogue priest
MAX_HEALTH = np.array([0.0, 80.0, 200.0, 100.0, 100.0, 100.0], _C)
SPEED = np.array([0.0, 1.0, 1.0, 1.0, 1.3, 1.0], _C)
SIGHT = np.array([0.0, 6.0, 6.0, 6.5, 6.0, 6.0], _C)
BASIC_RANGE = np.array([0.0, 3.0, 1.5, 3.5, 1.5, 3.0], _C)
BASIC_DAMAGE = np.array([0.0, 13.0, 8.0, 6.0, 12.0, 0.0], _C)
BASIC_HEAL = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 8.0], _C)
BASIC_ON_ALLY = np.array([False, False, False, False, False, True])
ULT_RANGE = np.array([0.0, 0.0, 5.75, 3.0, 1.5, 5.75], _C)  # 0: self-cast (Burst)
ULT_DAMAGE = np.array([0.0, 0.0, 20.0, 10.0, 36.0, 0.0], _C)
ULT_HEAL = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 200.0], _C)
ULT_ON_ALLY = np.array([False, False, False, False, False, True])
ULT_TARGETED = np.array([False, False, True, True, True, True])
ULT_COOLDOWN = np.array([0, 30, 30, 30, 30, 30], np.int32)
OOC_DELAY = np.array([0, 5, 5, 5, 3, 5], np.int32)
OOC_REGEN = np.array([0.0, 0.04, 0.04, 0.04, 0.04, 0.04], _C)

# Passives and status values.
AURA_RADIUS = 2.0
MAGE_AURA_MULT = 1.15
WARRIOR_AURA_MULT = 0.85
AURA_STACK_CAP = 2
BURST_MULT = 1.5
BURST_TICKS = 5
CHARGE_STUN_TICKS = 1
CHARGE_SLOW_MULT = 0.5
CHARGE_SLOW_TICKS = 5
HUNTER_SLOW_MULT = 0.85
HUNTER_SLOW_TICKS = 1
TRAP_TICKS = 4
POISON_STUN_TICKS = 1
POISON_SLOW_MULT = 0.5
POISON_SLOW_TICKS = 5
POISON_ANTIHEAL_MULT = 0.5
POISON_ANTIHEAL_TICKS = 4
FREEDOM_FLOOR = 0.85
FREEDOM_TICKS = 1
MIN_SPEED_FRACTION = 0.2

# Largest value each status duration can hold right after it is applied (the shield's cap is the
# rule value `shield_ticks`, recovery's the class's `OOC_DELAY`).
DURATION_CAPS = {
    "stun": max(CHARGE_STUN_TICKS, POISON_STUN_TICKS),
    "trap": TRAP_TICKS,
    "slow_charge": CHARGE_SLOW_TICKS,
    "slow_hunter": HUNTER_SLOW_TICKS,
    "slow_poison": POISON_SLOW_TICKS,
    "antiheal": POISON_ANTIHEAL_TICKS,
    "freedom": FREEDOM_TICKS,
    "burst": BURST_TICKS,
    "cooldown": int(ULT_COOLDOWN.max()),
}


def class_id(value: object, field: str = "class") -> int:
    """A class id (1-5) from a letter ("M"), a name ("mage") or an id; ValueError naming `field`."""
    if isinstance(value, str):
        if value.upper() in CLASS_LETTERS:
            return CLASS_LETTERS[value.upper()]
        if value.lower() in CLASS_NAMES[1:]:
            return CLASS_NAMES.index(value.lower())
    elif isinstance(value, int | np.integer) and not isinstance(value, bool) and 1 <= value <= 5:
        return int(value)
    raise ValueError(
        f"{field}: unknown class {value!r}; allowed letters M, W, H, R, P, their names"
        f" ({', '.join(CLASS_NAMES[1:])}) or ids 1-5"
    )


def parse_roster(
    roster: str | tuple[int, ...] | list[int], field: str = "roster"
) -> tuple[int, ...]:
    """Turn "MWHRP" or class ids into a tuple of 1-5 class ids; raise ValueError naming `field`."""
    if isinstance(roster, str):
        bad = [c for c in roster.upper() if c not in CLASS_LETTERS]
        if bad:
            raise ValueError(
                f"{field}: unknown class letter(s) {bad!r}; allowed letters are M, W, H, R, P"
            )
        ids = tuple(CLASS_LETTERS[c] for c in roster.upper())
    else:
        ids = tuple(int(c) for c in roster)
        bad_ids = [c for c in ids if c not in range(1, 6)]
        if bad_ids:
            raise ValueError(f"{field}: unknown class id(s) {bad_ids}; allowed ids are 1-5")
    if not 1 <= len(ids) <= 5:
        raise ValueError(f"{field}: a team has 1 to 5 agents, got {len(ids)}")
    return ids
