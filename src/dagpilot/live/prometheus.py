"""PromQL over HTTP -> each node's signals, every value with the time it was measured.

One `SignalQuery` per measured column of core.view.SIGNAL_COLUMNS: a `value` query and a
`sampled` query, each giving one series per node (by the `node` label). The sample time is the
time of the measurement, not of the query: the node agent's
`dagpilot_probe_sample_timestamp_seconds{probe}` (exported only in a period the probe measured)
or `timestamp()` of node_exporter's raw series. A node whose sample time is known but has no
value series measured nothing there (no pods on it) when the query sums pods
(`empty_is_zero`), and has no value otherwise.

A value or time that is absent, NaN or infinite is no reading: the view never fills it in
(live/view.py turns a node's missing readings into missed scrapes). The ping mesh's
`dagpilot_rtt_seconds{src,dst}` is read too. Every failure (refused, slower than `timeout_s`,
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
    empty_is_zero: bool = False


def _probe_time(probe: str, node: str) -> str:
    return f'max by ({node}) ({m.PROBE_SAMPLE_TIMESTAMP_SECONDS}{{{m.PROBE}="{probe}"}})'


def default_queries(node: str = m.NODE, rate_window_s: int = 20) -> tuple[SignalQuery, ...]:
    """The queries for node_exporter and the node agent, series by label `node`."""
    own = f'{node}!=""'
    return (
        SignalQuery("cpu_used",
                    f'sum by ({node}) (rate({NODE_CPU}{{mode!~"{IDLE_MODES}",{own}}}'
                    f"[{rate_window_s}s]))",
                    f'min by ({node}) (timestamp({NODE_CPU}{{mode="idle",{own}}}))'),
        SignalQuery("memory_used", f"sum by ({node}) ({m.POD_MEMORY_RSS_BYTES})",
                    _probe_time(m.PROBE_POD_MEMORY, node), empty_is_zero=True),
        SignalQuery("memory_current", f"sum by ({node}) ({m.POD_MEMORY_USAGE_BYTES})",
                    _probe_time(m.PROBE_POD_MEMORY, node), empty_is_zero=True),
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
    """What one round of queries found: readings by column and node, RTTs by (src, dst)."""

    taken_s: float
    readings: Mapping[str, Mapping[str, Reading]]
    rtt_s: Mapping[tuple[str, str], float] = field(default_factory=dict)

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
        return SignalSample(taken_s, readings, rtt)

    def _readings(self, query: SignalQuery, node: str) -> dict[str, Reading]:
        times = {labels.get(node, ""): value for labels, value in self.query(query.sampled)}
        values = {labels.get(node, ""): value for labels, value in self.query(query.value)}
        found = {}
        for name, sampled_s in times.items():
            value = values.get(name, 0.0 if query.empty_is_zero else None)
            if name and value is not None and sampled_s > 0:
                found[name] = Reading(value, sampled_s)
        return found

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
