"""Every probe, registered once: a name and how to build it from the agent's settings."""

from __future__ import annotations

from collections.abc import Callable

from . import metric_names as m
from .config import AgentConfig
from .disk_await import DiskAwaitProbe
from .ebpf_loader import default_build_dir
from .gpu_free import GpuFreeProbe
from .memory_bandwidth import MemoryBandwidthProbe
from .ping_mesh import PingMeshProbe
from .pod_cpu import PodCpuProbe
from .pod_io import PodIoProbe
from .pod_memory import PodMemoryProbe
from .predictions import PredictionFile
from .reading import Probe
from .task_feedback import TaskFeedbackProbe

PROBES: dict[str, Callable[[AgentConfig], Probe]] = {
    m.PROBE_POD_MEMORY: lambda c: PodMemoryProbe(c.node_name, c.cgroup_root, c.kubepods),
    m.PROBE_POD_CPU: lambda c: PodCpuProbe(c.node_name, c.cgroup_root, c.kubepods),
    m.PROBE_POD_IO: lambda c: PodIoProbe(c.node_name, c.cgroup_root, c.kubepods, c.proc_root),
    m.PROBE_DISK_AWAIT: lambda c: DiskAwaitProbe(c.node_name, c.proc_root, c.sys_root,
                                                 c.disk_devices),
    m.PROBE_MEMORY_BANDWIDTH: lambda c: MemoryBandwidthProbe(
        c.node_name, c.sys_root, c.proc_root, c.peak_memory_bandwidth),
    m.PROBE_PING_MESH: lambda c: PingMeshProbe(c.node_name, c.peers, c.ping_attempts,
                                               min(c.ping_timeout_s, c.period_s / 4)),
    m.PROBE_GPU_FREE: lambda c: GpuFreeProbe(c.node_name, c.pod_resources_socket,
                                             c.gpu_resource, c.sys_root, c.proc_root),
    m.PROBE_TASK_FEEDBACK: lambda c: TaskFeedbackProbe(
        c.node_name, c.cgroup_root, c.kubepods, c.ebpf_dir or default_build_dir(), c.btf,
        PredictionFile(c.predictions), c.feedback_sink),
}


def build_probes(config: AgentConfig) -> list[Probe]:
    return [build(config) for build in PROBES.values()]
