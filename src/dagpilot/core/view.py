"""ClusterView: the one picture of a cluster that schedulers read.

The simulator and the live collectors both produce it, so a scheduler cannot tell them apart.
It holds what a real scheduler can know: node specs, requests bound to each node, free GPUs,
readiness, the last *sampled* metrics (stale by up to one scrape interval), pending pods in
creation order, and where each job's pods run. Never the hidden truth of what comes next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Protocol

import numpy as np

from dagpilot.core.types import Cluster, Job, NodeSpec, Resources, Task


@dataclass(frozen=True, slots=True)
class PodRef:
    """One pod: instance `instance` of `task` in `job`, created by the workflow engine."""

    uid: int  # unique within one run or one live session
    job: Job
    task: Task
    instance: int
    created_s: float  # creationTimestamp: when the engine submitted it
    attempt: int = 0  # restarts after an OOM kill or a node fault

    @property
    def name(self) -> str:
        suffix = f"-{self.instance}" if self.task.instances > 1 else ""
        return f"{self.job.id}/{self.task.id}{suffix}"

    @property
    def requests(self) -> Resources:
        return self.task.requests

    @property
    def runtime_s(self) -> float:
        """The expected runtime a scheduler may know (annotation, history, trace)."""
        runtimes = self.task.instance_runtimes_s
        return runtimes[self.instance] if runtimes else self.task.runtime_s


@dataclass(frozen=True, slots=True)
class NodeSignals:
    """Metrics as last scraped from a node; `sampled_s` says how old they are."""

    sampled_s: float = 0.0
    cpu_used: float = 0.0  # cores busy
    memory_used: int = 0  # container_memory_usage_bytes summed over pods (no page cache)
    memory_current: int = 0  # cgroup memory.current: includes page cache
    membw_utilisation: float = 0.0  # memory-bandwidth demand / capacity, 0..1+
    io_await_ms: float = 0.0  # storage await
    # Requests bound after the sample was taken: load the metrics cannot show yet.
    placed_since_sample: Resources = field(default_factory=Resources)


SIGNAL_COLUMNS = ("sampled_s", "cpu_used", "memory_used", "memory_current",
                  "membw_utilisation", "io_await_ms", "placed_cpu", "placed_memory",
                  "placed_gpus")
"""The rows of `ClusterView.signal_arrays`: NodeSignals' fields, placed_since_sample split."""


def signal_row(signals: NodeSignals) -> tuple[float, ...]:
    """One node's signals in the order of SIGNAL_COLUMNS."""
    placed = signals.placed_since_sample
    return (signals.sampled_s, signals.cpu_used, signals.memory_used, signals.memory_current,
            signals.membw_utilisation, signals.io_await_ms, placed.cpu, placed.memory,
            placed.gpus)


def signal_columns(signals: Sequence[NodeSignals]) -> np.ndarray:
    """(len(SIGNAL_COLUMNS), len(signals)) float64: the rows of `signal_row` as columns."""
    # One flat pass of floats: numpy converts a list of row tuples several times slower.
    flat = np.fromiter(chain.from_iterable(map(signal_row, signals)), dtype=np.float64,
                       count=len(signals) * len(SIGNAL_COLUMNS))
    return flat.reshape(-1, len(SIGNAL_COLUMNS)).T.copy()


class NodeState(Protocol):
    """One node as the view shows it."""

    @property
    def spec(self) -> NodeSpec: ...

    @property
    def allocated(self) -> Resources:
        """Sum of the requests of the pods bound to the node."""
        ...

    @property
    def free_gpus(self) -> tuple[int, ...]:
        """Indices (into spec.gpus) of the GPUs not bound to a pod."""
        ...

    @property
    def ready(self) -> bool: ...

    @property
    def pods(self) -> int: ...

    @property
    def signals(self) -> NodeSignals: ...


class ClusterView(Protocol):
    @property
    def now_s(self) -> float: ...

    @property
    def cluster(self) -> Cluster: ...

    @property
    def nodes(self) -> Sequence[NodeState]:
        """In the order of cluster.nodes."""
        ...

    @property
    def pending(self) -> Sequence[PodRef]:
        """Pods waiting for a node, oldest first."""
        ...

    def job_nodes(self, job_id: str) -> Sequence[str]:
        """Names of the nodes where the job's pods run now (for network-aware placement)."""
        ...

    def rtt_ms(self, node_a: str, node_b: str) -> float:
        """Round-trip time between two nodes, as a ping mesh would measure it."""
        ...

    def finished_tasks(self, job_id: str) -> frozenset[str]:
        """Ids of the job's tasks whose every instance has finished."""
        ...

    def resource_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(allocatable, allocated): float64 arrays of shape (nodes, 3) holding cpu, memory and
        GPUs, in node order, so that filters and scores can work on all nodes at once.
        Read-only for the caller; valid until the next placement."""
        ...

    def ready_mask(self) -> np.ndarray:
        """Bool array of shape (nodes,): whether each node is Ready, in node order (what
        `nodes[i].ready` says, without a pass over the nodes). Read-only for the caller; valid
        until the next placement."""
        ...

    def signal_arrays(self) -> np.ndarray:
        """(len(SIGNAL_COLUMNS), nodes) float64: what each node's `signals` says, one row per
        signal, one column per node in node order (`signal_columns` of the nodes' signals), so
        that feature encoders need no pass over the nodes. Read-only for the caller; valid
        until the next placement or scrape. A view that can should hand out the same array
        object while no node's signals changed: readers then skip comparing them."""
        ...

    def changed_nodes(self, since: int) -> tuple[int, Sequence[int] | None]:
        """(a token for the view as it is now, the indices of the nodes whose allocation or
        readiness changed after the view of token `since`, maybe repeated). The indices are
        None when the view cannot tell (a view without a change log, an unknown or too old
        token): treat every node as changed then. Lets a scheduler keep per-node caches without
        comparing whole arrays every decision, the way kube-scheduler's cache follows informer
        events."""
        ...
