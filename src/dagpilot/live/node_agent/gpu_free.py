"""Which GPUs are free on each PCIe root complex, from the kubelet's PodResources API.

free = the devices the kubelet may allocate (GetAllocatableResources) minus those a running
container holds (List), for one extended resource (nvidia.com/gpu by default). Where the kubelet
does not serve the API (no socket, an old kubelet, no grpcio) the probe is unavailable and the
metrics are absent: unknown stays unknown. GPUs handed out through DRA (dynamic_resources) are
not in these device lists.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from . import metric_names as m
from .gpu_root_complex import RootComplexes
from .pod_resources import Devices, PodResourcesClient, PodResourcesError
from .reading import ProbeReading, ProbeUnavailable, Sample, sample


@dataclass
class GpuFreeProbe:
    node: str
    socket_path: Path
    resource: str
    sys_root: Path
    proc_root: Path
    timeout_s: float = 2.0
    name: str = m.PROBE_GPU_FREE
    _client: PodResourcesClient | None = None
    _root_complexes: RootComplexes | None = field(default=None, repr=False)

    def read(self) -> ProbeReading:
        if not self.socket_path.exists():
            raise ProbeUnavailable(self.name, f"no kubelet PodResources socket at "
                                              f"{self.socket_path}")
        if self._client is None:
            self._client = PodResourcesClient(self.socket_path, self.timeout_s)
        try:
            allocatable = self._ids(self._client.allocatable())
            held = self._ids(self._client.assigned())
        except PodResourcesError as error:
            raise ProbeUnavailable(self.name, f"PodResources API: {error}") from None
        if not allocatable:
            return ProbeReading((), note=f"the kubelet has no {self.resource} to allocate")
        resolver = self._root_complexes or RootComplexes(self.sys_root, self.proc_root)
        self._root_complexes = resolver
        total = Counter(resolver.of(device) for device in allocatable)
        free = Counter(resolver.of(device) for device in allocatable - held)
        samples: list[Sample] = []
        for root_complex in sorted(total):
            samples += [sample(m.GPUS_ALLOCATABLE, total[root_complex], node=self.node,
                               root_complex=root_complex),
                        sample(m.GPUS_FREE, free[root_complex], node=self.node,
                               root_complex=root_complex)]
        return ProbeReading(tuple(samples))

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _ids(self, devices: list[Devices]) -> set[str]:
        return {device for entry in devices if entry.resource_name == self.resource
                for device in entry.device_ids}
