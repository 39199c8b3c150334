"""Errors a user or a model can cause, each carrying one sentence for the surface.

Domain code raises these; surfaces turn them into a message and an exit status
(CLI) or an error result (MCP, chat). Anything else escaping is a bug.
"""

from __future__ import annotations


class LocalmemError(Exception):
    """Base class: `str(error)` is the one sentence shown to the user."""

    exit_code = 1


class InvalidInput(LocalmemError):
    """The input was refused (bad slug, empty or overlong text, unknown kind...)."""


class NotFound(LocalmemError):
    """A named thing (memory id, topic, database) does not exist."""


class StoreUnavailable(LocalmemError):
    """The store cannot be opened or read (missing database, unreadable file)."""


class Conflict(LocalmemError):
    """The request conflicts with what is stored (another git origin, a stale entry...)."""
