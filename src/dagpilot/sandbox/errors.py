"""The sandbox's one error: which component failed, and where its log is."""

from __future__ import annotations

from dagpilot.core.errors import DagpilotError


class SandboxError(DagpilotError):
    """A component that could not be built, started or reached; names it and its log file."""

    def __init__(self, component: str, message: str) -> None:
        self.component = component
        self.message = message
        super().__init__(f"{component}: {message}")
