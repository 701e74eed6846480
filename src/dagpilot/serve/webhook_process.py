"""`dagpilot serve webhook`: the key file, the run history, the replay cache, the API server
client (the webhook's own ServiceAccount, from --kubeconfig) and the HTTPS server, put
together and served until stopped.

The kubeconfig is checked at start (GET /version), so a wrong one fails at once, not at the
first submission. Without --history the webhook only sets the scheduler name.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dagpilot.serve.admission import SCHEDULER_NAME
from dagpilot.serve.https_server import HttpsServer
from dagpilot.serve.keys import MAX_KEY_FILE_BYTES, KeyRing, parse_keys
from dagpilot.serve.replay import NonceCache
from dagpilot.serve.run_history import EMPTY, MAX_HISTORY_BYTES, RunHistory, parse_history
from dagpilot.serve.submission import Create, Submissions
from dagpilot.serve.tls import AllowList, server_context
from dagpilot.serve.watched_file import WatchedFile
from dagpilot.serve.webhook_app import routes

log = logging.getLogger(__name__)

DEFAULT_NAMESPACE = "dagpilot"
API_SERVER_CLIENT = "CN=dagpilot-webhook-client"
SUBMIT_CLIENT = "CN=dagpilot-submit"


@dataclass(frozen=True, slots=True)
class WebhookConfig:
    kubeconfig: Path
    port: int
    tls_cert: Path
    tls_key: Path
    client_ca: Path
    keys: Path
    namespace: str = DEFAULT_NAMESPACE
    history: Path | None = None
    host: str = "0.0.0.0"
    admission_clients: tuple[str, ...] = (API_SERVER_CLIENT,)
    submit_clients: tuple[str, ...] = (SUBMIT_CLIENT,)
    scheduler_name: str = SCHEDULER_NAME


class WebhookProcess:
    def __init__(self, config: WebhookConfig, create: Create | None = None) -> None:
        """`create` replaces the API server client (tests); every file is read here, so a bad
        one is an error before anything listens."""
        admission_clients = AllowList.of(config.admission_clients)
        submit_clients = AllowList.of(config.submit_clients)
        context = server_context(config.tls_cert, config.tls_key, config.client_ca)
        self.keys: WatchedFile[KeyRing] = WatchedFile(config.keys, parse_keys,
                                                      MAX_KEY_FILE_BYTES)
        history = self._history(config.history)
        self._close: Callable[[], None] = lambda: None
        if create is None:
            create = self._api_server(config.kubeconfig)
        self.submissions = Submissions(self.keys.current, NonceCache(), create,
                                       config.namespace)
        self.server = HttpsServer(config.host, config.port, context,
                                  routes(self.submissions, history, admission_clients,
                                         submit_clients, config.scheduler_name))
        log.info("webhook on %s:%d: admission from %s, submissions from %s into %s",
                 config.host, self.server.port, admission_clients, submit_clients,
                 config.namespace)

    @staticmethod
    def _history(path: Path | None) -> Callable[[], RunHistory]:
        if path is None:
            return lambda: EMPTY
        return WatchedFile(path, parse_history, MAX_HISTORY_BYTES).current

    def _api_server(self, kubeconfig: Path) -> Create:
        from dagpilot.live.kube_api import KubeApi  # noqa: PLC0415 (the live extra's client)

        api = KubeApi(kubeconfig)
        api.version()
        self._close = api.close
        return api.create_workflow

    @property
    def port(self) -> int:
        return self.server.port

    def serve(self, stop: threading.Event) -> None:
        """Serves until `stop` is set, then closes the listener and the API client."""
        try:
            self.server.serve_until(stop, "webhook")
        finally:
            self._close()
