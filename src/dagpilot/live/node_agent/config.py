"""The node agent's settings, one frozen object built by the CLI (or a test) and passed down."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .ebpf_loader import DEFAULT_BTF
from .ping_mesh import Peer
from .pod_cgroups import AUTO
from .pod_resources import DEFAULT_SOCKET
from .task_feedback import FeedbackSink

DEFAULT_PORT = 9810
DEFAULT_PERIOD_S = 5.0


@dataclass(frozen=True, slots=True)
class AgentConfig:
    node_name: str
    port: int = DEFAULT_PORT
    address: str = "0.0.0.0"
    period_s: float = DEFAULT_PERIOD_S
    peers: tuple[Peer, ...] = ()
    # Where the host's kernel files are (a DaemonSet mounts them, e.g. at /host/sys).
    cgroup_root: Path = Path("/sys/fs/cgroup")
    proc_root: Path = Path("/proc")
    sys_root: Path = Path("/sys")
    kubepods: str = AUTO  # the pods' parent cgroup, relative to each hierarchy
    pod_resources_socket: Path = DEFAULT_SOCKET
    gpu_resource: str = "nvidia.com/gpu"
    peak_memory_bandwidth: float | None = None  # bytes/s
    disk_devices: re.Pattern[str] | None = None  # None: whole disks but loop, ram, zram
    ping_attempts: int = 3
    ping_timeout_s: float = 1.0
    # Task feedback: the eBPF build folder (None: ebpf_loader.default_build_dir()), the BTF
    # its objects are relocated against, the predictions file, where finished pods' records go.
    ebpf_dir: Path | None = None
    btf: Path = DEFAULT_BTF
    predictions: Path | None = None
    feedback_sink: FeedbackSink | None = None
