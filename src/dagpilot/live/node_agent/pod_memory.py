"""Per pod: memory use against anonymous memory (page cache), their ratio, and peak use.

The ratio is what the state encoder reads as page-cache pollution (above 1.8, state/bands.py):
memory.current (v1 memory.usage_in_bytes) counts the page cache a pod's reads and writes leave
behind, anonymous memory (v1 total_rss) does not. Both come from the pod's cgroup, whose v1
`total_*` and v2 memory.stat fields include every container below it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import metric_names as m
from .cgroup_hierarchy import Hierarchy
from .kernel_files import read_int, read_keyed, require
from .pod_cgroups import PodCgroup, hierarchy_pods
from .reading import ProbeReading, Sample, sample

# (memory in use, its stat file's anonymous and page-cache fields, peak) per cgroup version
_FILES = {
    1: ("memory.usage_in_bytes", "total_rss", "total_cache", "memory.max_usage_in_bytes"),
    2: ("memory.current", "anon", "file", "memory.peak"),
}


@dataclass(frozen=True, slots=True)
class PodMemoryProbe:
    node: str
    cgroup_root: Path
    kubepods: str
    name: str = m.PROBE_POD_MEMORY

    def read(self) -> ProbeReading:
        hierarchy, pods = hierarchy_pods(self.cgroup_root, "memory", self.kubepods, self.name)
        samples: list[Sample] = []
        for pod in pods:
            try:
                samples += self._pod_samples(hierarchy, pod)
            except FileNotFoundError:  # the pod ended between listing and reading
                continue
        return ProbeReading(tuple(samples))

    def _pod_samples(self, hierarchy: Hierarchy, pod: PodCgroup) -> list[Sample]:
        usage_file, anon_field, cache_field, peak_file = _FILES[hierarchy.version]
        usage = read_int(pod.path / usage_file)
        stat_path = pod.path / "memory.stat"
        stat = read_keyed(stat_path)
        rss = require(stat, anon_field, stat_path)
        labels = {m.NODE: self.node, m.POD_UID: pod.uid, m.QOS: pod.qos}
        samples = [sample(m.POD_MEMORY_USAGE_BYTES, usage, **labels),
                   sample(m.POD_MEMORY_RSS_BYTES, rss, **labels),
                   sample(m.POD_PAGE_CACHE_BYTES, require(stat, cache_field, stat_path),
                          **labels)]
        if rss > 0:  # a pod of page cache alone has no ratio, not an infinite one
            samples.append(sample(m.POD_PAGE_CACHE_RATIO, usage / rss, **labels))
        if (pod.path / peak_file).is_file():  # memory.peak needs Linux 5.19
            samples.append(sample(m.POD_MEMORY_PEAK_BYTES, read_int(pod.path / peak_file),
                                  **labels))
        return samples
