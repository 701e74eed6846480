"""The canary's families on the custom scheduler's /metrics (the same registry).

- dagpilot_scheduler_node_set_decisions_total{node_set, outcome}: every decision a node set's
  model (or the fallback standing in for it) was asked for, by outcome (model, fallback,
  unschedulable: nothing of that set could take the cohort's pods); node_set is stable or canary
- dagpilot_scheduler_canary_stage: the canary's stage, 1-based (0: no canary active)
- dagpilot_scheduler_canary_info{version}: 1 for the canary version in service
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge


class CanaryMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        prefix = "dagpilot_scheduler_"
        self.node_set_decisions = Counter(
            prefix + "node_set_decisions", "Decisions by node set (stable, canary) and outcome",
            ["node_set", "outcome"], registry=registry)
        self.stage = Gauge(prefix + "canary_stage", "The canary's stage (0: none)",
                           registry=registry)
        self.info = Gauge(prefix + "canary_info", "The canary version in service",
                          ["version"], registry=registry)
        self._version: str | None = None

    def canary(self, version: str | None, stage: int) -> None:
        self.stage.set(stage)
        if version == self._version:
            return
        if self._version is not None:
            self.info.remove(self._version)
        if version is not None:
            self.info.labels(version).set(1)
        self._version = version
