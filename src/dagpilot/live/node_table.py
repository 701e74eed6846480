"""The live view's nodes: the Cluster of the parsed Node records, each node's state, the arrays.

- The cluster holds the nodes whose spec parses, in name order (`kubectl get nodes`). It is
  rebuilt, as a new object, only when a spec changes (a label, taint, cordon, capacity, a node
  added or removed, a node turning malformed or parsing again); a Node update that leaves the
  spec equal (a heartbeat, a condition) changes at most readiness, which is state.
- Allocation is kept in whole units (millicores, bytes, GPUs) so that sums stay exact; the
  (nodes, 3) arrays of `resource_arrays` follow it in place, and every allocation or readiness
  change of a row is logged for `changed_nodes`.
- Free GPUs: the API server knows how many GPUs a node's pods requested, not which devices the
  kubelet gave them. Where the node agent (or the sandbox's twin) reports the free GPUs of each
  root complex (`dagpilot_gpus_free`, from the kubelet's PodResources) and its total agrees
  with the API's count (it does unless a bind or release came after that sample),
  `free_gpus` lists that many on each complex. Otherwise it has the exact count (the contract:
  GPUs less those allocated) and lists the lowest indices: still exact when the node has one
  root complex or nothing allocated (which indices within a complex is immaterial); else which
  complex the free ones are on is unknown, `gpus_exact` is False and `live show` prints each
  complex's count as null: unknown stays unknown. The agent names a complex by its PCI host
  bridge: the sorted names are the node's complexes in order (the twin names them by number).
- Signals: each node's last measured readings with their sample time (`sampled_s`, the oldest
  reading's; 0.0, "never", when any measured column has no reading at all), and what was bound
  there after that time (`placed_since_sample`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from dagpilot.core.types import Cluster, Resources
from dagpilot.core.view import SIGNAL_COLUMNS, NodeSignals, signal_columns, signal_row
from dagpilot.live.change_log import ChangeLog
from dagpilot.live.nodes import NodeRecord
from dagpilot.live.pods import Amounts
from dagpilot.live.prometheus import Reading

NEVER = 0.0  # the sample time of a node with a measured column missing: no usable sample
CLUSTER_NAME = "live"


class LiveNode:
    """One node's NodeState, updated in place by the table."""

    __slots__ = ("_allocated", "_free", "_signals", "gpus_allocated", "gpus_reported", "labels",
                 "measured", "memory", "millicpu", "pods", "ready", "recent", "row", "sampled_s",
                 "spec", "taints")

    def __init__(self, record: NodeRecord, row: int) -> None:
        assert record.spec is not None
        self.spec = record.spec
        self.labels = record.labels
        self.taints = record.taints
        self.row = row
        self.ready = record.ready
        self.millicpu = self.memory = self.gpus_allocated = self.pods = 0
        self.measured: Mapping[str, Reading] = {}
        self.sampled_s = NEVER
        self.recent: dict[str, tuple[float, Amounts]] = {}  # uid -> (bound_s, requests)
        self.gpus_reported: tuple[int, ...] | None = None  # free per complex, in order
        self._allocated: Resources | None = None
        self._free: tuple[int, ...] | None = None
        self._signals: NodeSignals | None = None

    @property
    def allocated(self) -> Resources:
        if self._allocated is None:
            self._allocated = Resources(self.millicpu / 1000, self.memory, self.gpus_allocated)
        return self._allocated

    @property
    def free_gpus(self) -> tuple[int, ...]:
        if self._free is None:
            if self._reported_applies():
                assert self.gpus_reported is not None
                self._free = tuple(sorted(gpu.index for count, members in zip(
                    self.gpus_reported, self.spec.root_complexes.values(), strict=True)
                    for gpu in members[:count]))
            else:
                self._free = tuple(range(max(0, len(self.spec.gpus) - self.gpus_allocated)))
        return self._free

    @property
    def gpus_exact(self) -> bool:
        """Whether `free_gpus` says which GPUs are free (else only how many)."""
        return (not self.gpus_allocated or len(self.spec.root_complexes) <= 1
                or self._reported_applies())

    def _reported_applies(self) -> bool:
        reported = self.gpus_reported
        return reported is not None and sum(reported) == len(self.spec.gpus) - \
            self.gpus_allocated and all(count <= len(members) for count, members in zip(
                reported, self.spec.root_complexes.values(), strict=True))

    @property
    def signals(self) -> NodeSignals:
        if self._signals is None:
            placed = Amounts()
            for bound_s, amounts in self.recent.values():
                if bound_s > self.sampled_s:
                    placed = Amounts(placed.millicpu + amounts.millicpu,
                                     placed.memory + amounts.memory, placed.gpus + amounts.gpus)
            value = {column: reading.value for column, reading in self.measured.items()}
            self._signals = NodeSignals(
                self.sampled_s, value.get("cpu_used", 0.0),
                round(value.get("memory_used", 0.0)), round(value.get("memory_current", 0.0)),
                value.get("membw_utilisation", 0.0), value.get("io_await_ms", 0.0),
                placed.resources())
        return self._signals


class NodeTable:
    def __init__(self) -> None:
        self.records: dict[str, NodeRecord] = {}
        self.cluster = Cluster(CLUSTER_NAME, ())
        self.nodes: tuple[LiveNode, ...] = ()
        self.by_name: dict[str, LiveNode] = {}
        self.log = ChangeLog()
        self.dirty = False  # some spec changed since the last rebuild
        self._columns: tuple[str, ...] = ()  # the measured columns a sample must have
        self._allocatable = _read_only(np.zeros((0, 3)))
        self._allocated = np.zeros((0, 3))
        self._ready = np.zeros(0, dtype=np.bool_)
        self._views = (_read_only(self._allocated.view()), _read_only(self._ready.view()))
        self._signals = np.zeros((len(SIGNAL_COLUMNS), 0))  # kept current column by column
        self._stale_columns: set[int] = set()  # rows whose signals changed since a hand-out
        self._signal_array: np.ndarray | None = None

    # --- Node records ------------------------------------------------------------------------

    def relist(self, records: Iterable[NodeRecord]) -> None:
        fresh = {record.name: record for record in records}
        for name in set(self.records) - set(fresh):
            self.remove(name)
        for record in fresh.values():
            self.put(record)

    def put(self, record: NodeRecord) -> None:
        old = self.records.get(record.name)
        self.records[record.name] = record
        if old is None or old.spec != record.spec:
            self.dirty = True
            return
        node = self.by_name.get(record.name)
        if node is not None:
            self._take_state(node, record)

    def _take_state(self, node: LiveNode, record: NodeRecord) -> None:
        """What a Node update changes without changing the spec: readiness, and the raw
        labels and taints `live show` prints (a taint's timeAdded is not part of the spec)."""
        node.labels, node.taints = record.labels, record.taints
        if node.ready != record.ready:
            node.ready = record.ready
            self._ready[node.row] = record.ready
            self.log.add(node.row)

    def remove(self, name: str) -> None:
        if self.records.pop(name, None) is not None:
            self.dirty = True

    def rebuild(self) -> bool:
        """A new Cluster when a spec changed since the last call (True), else nothing."""
        self.dirty = False
        good = sorted((r for r in self.records.values() if r.spec is not None),
                      key=lambda r: r.name)
        specs = tuple(r.spec for r in good if r.spec is not None)
        if specs == self.cluster.nodes:  # changed, and changed back
            for record in good:
                self._take_state(self.by_name[record.name], record)
            return False
        old = self.by_name
        self.cluster = Cluster(CLUSTER_NAME, specs)
        self.nodes = tuple(LiveNode(record, row) for row, record in enumerate(good))
        self.by_name = {node.spec.name: node for node in self.nodes}
        for node in self.nodes:
            previous = old.get(node.spec.name)
            if previous is not None:
                node.measured, node.sampled_s = previous.measured, previous.sampled_s
        self._allocatable = _read_only(np.array(
            [(s.allocatable.cpu, float(s.allocatable.memory), float(s.allocatable.gpus))
             for s in specs], dtype=np.float64).reshape(-1, 3))
        self._allocated = np.zeros((len(specs), 3))
        self._ready = np.array([node.ready for node in self.nodes], dtype=np.bool_)
        self._views = (_read_only(self._allocated.view()), _read_only(self._ready.view()))
        self._signals = signal_columns([node.signals for node in self.nodes])
        self._stale_columns.clear()
        self._signal_array = None
        self.log.restart()
        return True

    # --- allocation ----------------------------------------------------------------------

    def count(self, node_name: str, uid: str, amounts: Amounts, bound_s: float,
              sign: int) -> None:
        """Adds (sign 1) or removes (-1) a pod's requests on a node of the cluster."""
        node = self.by_name.get(node_name)
        if node is None:
            return
        node.millicpu += sign * amounts.millicpu
        node.memory += sign * amounts.memory
        node.gpus_allocated += sign * amounts.gpus
        node.pods += sign
        node._allocated = node._free = None
        self._allocated[node.row] = (node.millicpu / 1000, node.memory, node.gpus_allocated)
        if sign > 0 and bound_s > node.sampled_s:
            node.recent[uid] = (bound_s, amounts)
            self._signals_changed(node)
        elif sign < 0 and node.recent.pop(uid, None) is not None:
            self._signals_changed(node)
        self.log.add(node.row)

    # --- signals -------------------------------------------------------------------------

    def measure(self, readings: Mapping[str, Mapping[str, Reading]], columns: Sequence[str],
                gpus_free: Mapping[str, Mapping[str, int]]) -> None:
        """A new sample: each node's readings of `columns` (those a sample must have) and its
        free GPUs per root complex as the agent reported them."""
        self._columns = tuple(columns)
        for node in self.nodes:
            self._measure(node, {column: readings[column][node.spec.name]
                                 for column in columns if node.spec.name in readings[column]})
            node.gpus_reported = _per_complex(node, gpus_free.get(node.spec.name))
            node._free = None

    def _measure(self, node: LiveNode, measured: dict[str, Reading]) -> None:
        complete = len(measured) == len(self._columns) and measured
        sampled_s = min(r.sampled_s for r in measured.values()) if complete else NEVER
        if measured == node.measured and sampled_s == node.sampled_s:
            return
        node.measured, node.sampled_s = measured, sampled_s
        node.recent = {uid: entry for uid, entry in node.recent.items() if entry[0] > sampled_s}
        self._signals_changed(node)

    def _signals_changed(self, node: LiveNode) -> None:
        node._signals = None
        self._stale_columns.add(node.row)
        self._signal_array = None

    # --- arrays --------------------------------------------------------------------------

    def resource_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return self._allocatable, self._views[0]

    def ready_mask(self) -> np.ndarray:
        return self._views[1]

    def signal_arrays(self) -> np.ndarray:
        """A new read-only copy when some node's signals changed since the last one (only
        their columns are recomputed), else the same object."""
        if self._signal_array is None:
            for row in self._stale_columns:
                self._signals[:, row] = signal_row(self.nodes[row].signals)
            self._stale_columns.clear()
            self._signal_array = _read_only(self._signals.copy())
        return self._signal_array


def _per_complex(node: LiveNode, reported: Mapping[str, int] | None) -> tuple[int, ...] | None:
    """The reported free GPUs in the order of the node's root complexes; None when the names
    do not match them one for one."""
    complexes = list(node.spec.root_complexes)
    if not reported or len(reported) != len(complexes):
        return None
    if all(name.isdigit() for name in reported):  # the twin: complexes by number
        if {int(name) for name in reported} != set(complexes):
            return None
        return tuple(reported[str(complex_)] for complex_ in complexes)
    return tuple(reported[name] for name in sorted(reported))


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array
