"""Field checks for values read from season files: each returns the value or raises
SeasonDataError naming the field."""

from __future__ import annotations

from typing import Any

from marl_bgs.core.checks import check_float, check_int, shown
from marl_bgs_tournament.web.files import SeasonDataError

MAX_TEXT = 200
MAX_INT = 2**63 - 1


def text(value: Any, field: str, max_len: int = MAX_TEXT) -> str:
    """A text of 1 to `max_len` characters."""
    if not isinstance(value, str) or not 0 < len(value) <= max_len:
        raise SeasonDataError(f"{field}: expected a text of 1-{max_len} characters, got "
                              f"{shown(value)}")  # fmt: skip
    return value


def integer(value: Any, field: str, low: int = -MAX_INT, high: int = MAX_INT) -> int:
    """An integer (not a bool) in [low, high]."""
    return check_int(value, field, low, high, error=SeasonDataError)


def number(value: Any, field: str) -> float:
    """A finite number (not a bool)."""
    return check_float(value, field, error=SeasonDataError)


def boolean(value: Any, field: str) -> bool:
    """true or false."""
    if not isinstance(value, bool):
        raise SeasonDataError(f"{field}: expected true or false, got {shown(value)}")
    return value


def mapping(value: Any, field: str) -> dict[str, Any]:
    """A JSON object."""
    if not isinstance(value, dict):
        raise SeasonDataError(f"{field}: expected an object, got {type(value).__name__}")
    return value


def sequence(value: Any, field: str, max_len: int = 100_000) -> list[Any]:
    """A JSON list of at most `max_len` items."""
    if not isinstance(value, list) or len(value) > max_len:
        raise SeasonDataError(f"{field}: expected a list of at most {max_len} items")
    return value
