"""The Prometheus endpoint: the latest samples of every probe, served over HTTP.

The runner publishes one complete set of samples per period and a scrape reads whichever set is
current, so a scrape never sees half a period, and a series whose pod or peer went away
disappears instead of repeating its last value. The agent's own CPU and memory are exported too
(`dagpilot_node_agent_process_*`), so its cost is visible where it runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from prometheus_client import CollectorRegistry, ProcessCollector, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from dagpilot.core.endpoints import Endpoint

from .errors import NodeAgentError
from .metric_names import METRICS, MetricSpec
from .reading import Sample

PROCESS_NAMESPACE = "dagpilot_node_agent"
# docs/API_REFERENCE.md; tests/test_api_reference.py scrapes it.
ENDPOINTS = (
    Endpoint("GET", "/metrics", "The node agent's signals (Prometheus text format; "
             "`dagpilot node-agent --port`)", "",
             ((200, "the families of metric_names.METRICS and dagpilot_node_agent_process_*"),)),
)


class SnapshotCollector(Collector):
    """Serves the samples last published, grouped into the families of metric_names."""

    def __init__(self) -> None:
        self._samples: tuple[Sample, ...] = ()

    def publish(self, samples: Sequence[Sample]) -> None:
        self._samples = tuple(samples)  # one reference swap: scrapes see all or nothing new

    def describe(self) -> Iterable[Metric]:
        return [_family(spec) for spec in METRICS]

    def collect(self) -> Iterable[Metric]:
        families = {spec.name: _family(spec) for spec in METRICS}
        for item in self._samples:
            families[item.metric].add_metric(list(item.labels), item.value)
        return [family for family in families.values() if family.samples]


def _family(spec: MetricSpec) -> GaugeMetricFamily | CounterMetricFamily:
    kind = GaugeMetricFamily if spec.kind == "gauge" else CounterMetricFamily
    return kind(spec.name, spec.help, labels=list(spec.labels))


class Exporter:
    """An HTTP server on (address, port) serving the collector at /metrics."""

    def __init__(self, collector: SnapshotCollector, address: str, port: int) -> None:
        registry = CollectorRegistry()
        registry.register(collector)
        ProcessCollector(namespace=PROCESS_NAMESPACE, registry=registry)
        try:
            self._server, self._thread = start_http_server(port, address, registry=registry)
        except OSError as error:
            raise NodeAgentError(f"{address}:{port}", f"cannot serve metrics: "
                                                      f"{error.strerror or error}") from None

    @property
    def port(self) -> int:
        return int(self._server.server_port)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

