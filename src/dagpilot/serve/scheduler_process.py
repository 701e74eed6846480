"""`dagpilot serve scheduler`: everything the custom scheduler runs, built from its settings.

    process = SchedulerProcess(SchedulerConfig(kubeconfig=...))
    process.start()            # pin CPUs, load the model, list the cluster, take the Lease
    process.run(stop)          # until stop is set; then process.close()

The order matters for an SRE: the process pins itself to `cpus` first (every thread it has, and
through the mask every thread it starts), settles torch on one thread, loads and warms up the
model (a missing or refused one is logged and the fallback decides until one loads), starts
/metrics, then the view (its first lists), freezes the start-up heap (the model, the client's
modules and the listed inventory: a full collection would otherwise walk them all, pauses of
about 50 ms while serving 1,000 nodes, 12 ms frozen, that land in some decision or bind), then
the leader election and the loop.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

from dagpilot.core.config import PhysicsParameters
from dagpilot.journal import DEFAULT_KEEP, DEFAULT_MAX_BYTES, Journal
from dagpilot.live.view import TopologyRtt
from dagpilot.policy.process import SCHEDULER_TORCH_THREADS, set_torch_threads, settle_heap
from dagpilot.serve.binder import Binder
from dagpilot.serve.canary_metrics import CanaryMetrics
from dagpilot.serve.canary_reload import CanaryModel
from dagpilot.serve.cpu_pinning import pin
from dagpilot.serve.deadline import DEFAULT_DEADLINE_S, DeadlineRunner
from dagpilot.serve.decisions import Decider, PolicySource
from dagpilot.serve.fallback import Fallback
from dagpilot.serve.leader import AlwaysLeader, LeaderElector, LeaseConfig
from dagpilot.serve.model_by_node import NodeSetDecider
from dagpilot.serve.model_reload import ModelPolicy
from dagpilot.serve.scheduler_loop import LoopConfig, SchedulerLoop
from dagpilot.serve.scheduler_view import SchedulerView
from dagpilot.serve.serve_metrics import SchedulerMetrics
from dagpilot.serve.shadow import ShadowLoop
from dagpilot.sim import physics

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SchedulerConfig:
    kubeconfig: Path
    prometheus: str | None = None
    models: Path = Path("models")
    scheduler_name: str = "dagpilot"
    shadow: bool = False
    shadow_of: str = "default-scheduler"  # whose pods shadow mode follows
    cpus: frozenset[int] | None = None
    deadline_s: float = DEFAULT_DEADLINE_S
    metrics_port: int | None = 10259  # None: no /metrics
    metrics_address: str = "0.0.0.0"
    journal: Path | None = None
    journal_max_bytes: int = DEFAULT_MAX_BYTES
    journal_keep: int = DEFAULT_KEEP
    leader_elect: bool = True
    lease: LeaseConfig | None = None  # None: LeaseConfig(namespace, this host and pid)
    lease_namespace: str = "dagpilot"
    reload_period_s: float = 5.0
    start_timeout_s: float = 30.0


def topology_rtt_ms() -> TopologyRtt:
    """The simulator's network model, for node pairs the ping mesh has not measured."""
    params = PhysicsParameters()
    return lambda a, b: physics.rtt_ms(physics.distance(a, b), params)


class SchedulerProcess:
    def __init__(self, config: SchedulerConfig, source: PolicySource | None = None) -> None:
        """`source` replaces the registry's model (tests: a policy that raises or stalls)."""
        self.config = config
        self._source = source
        self.metrics = SchedulerMetrics()
        self.metrics_port: int | None = None
        self.cpus: frozenset[int] | None = None
        self.models: ModelPolicy | None = None
        self.canary: CanaryModel | None = None  # ROOT/canary.json: a second version's nodes
        self.view: SchedulerView | None = None
        self.leader: LeaderElector | AlwaysLeader = AlwaysLeader()
        self.binder: Binder | None = None
        self.journal: Journal | None = None
        self.loop: SchedulerLoop | ShadowLoop | None = None
        self._runner: DeadlineRunner | None = None

    def start(self) -> None:
        config = self.config
        if config.cpus is not None:
            self.cpus = pin(config.cpus)
        set_torch_threads(SCHEDULER_TORCH_THREADS)  # before the model warms up on them
        source = self._source
        if source is None:
            self.models = ModelPolicy(config.models, config.reload_period_s)
            self.canary = CanaryModel(config.models, config.reload_period_s)
            source = self.models
        if config.journal is not None:
            self.journal = Journal(config.journal, max_bytes=config.journal_max_bytes,
                                   keep=config.journal_keep)
        if config.metrics_port is not None:
            self.metrics_port = self.metrics.serve(config.metrics_port, config.metrics_address)
        followed = config.shadow_of if config.shadow else config.scheduler_name
        view = SchedulerView.connect(config.kubeconfig, topology_rtt_ms(),
                                     prometheus_url=config.prometheus,
                                     schedulers=frozenset({followed}))
        assert isinstance(view, SchedulerView) and view.api is not None
        self.view = view
        view.start(config.start_timeout_s)
        if self._source is None:  # the process's own model: it owns the heap too
            settle_heap()  # after the first lists: the inventory is start-up heap as well
        self._runner = DeadlineRunner(config.deadline_s)
        decider = Decider(source, self._runner, Fallback())
        if self.canary is not None:
            decider = NodeSetDecider(source, self._runner, Fallback(), canary=self.canary,
                                     metrics=CanaryMetrics(self.metrics.registry))
        if config.shadow:
            self.loop = ShadowLoop(view, decider, self.metrics, self.journal)
        else:
            if config.leader_elect:
                lease = config.lease or LeaseConfig(
                    config.lease_namespace, f"{socket.gethostname()}_{os.getpid()}")
                self.leader = LeaderElector(view.api, lease)
            self.binder = Binder(view.api, scheduler_name=config.scheduler_name,
                                 wakeup=view.wakeup,
                                 on_event_dropped=self.metrics.events_dropped.inc,
                                 on_event_given_up=self.metrics.events_given_up.inc)
            self.loop = SchedulerLoop(view, decider, self.binder, leader=self.leader,
                                      metrics=self.metrics, journal=self.journal,
                                      config=LoopConfig())
        self.leader.start()
        if self.models is not None:
            self.models.start()
        if self.canary is not None:
            self.canary.start()

    def run(self, stop: threading.Event) -> None:
        assert self.loop is not None, "start() first"
        self.loop.run(stop)

    def close(self, release_lease: bool = True) -> None:
        """Stops everything it started; `release_lease=False` leaves the Lease to expire (a
        crash, as the takeover test has it)."""
        self.leader.close(release=release_lease)
        if self.models is not None:
            self.models.close()
        if self.canary is not None:
            self.canary.close()
        if self.binder is not None:
            self.binder.close()
        if self._runner is not None:
            self._runner.close()
        if self.view is not None:
            self.view.close()
        self.metrics.close()
        if self.journal is not None:
            self.journal.close()
