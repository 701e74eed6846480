"""Frozen value types shared by every layer: resources, tasks, jobs (DAGs), nodes and clusters.

Units are fixed everywhere: CPU in cores, memory and I/O in bytes, time in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property

from dagpilot.core import dag

Labels = tuple[tuple[str, str], ...]
"""Key/value pairs, sorted by key, so that values stay hashable."""


def labels(mapping: dict[str, str] | None = None) -> Labels:
    """Labels from a mapping, in the canonical sorted order."""
    return tuple(sorted((mapping or {}).items()))


@dataclass(frozen=True, slots=True)
class Resources:
    """Compute amounts; `gpu_model` is the model asked for (requests) or held (capacity)."""

    cpu: float = 0.0
    memory: int = 0
    gpus: int = 0
    gpu_model: str | None = None

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpu + other.cpu, self.memory + other.memory,
                         self.gpus + other.gpus, self.gpu_model or other.gpu_model)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.cpu - other.cpu, self.memory - other.memory,
                         self.gpus - other.gpus, self.gpu_model)

    def fits_in(self, capacity: Resources) -> bool:
        """Whether these amounts fit in `capacity` (models are a separate constraint)."""
        return (self.cpu <= capacity.cpu + 1e-9 and self.memory <= capacity.memory
                and self.gpus <= capacity.gpus)


class TaintEffect(Enum):
    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: TaintEffect = TaintEffect.NO_SCHEDULE


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod toleration; an empty key with operator Exists tolerates everything."""

    key: str = ""
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: TaintEffect | None = None  # None tolerates every effect

    def tolerates(self, taint: Taint) -> bool:
        if self.effect is not None and self.effect is not taint.effect:
            return False
        if self.operator == "Exists":
            return self.key in ("", taint.key)
        return self.key == taint.key and self.value == taint.value


@dataclass(frozen=True, slots=True)
class Requirement:
    """A node-selector requirement; operator is In, NotIn, Exists, DoesNotExist, Gt or Lt."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, node_labels: dict[str, str]) -> bool:
        value = node_labels.get(self.key)
        if self.operator == "In":
            return value in self.values
        if self.operator == "NotIn":
            return value not in self.values
        if self.operator == "Exists":
            return value is not None
        if self.operator == "DoesNotExist":
            return value is None
        if value is None or not self.values:
            return False
        try:
            number, bound = int(value), int(self.values[0])
        except ValueError:
            return False
        return number > bound if self.operator == "Gt" else number < bound


Term = tuple[Requirement, ...]
"""Requirements that must all hold (a NodeSelectorTerm)."""


@dataclass(frozen=True, slots=True)
class NodeAffinity:
    """Required terms are ORed (any one term must match); preferred terms add their weight."""

    required: tuple[Term, ...] = ()
    preferred: tuple[tuple[int, Term], ...] = ()


class TaskClass(Enum):
    """What mostly limits a task; the simulator's physical effects key on it."""

    CPU = "cpu"
    MEMORY = "memory"
    IO = "io"
    NETWORK = "network"
    GPU = "gpu"


@dataclass(frozen=True, slots=True)
class Recorded:
    """What a real run recorded about a task: where it ran and when (seconds, trace clock)."""

    node: str | None = None
    submit_s: float | None = None
    start_s: float | None = None
    complete_s: float | None = None


@dataclass(frozen=True, slots=True)
class Task:
    """One DAG node: a pod, or `instances` identical parallel pods (a Spark stage, an Alibaba task).

    `runtime_s` is the nominal runtime of one instance at its requests, with no interference.
    `instance_runtimes_s`, when recorded, gives each instance its own runtime.
    """

    id: str
    name: str
    runtime_s: float
    requests: Resources
    parents: tuple[str, ...] = ()
    children: tuple[str, ...] = ()
    instances: int = 1
    instance_runtimes_s: tuple[float, ...] = ()
    limits: Resources | None = None
    peak_memory: int | None = None  # actual peak (with page cache when I/O heavy), when known
    read_bytes: int = 0
    written_bytes: int = 0
    cpu_intensity: float = 1.0  # share of the requested cores kept busy, 0..1
    membw_intensity: float = 0.0  # share of runtime bound by memory bandwidth, 0..1
    io_intensity: float = 0.0  # share of runtime waiting on storage, 0..1
    comm_group: str | None = None  # tasks that exchange data while running (shuffle, all-reduce)
    comm_share: float = 0.0  # share of runtime spent communicating, 0..1
    task_class: TaskClass = TaskClass.CPU
    priority: int = 0
    node_selector: Labels = ()
    tolerations: tuple[Toleration, ...] = ()
    affinity: NodeAffinity | None = None
    recorded: Recorded | None = None

    @property
    def longest_runtime_s(self) -> float:
        """How long the task takes when all its instances run in parallel."""
        return max(self.instance_runtimes_s, default=self.runtime_s)

    @property
    def total_runtime_s(self) -> float:
        """The runtimes of all instances added up (each instance's own when recorded)."""
        if self.instance_runtimes_s:
            return sum(self.instance_runtimes_s)
        return self.runtime_s * self.instances

    @property
    def work_core_s(self) -> float:
        """Core-seconds of work over all instances."""
        return self.total_runtime_s * self.requests.cpu


@dataclass(frozen=True)
class Job:
    """A workflow: tasks in topological order, parents and children consistent (see core.dag)."""

    id: str
    tasks: tuple[Task, ...]
    arrival_s: float = 0.0
    priority: int = 0
    source: str = ""
    labels: Labels = ()
    recorded_makespan_s: float | None = None

    @cached_property
    def index(self) -> dict[str, Task]:
        return {task.id: task for task in self.tasks}

    def task(self, task_id: str) -> Task:
        return self.index[task_id]

    @property
    def instances(self) -> int:
        return sum(task.instances for task in self.tasks)

    @cached_property
    def critical_path_s(self) -> float:
        return max(self.b_levels.values(), default=0.0)

    @cached_property
    def b_levels(self) -> dict[str, float]:
        """Longest runtime from the start of each task to the end of the job."""
        return dag.b_levels(self.tasks)

    @cached_property
    def depths(self) -> dict[str, int]:
        return dag.depths(self.tasks)

    @property
    def total_work_core_s(self) -> float:
        return sum(task.work_core_s for task in self.tasks)

    def label(self, key: str, default: str = "") -> str:
        return dict(self.labels).get(key, default)


class DiskKind(Enum):
    NVME = "nvme"
    SSD = "ssd"
    NETWORK = "network"
    HDD = "hdd"


@dataclass(frozen=True, slots=True)
class Disk:
    kind: DiskKind = DiskKind.NVME
    iops: int = 30_000
    bandwidth_bytes_s: int = 2_000_000_000
    shared_pool: str | None = None  # network disks of one pool share its IOPS


@dataclass(frozen=True, slots=True)
class Gpu:
    index: int
    model: str
    root_complex: int  # PCIe root complex; GPUs on one complex talk at full bandwidth


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """A node as the scheduler sees it: allocatable resources, topology, labels and taints."""

    name: str
    allocatable: Resources
    zone: str = "zone-a"
    rack: str = "rack-0"
    gpus: tuple[Gpu, ...] = ()
    disk: Disk = field(default_factory=Disk)
    memory_bandwidth_bytes_s: int = 100_000_000_000
    cpu_speed: float = 1.0  # relative to the reference core that task runtimes are measured on
    labels: Labels = ()
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False

    @property
    def root_complexes(self) -> dict[int, tuple[Gpu, ...]]:
        groups: dict[int, list[Gpu]] = {}
        for gpu in self.gpus:
            groups.setdefault(gpu.root_complex, []).append(gpu)
        return {rc: tuple(members) for rc, members in sorted(groups.items())}


@dataclass(frozen=True)
class Cluster:
    name: str
    nodes: tuple[NodeSpec, ...]

    @cached_property
    def index(self) -> dict[str, NodeSpec]:
        return {node.name: node for node in self.nodes}

    def node(self, name: str) -> NodeSpec:
        return self.index[name]

    @cached_property
    def capacity(self) -> Resources:
        total = Resources()
        for node in self.nodes:
            total = total + Resources(node.allocatable.cpu, node.allocatable.memory,
                                      node.allocatable.gpus)
        return total

    @property
    def largest_node(self) -> NodeSpec:
        return max(self.nodes, key=lambda n: (n.allocatable.cpu, n.allocatable.memory, n.name))
