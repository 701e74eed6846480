"""The pod probes against real processes in real cgroups of this machine.

Each workload measures what it did itself (its anonymous memory, the bytes it wrote, the CPU it
used); the probe's figures must match within the stated tolerances.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dagpilot.live.node_agent import metric_names as m
from dagpilot.live.node_agent.pod_cpu import PodCpuProbe
from dagpilot.live.node_agent.pod_io import PodIoProbe
from dagpilot.live.node_agent.pod_memory import PodMemoryProbe
from dagpilot.live.node_agent.reading import ProbeUnavailable, Sample

from .conftest import CGROUP_ROOT, KubeCgroups

MIB = 1 << 20
NODE = "test-node"
# What a Python interpreter holds besides the workload's own buffers (code, heap, libraries).
INTERPRETER_SLACK = 24 * MIB


def values(samples: tuple[Sample, ...], metric: str, uid: str) -> list[float]:
    return [s.value for s in samples if s.metric == metric and dict(
        zip(m.METRICS_BY_NAME[metric].labels, s.labels, strict=True))[m.POD_UID] == uid]


def only(samples: tuple[Sample, ...], metric: str, uid: str) -> float:
    found = values(samples, metric, uid)
    assert len(found) == 1, f"{metric} for pod {uid}: {found}"
    return found[0]


def test_memory_grower_is_anonymous_memory(kube_cgroups: KubeCgroups) -> None:
    uid = "1a2b3c4d-0000-4000-8000-000000000001"
    _, did = kube_cgroups.start(kube_cgroups.make_pod(uid), "grow-memory", "64")
    samples = PodMemoryProbe(NODE, CGROUP_ROOT, kube_cgroups.kubepods).read().samples
    rss = only(samples, m.POD_MEMORY_RSS_BYTES, uid)
    assert abs(rss - did["anon_rss_bytes"]) <= 4 * MIB  # the process's own RssAnon
    assert did["held_bytes"] <= rss <= did["held_bytes"] + INTERPRETER_SLACK
    usage = only(samples, m.POD_MEMORY_USAGE_BYTES, uid)
    assert rss <= usage
    assert only(samples, m.POD_MEMORY_PEAK_BYTES, uid) >= usage
    assert only(samples, m.POD_PAGE_CACHE_RATIO, uid) < 1.8  # anonymous memory, no pollution


def test_file_writer_fills_page_cache_and_is_flagged(kube_cgroups: KubeCgroups,
                                                     tmp_path: Path) -> None:
    uid = "1a2b3c4d-0000-4000-8000-000000000002"
    path = tmp_path / "cache-filler"
    _, did = kube_cgroups.start(kube_cgroups.make_pod(uid, "besteffort"), "write-cache", "96",
                                str(path))
    samples = PodMemoryProbe(NODE, CGROUP_ROOT, kube_cgroups.kubepods).read().samples
    cache = only(samples, m.POD_PAGE_CACHE_BYTES, uid)
    assert did["written_bytes"] * 0.9 <= cache <= did["written_bytes"] + INTERPRETER_SLACK
    rss = only(samples, m.POD_MEMORY_RSS_BYTES, uid)
    assert abs(rss - did["anon_rss_bytes"]) <= 4 * MIB
    usage = only(samples, m.POD_MEMORY_USAGE_BYTES, uid)
    assert usage >= rss + 0.9 * did["written_bytes"]
    assert only(samples, m.POD_PAGE_CACHE_RATIO, uid) > 1.8  # polluted, as the seed defines
    qos = {s.labels[2] for s in samples if s.metric == m.POD_PAGE_CACHE_BYTES}
    assert qos == {"besteffort"}


def test_cpu_burner_time_matches_its_own_count(kube_cgroups: KubeCgroups) -> None:
    uid = "1a2b3c4d-0000-4000-8000-000000000003"
    idle = "1a2b3c4d-0000-4000-8000-000000000004"
    _, did = kube_cgroups.start(kube_cgroups.make_pod(uid, "guaranteed"), "burn-cpu", "1.0")
    kube_cgroups.start(kube_cgroups.make_pod(idle), "grow-memory", "1")
    samples = PodCpuProbe(NODE, CGROUP_ROOT, kube_cgroups.kubepods).read().samples
    burnt = only(samples, m.POD_CPU_SECONDS_TOTAL, uid)
    # The cgroup also counts the shell that joined it and exec'd the workload: a few ms.
    assert did["cpu_s"] - 0.01 <= burnt <= did["cpu_s"] + 0.1
    assert only(samples, m.POD_CPU_SECONDS_TOTAL, idle) < 0.5  # started, then idle


def test_direct_io_bytes_are_counted(kube_cgroups: KubeCgroups, tmp_path: Path) -> None:
    uid = "1a2b3c4d-0000-4000-8000-000000000005"
    procs = kube_cgroups.make_pod(uid)
    pod = kube_cgroups.pod_dir("io", uid)
    if kube_cgroups.hierarchies["io"].version == 1:
        # v1 counts I/O only on queues with a throttle rule (pod_io.py): one that never binds.
        device = whole_disk(tmp_path)
        for rule in ("blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device"):
            (pod / rule).write_text(f"{device} {1 << 50}")
    _, did = kube_cgroups.start(procs, "direct-io", "16", str(tmp_path / "direct"))
    samples = PodIoProbe(NODE, CGROUP_ROOT, kube_cgroups.kubepods, Path("/proc")).read().samples
    by_direction = {s.labels[3]: s.value for s in samples
                    if s.metric == m.POD_IO_BYTES_TOTAL and s.labels[1] == uid}
    assert did["written_bytes"] <= by_direction["write"] <= did["written_bytes"] + MIB
    # Python may read a few files of its own that are not cached yet.
    assert did["read_bytes"] <= by_direction["read"] <= did["read_bytes"] + 8 * MIB


def test_pods_that_end_disappear(kube_cgroups: KubeCgroups) -> None:
    uid = "1a2b3c4d-0000-4000-8000-000000000006"
    kube_cgroups.make_pod(uid)
    probe = PodCpuProbe(NODE, CGROUP_ROOT, kube_cgroups.kubepods)
    assert values(probe.read().samples, m.POD_CPU_SECONDS_TOTAL, uid) == [0.0]
    kube_cgroups.remove()
    kube_cgroups.made.clear()
    # The parent went too: the probe says there are no pods here, rather than zeros.
    with pytest.raises(ProbeUnavailable, match="no kubepods cgroup"):
        probe.read()


def whole_disk(path: Path) -> str:
    """MAJ:MIN of the disk holding path (throttle rules name disks, not partitions)."""
    device = os.stat(path).st_dev
    sys_dir = Path(f"/sys/dev/block/{os.major(device)}:{os.minor(device)}").resolve()
    if (sys_dir / "partition").exists():
        sys_dir = sys_dir.parent
    return (sys_dir / "dev").read_text().strip()
