"""Per pod: block I/O bytes read and written, from the pod cgroup's hierarchical counters.

cgroup v2 counts every pod's I/O in io.stat. cgroup v1 counts it in the blkio throttle
statistics, which recent kernels keep only for devices whose queue has had a throttle rule set
(any blkio.throttle.*_device limit, however high): elsewhere the counters stay at zero. When the
whole v1 hierarchy has counted nothing since boot while /proc/diskstats shows I/O, the probe
says so instead of exporting zeros. Writeback of page cache is charged to the pod only on v2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dagpilot.core.errors import InvalidInput

from . import metric_names as m
from .cgroup_hierarchy import Hierarchy
from .diskstats import read_diskstats
from .pod_cgroups import PodCgroup, hierarchy_pods
from .reading import ProbeReading, ProbeUnavailable, Sample, sample

V1_FILE = "blkio.throttle.io_service_bytes_recursive"
V2_FILE = "io.stat"


@dataclass(frozen=True, slots=True)
class PodIoProbe:
    node: str
    cgroup_root: Path
    kubepods: str
    proc_root: Path
    name: str = m.PROBE_POD_IO

    def read(self) -> ProbeReading:
        hierarchy, pods = hierarchy_pods(self.cgroup_root, "io", self.kubepods, self.name)
        if hierarchy.version == 1:
            self._check_v1_accounting(hierarchy)
        samples: list[Sample] = []
        for pod in pods:
            try:
                read_bytes, written_bytes = _io_bytes(hierarchy, pod)
            except FileNotFoundError:  # the pod ended between listing and reading
                continue
            labels = {m.NODE: self.node, m.POD_UID: pod.uid, m.QOS: pod.qos}
            samples += [sample(m.POD_IO_BYTES_TOTAL, read_bytes, direction="read", **labels),
                        sample(m.POD_IO_BYTES_TOTAL, written_bytes, direction="write",
                               **labels)]
        return ProbeReading(tuple(samples))

    def _check_v1_accounting(self, hierarchy: Hierarchy) -> None:
        read_bytes, written_bytes = _v1_bytes(hierarchy.root / V1_FILE)
        if read_bytes or written_bytes:
            return
        disks = read_diskstats(self.proc_root / "diskstats")
        if any(stats.completed_ios for stats in disks.values()):
            raise ProbeUnavailable(self.name, (
                "cgroup v1 blkio has counted no I/O since boot while /proc/diskstats shows "
                "I/O: this kernel counts it only on devices with a blkio.throttle rule"))


def _io_bytes(hierarchy: Hierarchy, pod: PodCgroup) -> tuple[int, int]:
    if hierarchy.version == 1:
        return _v1_bytes(pod.path / V1_FILE)
    return _v2_bytes(pod.path / V2_FILE)


def _v1_bytes(path: Path) -> tuple[int, int]:
    """Read and Write bytes summed over devices: `MAJ:MIN Read N` lines (and a `Total N`)."""
    totals = {"Read": 0, "Write": 0}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        fields = line.split()
        if len(fields) == 3 and fields[1] in totals:
            totals[fields[1]] += _count(fields[2], path, number, fields[1])
    return totals["Read"], totals["Write"]


def _v2_bytes(path: Path) -> tuple[int, int]:
    """rbytes and wbytes summed over devices: `MAJ:MIN rbytes=N wbytes=N rios=N ...` lines."""
    totals = {"rbytes": 0, "wbytes": 0}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        for pair in line.split()[1:]:
            key, _, value = pair.partition("=")
            if key in totals:
                totals[key] += _count(value, path, number, key)
    return totals["rbytes"], totals["wbytes"]


def _count(text: str, path: Path, line: int, field: str) -> int:
    if not text.isdigit():
        raise InvalidInput(str(path), f"line {line}", field, f"expected a count, got {text!r}")
    return int(text)
