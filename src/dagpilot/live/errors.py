"""The live side's errors: a server that cannot be reached or trusted, named with the reason."""

from __future__ import annotations

from dagpilot.core.errors import DagpilotError

TOO_MANY_REQUESTS = 429


class KubeApiError(DagpilotError):
    """The API server could not be reached, trusted or asked (names the server and why)."""

    def __init__(self, server: str, message: str, status: int | None = None) -> None:
        self.server = server
        self.message = message
        self.status = status  # the HTTP status when the server answered, else None
        super().__init__(f"kube-apiserver {server}: {message}")

    @property
    def refused(self) -> bool:
        """The server answered 4xx (429 aside): the same request would be refused again. Any
        other failure (no answer, 429, 5xx) may pass."""
        status = self.status
        return status is not None and 400 <= status < 500 and status != TOO_MANY_REQUESTS


class PrometheusError(DagpilotError):
    """Prometheus did not answer a query in time, or answered something unusable."""

    def __init__(self, url: str, message: str) -> None:
        self.url = url
        self.message = message
        super().__init__(f"prometheus {url}: {message}")
