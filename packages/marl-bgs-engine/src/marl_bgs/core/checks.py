"""Host-side checks of scalar settings, one policy for every field of every mode.

Python and numpy scalars are treated alike: an integer field takes `int` or any `np.integer`, a
number field also takes `float` or `np.floating`, a flag takes `bool` or `np.bool_`. A `bool` is
never an integer, and NaN, infinities and values outside the field's range are refused. Every
refusal is a `ConfigError` (or the `error` class a caller names) whose message starts with the
field's name. Every package checks its scalars with these functions.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from marl_bgs.core.errors import ConfigError


def shown(value: Any, limit: int = 60) -> str:
    """`repr(value)` cut to `limit` characters, so a hostile value cannot flood a message."""
    if isinstance(value, int) and value.bit_length() > 4 * limit:
        return f"an integer of {value.bit_length()} bits"  # too long to print (4300 digits max)
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def did_you_mean(value: Any, choices: Iterable[str]) -> str:
    """The hint " (did you mean 'x'?)" for an error message: the one of `choices` closest to a
    misspelled name (`difflib`, ignoring case); "" when none is close or `value` is no string."""
    if not isinstance(value, str):
        return ""
    by_lower = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(value.lower()[:200], list(by_lower), n=1, cutoff=0.6)
    if not close or value in by_lower.values():
        return ""
    return f" (did you mean {by_lower[close[0]]!r}?)"


def check_int(
    value: Any, field: str, lo: int, hi: int | None = None, *, error: type[Exception] = ConfigError
) -> int:
    """`value` as a Python int in [lo, hi] (hi=None: no upper bound); else `error` naming it."""
    span = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
    integer = isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)
    if not integer or value < lo or (hi is not None and value > hi):
        raise error(f"{field}: expected an integer {span}, got {shown(value)}")
    return int(value)


def check_float(
    value: Any, field: str, lo: float = -math.inf, hi: float = math.inf, *,
    error: type[Exception] = ConfigError,
) -> float:  # fmt: skip
    """`value` as a finite Python float in [lo, hi] (no bounds: any finite number); integers are
    accepted as numbers; else `error` naming the field."""
    span = "" if (lo, hi) == (-math.inf, math.inf) else f" in [{lo}, {hi}]"
    numeric = int | float | np.integer | np.floating
    if isinstance(value, bool | np.bool_) or not isinstance(value, numeric):
        raise error(f"{field}: expected a finite number{span}, got {shown(value)}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number) or not lo <= number <= hi:
        raise error(f"{field}: expected a finite number{span}, got {shown(value)}")
    return number


def check_bool(value: Any, field: str, *, error: type[Exception] = ConfigError) -> bool:
    """`value` as a Python bool (True/False or a numpy bool scalar; 0 and 1 are not flags)."""
    if not isinstance(value, bool | np.bool_):
        raise error(f"{field}: expected True or False, got {shown(value)}")
    return bool(value)
