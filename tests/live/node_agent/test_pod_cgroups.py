"""Finding pod cgroups (kubelet's cgroupfs and systemd layouts) and each controller's hierarchy,
and reading cgroup v2 files. The trees here are small hand-made folders: the layout rules are
path logic; tests/live/node_agent/test_pod_probes.py reads real cgroups."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.live.node_agent import metric_names as m
from dagpilot.live.node_agent.cgroup_hierarchy import find_hierarchy
from dagpilot.live.node_agent.pod_cgroups import find_parent, find_pods
from dagpilot.live.node_agent.pod_cpu import PodCpuProbe
from dagpilot.live.node_agent.pod_io import PodIoProbe
from dagpilot.live.node_agent.pod_memory import PodMemoryProbe
from dagpilot.live.node_agent.reading import ProbeUnavailable

UID_A = "0f1e2d3c-1111-4222-8333-444455556666"
UID_B = "9a8b7c6d-aaaa-4bbb-8ccc-ddddeeeeffff"
UID_C = "5d41402abc4b2a76b9719d911017c592"  # a static pod's uid: a hash, no dashes


def make(root: Path, *relative: str) -> None:
    for path in relative:
        (root / path).mkdir(parents=True)


def test_cgroupfs_layout(tmp_path: Path) -> None:
    make(tmp_path, f"kubepods/pod{UID_A}/ctr", f"kubepods/burstable/pod{UID_B}",
         f"kubepods/besteffort/pod{UID_C}", "kubepods/besteffort/not-a-pod",
         "kubepods/burstable/podfile-is-skipped")
    (tmp_path / "kubepods/burstable/podfile-is-skipped").rmdir()
    (tmp_path / "kubepods/burstable/podfile-is-skipped").write_text("")
    parent = find_parent(tmp_path, "auto")
    assert parent == tmp_path / "kubepods"
    pods = find_pods(tmp_path / "kubepods")
    assert [(p.uid, p.qos) for p in pods] == [
        (UID_A, "guaranteed"), (UID_C, "besteffort"), (UID_B, "burstable")]
    assert pods[0].path == tmp_path / f"kubepods/pod{UID_A}"


def test_systemd_layout_writes_uid_dashes_as_underscores(tmp_path: Path) -> None:
    a, b = UID_A.replace("-", "_"), UID_B.replace("-", "_")
    make(tmp_path, f"kubepods.slice/kubepods-pod{a}.slice/cri-containerd-1.scope",
         f"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{b}.slice",
         "kubepods.slice/kubepods-besteffort.slice")
    assert find_parent(tmp_path, "auto") == tmp_path / "kubepods.slice"
    pods = find_pods(tmp_path / "kubepods.slice")
    assert [(p.uid, p.qos) for p in pods] == [(UID_A, "guaranteed"), (UID_B, "burstable")]


def test_configured_parent_and_its_absence(tmp_path: Path) -> None:
    make(tmp_path, f"test-1/kubepods/burstable/pod{UID_B}")
    assert find_parent(tmp_path, "test-1/kubepods") == tmp_path / "test-1/kubepods"
    reason = find_parent(tmp_path, "auto")
    assert isinstance(reason, str)
    assert "kubepods.slice, kubepods" in reason
    assert str(tmp_path) in reason


def test_hierarchy_v2_when_it_has_the_controller_else_v1(tmp_path: Path) -> None:
    make(tmp_path, "unified", "memory", "cpu,cpuacct", "blkio")
    (tmp_path / "unified/cgroup.controllers").write_text("hugetlb pids\n")
    (tmp_path / "memory/memory.usage_in_bytes").write_text("0\n")
    (tmp_path / "cpu,cpuacct/cpuacct.usage").write_text("0\n")
    found = {c: find_hierarchy(tmp_path, c) for c in ("memory", "cpu", "io")}
    assert [(h.version, h.root.name) for h in found.values() if not isinstance(h, str)] == [
        (1, "memory"), (1, "cpu,cpuacct")]
    assert isinstance(found["io"], str)
    assert "no io controller" in found["io"]
    (tmp_path / "unified/cgroup.controllers").write_text("cpu io memory pids\n")
    memory = find_hierarchy(tmp_path, "memory")
    assert not isinstance(memory, str)
    assert (memory.version, memory.root) == (2, tmp_path / "unified")


def v2_pod(tmp_path: Path) -> Path:
    """A v2 tree with one burstable pod and its files as the kernel writes them."""
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    pod = tmp_path / f"kubepods/burstable/pod{UID_B}"
    pod.mkdir(parents=True)
    (pod / "memory.current").write_text("314572800\n")
    (pod / "memory.stat").write_text("anon 104857600\nfile 209715200\nkernel 1048576\n")
    (pod / "memory.peak").write_text("419430400\n")
    (pod / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n")
    (pod / "io.stat").write_text("254:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n"
                                 "259:0 rbytes=100 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n")
    return pod


def test_cgroup_v2_files(tmp_path: Path) -> None:
    v2_pod(tmp_path)
    memory = {s.metric: s.value for s in PodMemoryProbe("n", tmp_path, "auto").read().samples}
    assert memory == {m.POD_MEMORY_USAGE_BYTES: 314572800, m.POD_MEMORY_RSS_BYTES: 104857600,
                      m.POD_PAGE_CACHE_BYTES: 209715200, m.POD_PAGE_CACHE_RATIO: 3.0,
                      m.POD_MEMORY_PEAK_BYTES: 419430400}
    cpu = PodCpuProbe("n", tmp_path, "auto").read().samples
    assert [(s.labels, s.value) for s in cpu] == [(("n", UID_B, "burstable"), 2.5)]
    io = PodIoProbe("n", tmp_path, "auto", tmp_path).read().samples
    assert {s.labels[3]: s.value for s in io} == {"read": 4196, "write": 8192}


def test_a_pod_without_anonymous_memory_has_no_ratio(tmp_path: Path) -> None:
    pod = v2_pod(tmp_path)
    (pod / "memory.stat").write_text("anon 0\nfile 209715200\n")
    metrics = {s.metric for s in PodMemoryProbe("n", tmp_path, "auto").read().samples}
    assert m.POD_PAGE_CACHE_RATIO not in metrics
    assert m.POD_PAGE_CACHE_BYTES in metrics


def test_malformed_cgroup_files_name_file_and_field(tmp_path: Path) -> None:
    pod = v2_pod(tmp_path)
    (pod / "memory.stat").write_text("file 209715200\n")
    with pytest.raises(InvalidInput, match=r"memory\.stat: field 'anon': missing"):
        PodMemoryProbe("n", tmp_path, "auto").read()
    (pod / "memory.current").write_text("lots\n")
    with pytest.raises(InvalidInput, match=r"memory\.current: line 1: expected an integer"):
        PodMemoryProbe("n", tmp_path, "auto").read()
    (pod / "io.stat").write_text("254:0 rbytes=many wbytes=0\n")
    with pytest.raises(InvalidInput, match=r"io\.stat: line 1, field 'rbytes'"):
        PodIoProbe("n", tmp_path, "auto", tmp_path).read()


def test_v1_io_accounting_that_never_counted_is_unavailable(tmp_path: Path) -> None:
    blkio = tmp_path / "cgroup" / "blkio"
    make(blkio, f"kubepods/burstable/pod{UID_B}")
    empty = "254:0 Read 0\n254:0 Write 0\nTotal 0\n"
    (blkio / "blkio.throttle.io_service_bytes_recursive").write_text(empty)
    (blkio / f"kubepods/burstable/pod{UID_B}/blkio.throttle.io_service_bytes_recursive"
     ).write_text(empty)
    (tmp_path / "diskstats").write_text(
        " 254 0 vda 35388 6479 2034186 7001 20885 140765 28484496 125613 0 8236 133999\n")
    with pytest.raises(ProbeUnavailable, match="blkio has counted no I/O since boot"):
        PodIoProbe("n", tmp_path / "cgroup", "auto", tmp_path).read()
