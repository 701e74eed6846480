"""Per pod: CPU time used, from the pod cgroup's hierarchical counter."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import metric_names as m
from .cgroup_hierarchy import Hierarchy
from .kernel_files import read_int, read_keyed, require
from .pod_cgroups import PodCgroup, hierarchy_pods
from .reading import ProbeReading, Sample, sample


@dataclass(frozen=True, slots=True)
class PodCpuProbe:
    node: str
    cgroup_root: Path
    kubepods: str
    name: str = m.PROBE_POD_CPU

    def read(self) -> ProbeReading:
        hierarchy, pods = hierarchy_pods(self.cgroup_root, "cpu", self.kubepods, self.name)
        samples: list[Sample] = []
        for pod in pods:
            try:
                seconds = _cpu_seconds(hierarchy, pod)
            except FileNotFoundError:  # the pod ended between listing and reading
                continue
            samples.append(sample(m.POD_CPU_SECONDS_TOTAL, seconds, node=self.node,
                                  pod_uid=pod.uid, qos=pod.qos))
        return ProbeReading(tuple(samples))


def _cpu_seconds(hierarchy: Hierarchy, pod: PodCgroup) -> float:
    if hierarchy.version == 1:
        return read_int(pod.path / "cpuacct.usage") / 1e9  # nanoseconds
    stat_path = pod.path / "cpu.stat"
    return require(read_keyed(stat_path), "usage_usec", stat_path) / 1e6
