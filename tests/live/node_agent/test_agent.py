"""The agent as a whole: a broken or impossible probe is reported and the rest keep serving;
series of things that went away disappear; `dagpilot node-agent` on this machine."""

from __future__ import annotations

import socket
import subprocess
from dataclasses import dataclass

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from dagpilot.live.node_agent import metric_names as m
from dagpilot.live.node_agent.exporter import SnapshotCollector
from dagpilot.live.node_agent.reading import ProbeReading, ProbeUnavailable, sample
from dagpilot.live.node_agent.runner import NodeAgent

from .conftest import (
    AGENT,
    REPO_DOCS,
    KubeCgroups,
    scrape_until,
    start_agent,
    stop_agent,
    value,
)


@dataclass
class FixedProbe:
    name: str
    value: float

    def read(self) -> ProbeReading:
        return ProbeReading((sample(m.DISK_AWAIT_MILLISECONDS, self.value, node="n",
                                    device=self.name),))


@dataclass
class BrokenProbe:
    name: str = "broken"

    def read(self) -> ProbeReading:
        raise RuntimeError("the counter file vanished")


@dataclass
class ImpossibleProbe:
    name: str = "impossible"

    def read(self) -> ProbeReading:
        raise ProbeUnavailable(self.name, "this kernel lacks it")


def test_a_failing_probe_is_reported_and_the_others_serve() -> None:
    collector = SnapshotCollector()
    agent = NodeAgent("n", [FixedProbe("vda", 2.5), BrokenProbe(), ImpossibleProbe()], collector,
                      wall_clock=lambda: 1000.0)
    samples = {(s.metric, s.labels): s.value for s in agent.collect_once()}
    assert samples[(m.DISK_AWAIT_MILLISECONDS, ("n", "vda"))] == 2.5
    assert samples[(m.PROBE_AVAILABLE, ("n", "vda", ""))] == 1
    assert samples[(m.PROBE_SAMPLE_TIMESTAMP_SECONDS, ("n", "vda"))] == 1000.0
    assert samples[(m.PROBE_AVAILABLE, ("n", "broken",
                                        "RuntimeError: the counter file vanished"))] == 0
    assert samples[(m.PROBE_AVAILABLE, ("n", "impossible", "this kernel lacks it"))] == 0
    assert (m.PROBE_SAMPLE_TIMESTAMP_SECONDS, ("n", "broken")) not in samples
    assert {key for key in samples if key[0] == m.PROBE_DURATION_SECONDS} == {
        (m.PROBE_DURATION_SECONDS, ("n", probe)) for probe in ("vda", "broken", "impossible")}


def test_series_that_went_away_disappear() -> None:
    collector = SnapshotCollector()
    registry = CollectorRegistry()
    registry.register(collector)
    collector.publish([sample(m.POD_CPU_SECONDS_TOTAL, 1.5, node="n", pod_uid="u1",
                              qos="burstable")])
    first = generate_latest(registry).decode()
    assert 'dagpilot_pod_cpu_seconds_total{node="n",pod_uid="u1",qos="burstable"} 1.5' in first
    assert "# TYPE dagpilot_pod_cpu_seconds_total counter" in first
    collector.publish([])
    assert "u1" not in generate_latest(registry).decode()


def test_samples_take_exactly_their_metrics_labels() -> None:
    with pytest.raises(ValueError, match="takes labels"):
        sample(m.RTT_SECONDS, 0.001, src="a", peer="b")


def test_every_metric_is_documented() -> None:
    text = REPO_DOCS.joinpath("LIVE.md").read_text()
    missing = [spec.name for spec in m.METRICS if f"`{spec.name}`" not in text]
    assert not missing, f"docs/LIVE.md does not list {missing}"


def test_cli_agent_on_this_machine(kube_cgroups: KubeCgroups) -> None:
    """The real command with real pods: their series served, the probes this machine cannot
    run reported with reasons, SIGTERM a clean exit."""
    uid = "7c0ffee0-0000-4000-8000-000000000001"
    kube_cgroups.start(kube_cgroups.make_pod(uid), "grow-memory", "8")
    agent = start_agent("--node-name", "host", "--address", "127.0.0.1", "--port", "0",
                        "--period", "0.5", "--kubepods", kube_cgroups.kubepods)
    try:
        pod = {"node": "host", "pod_uid": uid, "qos": "burstable"}
        series = scrape_until(agent.port, lambda s: any(  # after the first period's baseline
            name == m.DISK_AWAIT_MILLISECONDS for name, _ in s)
            and value(s, m.POD_MEMORY_RSS_BYTES, **pod) is not None)
        rss = value(series, m.POD_MEMORY_RSS_BYTES, **pod)
        assert rss is not None
        assert rss >= 8 << 20
        assert value(series, m.POD_CPU_SECONDS_TOTAL, **pod) is not None
        unavailable = {dict(labels)["probe"]: dict(labels)["reason"]
                       for (name, labels), v in series.items()
                       if name == m.PROBE_AVAILABLE and v == 0}
        if "memory_bandwidth" in unavailable:  # as on the development machine
            assert "uncore_imc" in unavailable["memory_bandwidth"]
        if "gpu_free" in unavailable:
            assert "PodResources" in unavailable["gpu_free"]
        assert not any(name in (m.GPUS_FREE, m.GPUS_ALLOCATABLE) for name, _ in series)
        assert value(series, m.PROBE_AVAILABLE, node="host", probe=m.PROBE_DISK_AWAIT,
                     reason="") == 1
        assert value(series, "dagpilot_node_agent_process_cpu_seconds_total") is not None
    finally:
        assert stop_agent(agent) == 0


def test_a_taken_port_is_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run([*AGENT, "--node-name", "x", "--address", "127.0.0.1", "--port",
                               str(port)], capture_output=True, text=True, timeout=60,
                              check=False)
    assert done.returncode == 2
    assert f"error: node-agent: 127.0.0.1:{port}: cannot serve metrics" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("options", "message"), [
    (("--period", "0"), "--period takes a positive number"),
    (("--peers", "b=h"), "a peer is NAME=HOST:PORT"),
    (("--disk-devices", "("), "--disk-devices"),
])
def test_bad_options_are_clear_errors(options: tuple[str, ...], message: str) -> None:
    done = subprocess.run([*AGENT, "--node-name", "x", *options], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
