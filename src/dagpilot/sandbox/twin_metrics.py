"""The twin's simulated signals in Prometheus' text format, under the node agent's names.

A real node's agent measures these (live/node_agent); the twin reports what the simulator's
physics says for each kwok node, with the same metric names and labels, so the live view reads
a sandbox and a real cluster alike. The twin does not export RTTs: its round-trip times are
the topology model's, which the live view falls back to when the mesh reports nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from dagpilot.live.node_agent import metric_names as m
from dagpilot.sandbox.twin_model import TwinModel
from dagpilot.sim import physics
from dagpilot.sim.nodes import SimNode
from dagpilot.sim.pod import Phase

SOURCE = "twin"
DEVICE = "twin"
PROBES = (m.PROBE_POD_MEMORY, m.PROBE_POD_CPU, m.PROBE_DISK_AWAIT, m.PROBE_MEMORY_BANDWIDTH,
          m.PROBE_GPU_FREE)


def _labels(**pairs: str) -> str:
    inner = ",".join(f'{key}="{_escape(value)}"' for key, value in pairs.items())
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _line(name: str, value: float, **labels: str) -> str:
    number = repr(float(value)) if math.isfinite(value) else "NaN"
    return f"{name}{_labels(**labels)} {number}"


def exposition(model: TwinModel, uids: dict[str, str], wall_s: float) -> str:
    """Every metric of one sample; `uids` maps a running pod's key to its metadata.uid."""
    lines = []
    for spec in m.METRICS:
        lines.append(f"# HELP {spec.name} {spec.help}")
        lines.append(f"# TYPE {spec.name} {spec.kind}")
        lines.extend(_samples(spec.name, model, uids, wall_s))
    return "\n".join(lines) + "\n"


def _samples(name: str, model: TwinModel, uids: dict[str, str], wall_s: float) -> Iterator[str]:
    if name in _POD_METRICS:
        yield from _pod_samples(name, model, uids)
        return
    for node in model.state.nodes:
        node_name = node.spec.name
        utilisation = node.scraped[3]
        if name == m.MEMORY_BANDWIDTH_UTILISATION:
            yield _line(name, utilisation, node=node_name, source=SOURCE)
        elif name == m.MEMORY_BANDWIDTH_BYTES_PER_SECOND:
            yield _line(name, utilisation * node.membw_capacity, node=node_name, source=SOURCE)
        elif name == m.DISK_AWAIT_MILLISECONDS:
            yield _line(name, node.pool.scraped_await_ms, node=node_name, device=DEVICE)
        elif name in (m.GPUS_ALLOCATABLE, m.GPUS_FREE):
            for complex_, gpus in node.spec.root_complexes.items():
                count = (len(gpus) if name == m.GPUS_ALLOCATABLE
                         else sum(node.gpu_free[g.index] for g in gpus))
                yield _line(name, count, node=node_name, root_complex=str(complex_))
        elif name == m.PROBE_AVAILABLE:
            for probe in PROBES:
                yield _line(name, 1, node=node_name, probe=probe, reason="")
        elif name == m.PROBE_SAMPLE_TIMESTAMP_SECONDS:
            for probe in PROBES:
                yield _line(name, wall_s, node=node_name, probe=probe)


_POD_METRICS = {m.POD_MEMORY_USAGE_BYTES, m.POD_MEMORY_RSS_BYTES, m.POD_PAGE_CACHE_BYTES,
                m.POD_PAGE_CACHE_RATIO, m.POD_MEMORY_PEAK_BYTES, m.POD_CPU_SECONDS_TOTAL}


def _pod_samples(name: str, model: TwinModel, uids: dict[str, str]) -> Iterator[str]:
    for key, pod in model.running.items():
        if pod.phase != Phase.RUNNING or key not in uids:
            continue
        labels = {"node": pod.node.spec.name, "pod_uid": uids[key], "qos": "burstable"}
        cache = _cache_held(pod.cache, pod.node)
        usage = float(pod.working + cache)
        value = {m.POD_MEMORY_USAGE_BYTES: usage, m.POD_MEMORY_RSS_BYTES: float(pod.working),
                 m.POD_PAGE_CACHE_BYTES: cache, m.POD_MEMORY_PEAK_BYTES: usage,
                 m.POD_PAGE_CACHE_RATIO: usage / pod.working if pod.working else math.nan,
                 m.POD_CPU_SECONDS_TOTAL: pod.cpu_used * (model.now_s - pod.started_s)}[name]
        if math.isfinite(value):
            yield _line(name, value, **labels)


def _cache_held(wanted: int, node: SimNode) -> float:
    """The pod's page cache as the kernel holds it: its share of what its node keeps once
    working sets and cache together pass the capacity (physics.cache_held), as a cgroup's
    memory.stat file counts it, not what the pod would cache with room to spare."""
    total = node.mem_cache
    if not total:
        return float(wanted)
    return wanted * physics.cache_held(node.mem_working, total, node.mem_capacity) / total
