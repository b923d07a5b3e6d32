"""The one error the tournament raises for bad input: it names the field and what is allowed."""

from __future__ import annotations


class TournamentError(ValueError):
    """A season setting, an entrant, an uploaded file or a season folder is not acceptable."""
