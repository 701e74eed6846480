"""The custom scheduler's /metrics (prometheus_client), in a registry of its own.

- dagpilot_scheduler_decisions_total{outcome}: model, fallback, unschedulable
- dagpilot_scheduler_fallbacks_total{reason}: no_model, policy_error, deadline, busy
- dagpilot_scheduler_binds_total{result}: bound, gone, conflict, refused, retry
- dagpilot_scheduler_decision_seconds, dagpilot_scheduler_bind_seconds: histograms
- dagpilot_scheduler_events_dropped_total: Events the full event queue refused
- dagpilot_scheduler_events_given_up_total: Events the API server refused, or did not take in
  three tries
- dagpilot_scheduler_queue_depth: pods waiting for a decision (pending, held back included)
- dagpilot_scheduler_unschedulable_pods: pods held back until the cluster changes
- dagpilot_scheduler_model_info{version}: 1 for the version in service
- dagpilot_scheduler_leader: 1 while this replica holds the Lease
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from dagpilot.core.endpoints import Endpoint

DECISION_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
# docs/API_REFERENCE.md; tests/test_api_reference.py scrapes it.
ENDPOINTS = (
    Endpoint("GET", "/metrics", "The custom scheduler's metrics (Prometheus text format; "
             "`serve scheduler --metrics-port`)", "",
             ((200, "dagpilot_scheduler_* families (this module's docstring)"),)),
)
BIND_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)


def fallback_reason(reason: str | None) -> str:
    """A bounded label for a fallback's reason (the reason's text goes to the journal)."""
    text = reason or ""
    if text.startswith("no model"):
        return "no_model"
    if text.startswith("policy raised"):
        return "policy_error"
    if text.startswith("no decision within"):
        return "deadline"
    if "still running" in text:
        return "busy"
    return "other"


class SchedulerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        prefix = "dagpilot_scheduler_"
        self.decisions = Counter(prefix + "decisions", "Decisions by outcome",
                                 ["outcome"], registry=self.registry)
        self.fallbacks = Counter(prefix + "fallbacks", "Fallback decisions by reason",
                                 ["reason"], registry=self.registry)
        self.binds = Counter(prefix + "binds", "Binding requests by result", ["result"],
                             registry=self.registry)
        self.events_dropped = Counter(prefix + "events_dropped",
                                      "Events the full event queue refused",
                                      registry=self.registry)
        self.events_given_up = Counter(prefix + "events_given_up",
                                       "Events the API server refused, or did not take in "
                                       "three tries", registry=self.registry)
        self.decision_seconds = Histogram(prefix + "decision_seconds",
                                          "Time to decide one placement",
                                          buckets=DECISION_BUCKETS, registry=self.registry)
        self.bind_seconds = Histogram(prefix + "bind_seconds", "pods/binding POST latency",
                                      buckets=BIND_BUCKETS, registry=self.registry)
        self.queue_depth = Gauge(prefix + "queue_depth", "Pods waiting for a decision",
                                 registry=self.registry)
        self.unschedulable = Gauge(prefix + "unschedulable_pods",
                                   "Pods held back until the cluster changes",
                                   registry=self.registry)
        self.refused = Gauge(prefix + "refused_pods",
                             "Pods it will not place: a rule it does not implement, or a spec "
                             "it cannot read", registry=self.registry)
        self.model_info = Gauge(prefix + "model_info", "The model version in service",
                                ["version"], registry=self.registry)
        self.leader = Gauge(prefix + "leader", "1 while this replica leads",
                            registry=self.registry)
        for outcome in ("model", "fallback", "unschedulable"):
            self.decisions.labels(outcome)
        self._version: str | None = None

    def serving(self, version: str | None) -> None:
        if version == self._version:
            return
        if self._version is not None:
            self.model_info.remove(self._version)
        if version is not None:
            self.model_info.labels(version).set(1)
        self._version = version

    def serve(self, port: int, address: str) -> int:
        """Starts /metrics on `address:port` (0: any free port); the port bound."""
        server, _ = start_http_server(port, address, registry=self.registry)
        self._server = server
        return int(server.server_port)

    def close(self) -> None:
        server = getattr(self, "_server", None)
        if server is not None:
            server.shutdown()
            server.server_close()
