"""The engine's error for bad input: the message names the field and the allowed values."""

from __future__ import annotations


class ConfigError(ValueError):
    """An invalid setting, state or input; the message names the field and the allowed values."""
