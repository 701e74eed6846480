"""Serving's errors: a server that cannot start, a submission the endpoint refused."""

from __future__ import annotations

from dagpilot.core.errors import DagpilotError


class ServeError(DagpilotError):
    """A serving process or client could not do what it was asked (names where and why)."""

    def __init__(self, where: str, message: str) -> None:
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}")
