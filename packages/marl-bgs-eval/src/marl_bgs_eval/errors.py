"""The one error type of marl-bgs-eval: bad input, with a message naming the field."""

from __future__ import annotations


class EvalError(ValueError):
    """Invalid evaluation input; the message names the field, the System or the column."""
