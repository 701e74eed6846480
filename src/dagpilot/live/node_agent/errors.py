"""The node agent's own error: what it could not do (serve its port, read its settings)."""

from __future__ import annotations

from dagpilot.core.errors import DagpilotError


class NodeAgentError(DagpilotError):
    def __init__(self, what: str, message: str) -> None:
        self.what = what
        self.message = message
        super().__init__(f"node-agent: {what}: {message}")
