"""PromQL over HTTP -> each node's signals, every value with the time it was measured.

One `SignalQuery` per measured column of core.view.SIGNAL_COLUMNS: a `value` query and a
`sampled` query, each giving one series per node (by the `node` label); a node has a reading
when it has both. The sample time is the time of the measurement, not of the query: the node
agent's `dagpilot_probe_sample_timestamp_seconds{probe}` (exported only in a period the probe
measured) or `timestamp()` of node_exporter's raw series. A sum over a node's pods is 0 on a
node whose probe measured and found no pods (`... or 0 * <probe time>`), and absent on a node
whose probe did not measure.

A value or time that is absent, NaN or infinite is no reading: the view never fills it in
(live/view.py turns a node's missing readings into missed scrapes). The ping mesh's
`dagpilot_rtt_seconds{src,dst}` is read too, and `dagpilot_gpus_free{node,root_complex}` (the
kubelet's device assignment, from PodResources). Every failure (refused, slower than `timeout_s`,
an error answer, unreadable JSON) is a PrometheusError naming the URL and the query.

The node label: the node agent sets `node` itself; node_exporter's series need the scrape
configuration to attach the Kubernetes node name as `node` (a relabel of
`__meta_kubernetes_pod_node_name`, or a target label as the sandbox's tests do).
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field

from dagpilot.live.errors import PrometheusError
from dagpilot.live.node_agent import metric_names as m
from dagpilot.live.raw import part

MEASURED = ("cpu_used", "memory_used", "memory_current", "membw_utilisation", "io_await_ms")
"""The columns of SIGNAL_COLUMNS that Prometheus measures (sampled_s is their time; the
placed_* columns come from bindings)."""

NODE_CPU = "node_cpu_seconds_total"  # node_exporter
IDLE_MODES = "idle|iowait|steal"  # CPU time that is not work done on the node


@dataclass(frozen=True, slots=True)
class SignalQuery:
    column: str
    value: str
    sampled: str


def _probe_time(probe: str, node: str) -> str:
    return f'max by ({node}) ({m.PROBE_SAMPLE_TIMESTAMP_SECONDS}{{{m.PROBE}="{probe}"}})'


def _pods_sum(metric: str, probe: str, node: str, rate_window_s: int | None = None) -> str:
    """The sum over a node's pods, and 0 on a node whose probe measured and found no pods."""
    series = f"rate({metric}[{rate_window_s}s])" if rate_window_s else metric
    return f"sum by ({node}) ({series}) or 0 * {_probe_time(probe, node)}"


def default_queries(node: str = m.NODE, rate_window_s: int = 20) -> tuple[SignalQuery, ...]:
    """The queries for node_exporter and the node agent (or the sandbox's twin), series by
    label `node`. cpu_used is node_exporter's busy CPU where the node has node_exporter series,
    else the sum of its pods' CPU from the node agent; memory is the pods' (RSS for
    memory_used, memory.current for memory_current), memory bandwidth and await the node's."""
    own = f'{node}!=""'
    node_cpu = (f'sum by ({node}) (rate({NODE_CPU}{{mode!~"{IDLE_MODES}",{own}}}'
                f"[{rate_window_s}s]))")
    node_cpu_time = f'min by ({node}) (timestamp({NODE_CPU}{{mode="idle",{own}}}))'
    return (
        SignalQuery("cpu_used",
                    f"{node_cpu} or "
                    f"{_pods_sum(m.POD_CPU_SECONDS_TOTAL, m.PROBE_POD_CPU, node, rate_window_s)}",
                    f"{node_cpu_time} or {_probe_time(m.PROBE_POD_CPU, node)}"),
        SignalQuery("memory_used", _pods_sum(m.POD_MEMORY_RSS_BYTES, m.PROBE_POD_MEMORY, node),
                    _probe_time(m.PROBE_POD_MEMORY, node)),
        SignalQuery("memory_current",
                    _pods_sum(m.POD_MEMORY_USAGE_BYTES, m.PROBE_POD_MEMORY, node),
                    _probe_time(m.PROBE_POD_MEMORY, node)),
        SignalQuery("membw_utilisation", f"max by ({node}) ({m.MEMORY_BANDWIDTH_UTILISATION})",
                    _probe_time(m.PROBE_MEMORY_BANDWIDTH, node)),
        SignalQuery("io_await_ms", f"max by ({node}) ({m.DISK_AWAIT_MILLISECONDS})",
                    _probe_time(m.PROBE_DISK_AWAIT, node)),
    )


@dataclass(frozen=True, slots=True)
class Reading:
    value: float
    sampled_s: float


@dataclass(frozen=True)
class SignalSample:
    """What one round of queries found: readings by column and node, RTTs by (src, dst),
    free GPUs by node and root complex (as the agent names it)."""

    taken_s: float
    readings: Mapping[str, Mapping[str, Reading]]
    rtt_s: Mapping[tuple[str, str], float] = field(default_factory=dict)
    gpus_free: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def of_node(self, node: str) -> dict[str, Reading]:
        return {column: found[node] for column, found in self.readings.items()
                if node in found}


class Prometheus:
    def __init__(self, url: str, timeout_s: float = 2.0) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s

    def query(self, promql: str, at_s: float | None = None) -> list[tuple[dict[str, str], float]]:
        """An instant query's series: (labels, value), NaN and infinities left out."""
        arguments = {"query": promql, **({"time": f"{at_s:.3f}"} if at_s is not None else {})}
        address = f"{self.url}/api/v1/query?{urllib.parse.urlencode(arguments)}"
        document = self._get(address, promql)
        data = part(document, "data")
        if not isinstance(document, dict) or document.get("status") != "success":
            problem = document.get("error") if isinstance(document, dict) else document
            raise PrometheusError(self.url, f"query {promql!r} failed: {problem!r:.200}")
        found = []
        for series in data.get("result") or []:
            try:
                labels, value = series["metric"], float(series["value"][1])
            except (KeyError, IndexError, TypeError, ValueError):
                raise PrometheusError(self.url, f"query {promql!r}: not a vector "
                                                f"({series!r:.120})") from None
            if math.isfinite(value):
                found.append((dict(labels), value))
        return found

    def sample(self, queries: tuple[SignalQuery, ...], taken_s: float,
               node: str = m.NODE) -> SignalSample:
        """Every column's readings; PrometheusError when any query fails."""
        readings = {query.column: self._readings(query, node) for query in queries}
        rtt = {(labels.get(m.SRC, ""), labels.get(m.DST, "")): value
               for labels, value in self.query(m.RTT_SECONDS) if value >= 0}
        gpus: dict[str, dict[str, int]] = {}
        for labels, value in self.query(m.GPUS_FREE):
            if value >= 0 and value.is_integer():
                gpus.setdefault(labels.get(node, ""), {})[labels.get(m.ROOT_COMPLEX, "")] = \
                    int(value)
        return SignalSample(taken_s, readings, rtt, gpus)

    def _readings(self, query: SignalQuery, node: str) -> dict[str, Reading]:
        times = {labels.get(node, ""): value for labels, value in self.query(query.sampled)}
        values = {labels.get(node, ""): value for labels, value in self.query(query.value)}
        return {name: Reading(values[name], sampled_s) for name, sampled_s in times.items()
                if name and name in values and sampled_s > 0}

    def _get(self, address: str, promql: str) -> object:
        try:
            with urllib.request.urlopen(address, timeout=self.timeout_s) as response:
                body = response.read()
        except urllib.error.HTTPError as error:
            body = error.read()  # Prometheus explains a bad query in the JSON body
            try:
                return json.loads(body)
            except ValueError:
                raise PrometheusError(self.url, f"HTTP {error.code} for {promql!r}") from None
        except TimeoutError:
            raise PrometheusError(self.url, f"no answer within {self.timeout_s:g} s") from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            if isinstance(reason, TimeoutError):
                raise PrometheusError(self.url,
                                      f"no answer within {self.timeout_s:g} s") from None
            raise PrometheusError(self.url, f"unreachable: {reason}") from None
        try:
            return json.loads(body)
        except ValueError:
            raise PrometheusError(self.url, f"not JSON in answer to {promql!r}") from None
