"""Every metric the node agent exports: name, type, labels, meaning. Written once, read by all.

The live view's PromQL, the sandbox twin (which exports its simulated signals under the same
names) and the Prometheus keep list import these names; docs/LIVE.md lists them. Plain data:
this module must not import prometheus_client, so that readers of the metrics need not have it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# --- labels ----------------------------------------------------------------------------------
NODE = "node"  # the Kubernetes node name the agent runs on (--node-name)
POD_UID = "pod_uid"  # metadata.uid, read from the pod's cgroup directory name
QOS = "qos"  # guaranteed | burstable | besteffort, from the cgroup layout
DIRECTION = "direction"  # read | write
DEVICE = "device"  # a block device's kernel name (vda, nvme0n1)
SOURCE = "source"  # where a figure was counted: uncore_imc | resctrl_mbm; cgroup | ebpf
TASK_CLASS = "task_class"  # a finished pod's task class (its prediction's), "" when unknown
RESOURCE = "resource"  # cpu | memory | io
SRC = "src"  # ping mesh: the node that measured
DST = "dst"  # ping mesh: the peer it measured
ROOT_COMPLEX = "root_complex"  # a GPU's PCIe root complex (host bridge, e.g. pci0000:3a)
PROBE = "probe"  # one of the probe names below
REASON = "reason"  # why a probe is unavailable ("" when it works)

POD_LABELS = (NODE, POD_UID, QOS)

# --- probe names (values of the `probe` label) -------------------------------------------------
PROBE_POD_MEMORY = "pod_memory"
PROBE_POD_CPU = "pod_cpu"
PROBE_POD_IO = "pod_io"
PROBE_DISK_AWAIT = "disk_await"
PROBE_MEMORY_BANDWIDTH = "memory_bandwidth"
PROBE_PING_MESH = "ping_mesh"
PROBE_GPU_FREE = "gpu_free"
PROBE_TASK_FEEDBACK = "task_feedback"

# --- metric names ------------------------------------------------------------------------------
POD_MEMORY_USAGE_BYTES = "dagpilot_pod_memory_usage_bytes"
POD_MEMORY_RSS_BYTES = "dagpilot_pod_memory_rss_bytes"
POD_PAGE_CACHE_BYTES = "dagpilot_pod_page_cache_bytes"
POD_PAGE_CACHE_RATIO = "dagpilot_pod_page_cache_ratio"
POD_MEMORY_PEAK_BYTES = "dagpilot_pod_memory_peak_bytes"
POD_CPU_SECONDS_TOTAL = "dagpilot_pod_cpu_seconds_total"
POD_IO_BYTES_TOTAL = "dagpilot_pod_io_bytes_total"
DISK_AWAIT_MILLISECONDS = "dagpilot_disk_await_milliseconds"
DISK_IOS_PER_SECOND = "dagpilot_disk_ios_per_second"
MEMORY_BANDWIDTH_BYTES_PER_SECOND = "dagpilot_memory_bandwidth_bytes_per_second"
MEMORY_BANDWIDTH_UTILISATION = "dagpilot_memory_bandwidth_utilisation"
RTT_SECONDS = "dagpilot_rtt_seconds"
PING_LOSS_RATIO = "dagpilot_ping_loss_ratio"
GPUS_ALLOCATABLE = "dagpilot_gpus_allocatable"
GPUS_FREE = "dagpilot_gpus_free"
POD_EBPF_CPU_SECONDS_TOTAL = "dagpilot_pod_ebpf_cpu_seconds_total"
POD_EBPF_IO_BYTES_TOTAL = "dagpilot_pod_ebpf_io_bytes_total"
TASK_CPU_SECONDS = "dagpilot_task_cpu_seconds"
TASK_PEAK_MEMORY_BYTES = "dagpilot_task_peak_memory_bytes"
TASK_IO_BYTES = "dagpilot_task_io_bytes"
TASK_WASTE_RATIO = "dagpilot_task_waste_ratio"
RECOMMENDED_CPU_CORES = "dagpilot_recommended_cpu_cores"
RECOMMENDED_MEMORY_BYTES = "dagpilot_recommended_memory_bytes"
PROBE_AVAILABLE = "dagpilot_probe_available"
PROBE_SAMPLE_TIMESTAMP_SECONDS = "dagpilot_probe_sample_timestamp_seconds"
PROBE_DURATION_SECONDS = "dagpilot_probe_duration_seconds"


@dataclass(frozen=True, slots=True)
class MetricSpec:
    name: str
    kind: Literal["gauge", "counter"]
    labels: tuple[str, ...]
    help: str


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec(POD_MEMORY_USAGE_BYTES, "gauge", POD_LABELS,
               "Pod cgroup memory use, page cache included (v2 memory.current, "
               "v1 memory.usage_in_bytes)."),
    MetricSpec(POD_MEMORY_RSS_BYTES, "gauge", POD_LABELS,
               "Pod cgroup anonymous memory (v2 memory.stat anon, v1 total_rss)."),
    MetricSpec(POD_PAGE_CACHE_BYTES, "gauge", POD_LABELS,
               "Pod cgroup page cache (v2 memory.stat file, v1 total_cache)."),
    MetricSpec(POD_PAGE_CACHE_RATIO, "gauge", POD_LABELS,
               "Memory use over anonymous memory; above 1.8 the state encoder flags "
               "page-cache pollution. Absent while the pod has no anonymous memory."),
    MetricSpec(POD_MEMORY_PEAK_BYTES, "gauge", POD_LABELS,
               "Pod cgroup peak memory use (v2 memory.peak, v1 memory.max_usage_in_bytes)."),
    MetricSpec(POD_CPU_SECONDS_TOTAL, "counter", POD_LABELS,
               "Pod cgroup CPU time (v2 cpu.stat usage_usec, v1 cpuacct.usage)."),
    MetricSpec(POD_IO_BYTES_TOTAL, "counter", (*POD_LABELS, DIRECTION),
               "Pod cgroup block I/O bytes, all devices (v2 io.stat, "
               "v1 blkio.throttle.io_service_bytes_recursive)."),
    MetricSpec(DISK_AWAIT_MILLISECONDS, "gauge", (NODE, DEVICE),
               "Mean time per completed I/O over the last period, as iostat computes it from "
               "/proc/diskstats; 0 when the device completed none."),
    MetricSpec(DISK_IOS_PER_SECOND, "gauge", (NODE, DEVICE),
               "I/Os the device completed per second over the last period."),
    MetricSpec(MEMORY_BANDWIDTH_BYTES_PER_SECOND, "gauge", (NODE, SOURCE),
               "DRAM traffic of the whole node over the last period."),
    MetricSpec(MEMORY_BANDWIDTH_UTILISATION, "gauge", (NODE, SOURCE),
               "Memory bandwidth over the configured peak (--peak-memory-bandwidth); "
               "MBPI is the state encoder's function of it."),
    MetricSpec(RTT_SECONDS, "gauge", (SRC, DST),
               "Median TCP connect time to the peer's agent port; absent when every "
               "attempt failed."),
    MetricSpec(PING_LOSS_RATIO, "gauge", (SRC, DST),
               "Share of the period's connect attempts to the peer that failed."),
    MetricSpec(GPUS_ALLOCATABLE, "gauge", (NODE, ROOT_COMPLEX),
               "GPUs the kubelet can allocate, per PCIe root complex (PodResources API)."),
    MetricSpec(GPUS_FREE, "gauge", (NODE, ROOT_COMPLEX),
               "Allocatable GPUs no container holds, per PCIe root complex."),
    MetricSpec(POD_EBPF_CPU_SECONDS_TOTAL, "counter", POD_LABELS,
               "Pod on-CPU time counted by the agent's eBPF program (sched_switch) since it "
               "loaded; absent when eBPF is unavailable."),
    MetricSpec(POD_EBPF_IO_BYTES_TOTAL, "counter", (*POD_LABELS, DIRECTION),
               "Pod block I/O bytes counted by the eBPF program (block_bio_queue, charged to "
               "the bio's cgroup) since it loaded; absent when eBPF is unavailable."),
    MetricSpec(TASK_CPU_SECONDS, "gauge", (NODE, POD_UID, TASK_CLASS, SOURCE),
               "A finished pod's CPU time, from its cgroup and from eBPF."),
    MetricSpec(TASK_PEAK_MEMORY_BYTES, "gauge", (NODE, POD_UID, TASK_CLASS),
               "A finished pod's peak memory use (its cgroup's)."),
    MetricSpec(TASK_IO_BYTES, "gauge", (NODE, POD_UID, TASK_CLASS, SOURCE, DIRECTION),
               "A finished pod's block I/O bytes, from its cgroup and from eBPF."),
    MetricSpec(TASK_WASTE_RATIO, "gauge", (NODE, POD_UID, TASK_CLASS, RESOURCE),
               "A finished pod's actual over predicted use, minus 1 (negative: it used less "
               "than predicted); absent without a prediction."),
    MetricSpec(RECOMMENDED_CPU_CORES, "gauge", (NODE, TASK_CLASS),
               "CPU request for the next pod of the class, from its recent finished pods."),
    MetricSpec(RECOMMENDED_MEMORY_BYTES, "gauge", (NODE, TASK_CLASS),
               "Memory request for the next pod of the class, from its recent finished pods."),
    MetricSpec(PROBE_AVAILABLE, "gauge", (NODE, PROBE, REASON),
               "1 when the probe measured this period, 0 with the reason when it could not."),
    MetricSpec(PROBE_SAMPLE_TIMESTAMP_SECONDS, "gauge", (NODE, PROBE),
               "Unix time of the probe's last measurement."),
    MetricSpec(PROBE_DURATION_SECONDS, "gauge", (NODE, PROBE),
               "How long the probe's last measurement took."),
)

METRICS_BY_NAME = {spec.name: spec for spec in METRICS}
