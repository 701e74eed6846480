"""`dagpilot serve extender`: the live view (its own watches, from --kubeconfig), the
registry's current model, the extender and its HTTPS server, put together and served until
stopped.

The process first pins itself to `cpus` (every thread it has, and through the mask every
thread it starts: one CPU keeps the GIL's hand-offs between its threads on one core,
docs/SERVING.md). The view and the model are made before anything listens: a kubeconfig that
cannot reach or be trusted by the API server, or a model that does not load, is an error at
start.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dagpilot.serve.cpu_pinning import pin
from dagpilot.serve.extender import Extender, Rank
from dagpilot.serve.extender_app import routes
from dagpilot.serve.https_server import HttpsServer
from dagpilot.serve.tls import AllowList, server_context

if TYPE_CHECKING:
    from dagpilot.live.view import LiveView

log = logging.getLogger(__name__)

SCHEDULER_CLIENT = "CN=dagpilot-extender-client"
DEFAULT_MODELS = Path("models")


@dataclass(frozen=True, slots=True)
class ExtenderConfig:
    kubeconfig: Path
    port: int
    tls_cert: Path
    tls_key: Path
    client_ca: Path
    models: Path = DEFAULT_MODELS
    host: str = "0.0.0.0"
    allowed_subjects: tuple[str, ...] = (SCHEDULER_CLIENT,)
    start_deadline_s: float = 30.0
    cpus: frozenset[int] | None = None  # pinned to these before anything starts


class ExtenderProcess:
    def __init__(self, config: ExtenderConfig, view: LiveView | None = None,
                 rank: Rank | None = None) -> None:
        """`view` (started) and `rank` replace the process's own (tests); the caller then
        closes the view."""
        self.cpus = pin(config.cpus) if config.cpus is not None else None
        allowed = AllowList.of(config.allowed_subjects)
        context = server_context(config.tls_cert, config.tls_key, config.client_ca)
        self._close: Callable[[], None] = lambda: None
        own_model = rank is None
        if rank is None:
            rank = _current_model(config.models)
        if view is None:
            view = self._live_view(config)
        if own_model:  # the start-up heap, the listed inventory included, out of full
            from dagpilot.policy.process import settle_heap  # noqa: PLC0415 (torch)
            settle_heap()  # collections' sight (policy/process.py)
        self.view = view
        self.extender = Extender(view, rank, view.sync, view.pending_pod)
        self.server = HttpsServer(config.host, config.port, context,
                                  routes(self.extender, allowed))
        log.info("extender on %s:%d for %s, %d nodes in view", config.host, self.server.port,
                 allowed, len(view.cluster.nodes))

    def _live_view(self, config: ExtenderConfig) -> LiveView:
        from dagpilot.core.config import PhysicsParameters  # noqa: PLC0415
        from dagpilot.live.view import LiveView  # noqa: PLC0415 (the live extra's client)
        from dagpilot.sim import physics  # noqa: PLC0415

        params = PhysicsParameters()
        view = LiveView.connect(config.kubeconfig, lambda a, b: physics.rtt_ms(
            physics.distance(a, b), params))
        view.start(config.start_deadline_s)
        self._close = view.close
        return view

    @property
    def port(self) -> int:
        return self.server.port

    def serve(self, stop: threading.Event) -> None:
        """Serves until `stop` is set, then closes the listener and the view it made."""
        try:
            self.server.serve_until(stop, "extender")
        finally:
            self._close()


def _current_model(models: Path) -> Rank:
    from dagpilot.agent import load_scheduler  # noqa: PLC0415 (torch)
    from dagpilot.policy.process import SCHEDULER_TORCH_THREADS, set_torch_threads  # noqa: PLC0415

    set_torch_threads(SCHEDULER_TORCH_THREADS)
    return load_scheduler(models).agent.rank
