"""The live side's errors: a server that cannot be reached or trusted, named with the reason."""

from __future__ import annotations

from dagpilot.core.errors import DagpilotError


class KubeApiError(DagpilotError):
    """The API server could not be reached, trusted or asked (names the server and why)."""

    def __init__(self, server: str, message: str, status: int | None = None) -> None:
        self.server = server
        self.message = message
        self.status = status  # the HTTP status when the server answered, else None
        super().__init__(f"kube-apiserver {server}: {message}")


class PrometheusError(DagpilotError):
    """Prometheus did not answer a query in time, or answered something unusable."""

    def __init__(self, url: str, message: str) -> None:
        self.url = url
        self.message = message
        super().__init__(f"prometheus {url}: {message}")
