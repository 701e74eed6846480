"""ClusterView: the one picture of a cluster that schedulers read.

The simulator and the live collectors both produce it, so a scheduler cannot tell them apart.
It holds what a real scheduler can know: node specs, requests bound to each node, free GPUs,
readiness, the last *sampled* metrics (stale by up to one scrape interval), pending pods in
creation order, and where each job's pods run. Never the hidden truth of what comes next.

The contract (what every view keeps, what the caches of `decide`, `state` and the schedulers
rely on; `tests/core/view_conformance.py` checks it, one suite for every view):

- Spec and state. A node's *spec* (`NodeSpec`: allocatable, labels, taints, cordon, GPUs,
  topology) changes only with the cluster's inventory; its *state* (`NodeState`: allocation,
  free GPUs, readiness, pod count, signals) with every bind, release, heartbeat and scrape.
- `cluster` is the same object as long as no node spec changes, and a new `Cluster` (with a new
  `nodes` tuple) as soon as any does: a cordon or uncordon, a taint, a label, a capacity change,
  a node added or removed. Readiness, allocation and signals are state: they never make a new
  `Cluster`. Consumers key what they derive from specs (static filter masks, capacities, the
  encoder's node statics) on `view.cluster.nodes` being the same object, so a view that hands out
  a new one for an unchanged inventory is slow, and one that keeps the old one for a changed
  inventory is wrong.
- `nodes[i]` is the node `cluster.nodes[i]` (equal spec, same order, same count); every array
  below has one row or column per node in that order.
- `changed_nodes(since)` returns `(token, changed)`. A token is an int >= 0 that names the view
  as it is at the call; -1 is never one. `changed` lists (maybe repeated, maybe with extra
  nodes, never missing one) the indices of the nodes whose allocation or readiness changed
  after the view of token `since`; it is empty when nothing did. It is None when the view
  cannot tell, and a reader then treats every node as changed: a view without a change log, a
  token this view never gave (-1 included) or one too old to replay, and any token given
  before `cluster` changed (indices are positions in `cluster.nodes`, which may now name other
  nodes). Signals are not listed: a scrape changes `signal_arrays()` instead. A token means
  something only to the view that gave it (the same object, or for a view rebuilt on every
  change, the views derived from it): readers that may be handed several views start afresh
  when the view or its `cluster` is another object.
- Arrays are read-only (`flags.writeable` is False) and never written by their reader.
  `resource_arrays()`'s allocatable and every `signal_arrays()` result are never written by the
  view either once handed out: the same object means the same values, and readers skip
  comparing them then. `signal_arrays()` returns a new object whenever any node's signals
  changed, and should return the same one while none did. `resource_arrays()`'s allocated and
  `ready_mask()` may be the view's live buffers, updated in place by the next change: the same
  object says nothing about their values, and a reader copies what it keeps past a change.
- `pending` is oldest first (creation order) and holds no bound pod; binding a pod removes it
  and keeps the order of the others. `job_nodes` lists each node where one of the job's pods is
  bound, once; `finished_tasks` of an unknown job is empty; `rtt_ms` is finite, >= 0 and
  symmetric. `now_s` never goes back.

`core.snapshot` is the reference implementation: an immutable view with an optional change
log, which tests build by hand.
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
    def priority(self) -> int:
        """Its task's priority when set (a template's, a pod's spec.priority), else its job's."""
        return self.task.priority or self.job.priority

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
    def cluster(self) -> Cluster:
        """The node specs; a new object whenever any spec changes, the same one otherwise."""
        ...

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
        Read-only; allocatable is never written, allocated is valid until the next change."""
        ...

    def ready_mask(self) -> np.ndarray:
        """Bool array of shape (nodes,): whether each node is Ready, in node order (what
        `nodes[i].ready` says, without a pass over the nodes). Read-only; valid until the
        next change."""
        ...

    def signal_arrays(self) -> np.ndarray:
        """(len(SIGNAL_COLUMNS), nodes) float64: what each node's `signals` says, one row per
        signal, one column per node in node order (`signal_columns` of the nodes' signals), so
        that feature encoders need no pass over the nodes. Read-only and never written once
        handed out: a new object when any node's signals changed; a view that can should hand
        out the same one while none did (readers then skip comparing them)."""
        ...

    def changed_nodes(self, since: int) -> tuple[int, Sequence[int] | None]:
        """(a token for the view as it is now, the indices of the nodes whose allocation or
        readiness changed after the view of token `since`, maybe repeated). The indices are
        None when the view cannot tell (a view without a change log, an unknown or too old
        token, a token from before `cluster` changed): treat every node as changed then. Lets
        a scheduler keep per-node caches without comparing whole arrays every decision, the
        way kube-scheduler's cache follows informer events. The module docstring has the
        token rules."""
        ...
