"""RejectionTable: why each rejected node rejects a pod, from the decision's arrays.

An explained placement names, for every node the filters or the root-complex rule rejected,
the text of every failing filter's status (`Decoder.reasons`). Worked out node by node that is
some microseconds a node, milliseconds at 1,000 nodes whenever a pod spec is new. Here each
filter gives one small integer per rejected node, an index into the few texts it can give:

- NodeResourcesFit: which of cpu, memory and GPUs are short, from the free array (3 bits);
- NodeReady: the readiness mask, unless the pod tolerates the not-ready taint;
- a spec filter (`SpecFilter`): its verdict per node depends only on the node's spec and the
  pod fields it reads (`SpecFilter.key`), so it is worked out once per key and cluster;
- any other filter: its `check`, node by node.

Rows with equal codes share one text, joined once; rows that no filter rejects are the
root-complex rule's and get its `check`. The text is what `Decoder.reasons` gives, bit for bit
(tests/decide/test_rejection_table.py compares them over simulated runs).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from dagpilot.core.status import Code, Status
from dagpilot.core.types import NodeSpec, Task
from dagpilot.decide.filters import Filter, SpecFilter
from dagpilot.decide.filters.node_ready import NOT_READY, NodeReady, tolerates_not_ready
from dagpilot.decide.filters.node_resources_fit import RESOURCE_NAMES, NodeResourcesFit, needs
from dagpilot.decide.node_arrays import NodeArrays
from dagpilot.decide.pcie import PcieRootComplex

Ints = npt.NDArray[np.int64]
Codes = tuple[Ints, list[str]]  # per row an index into the texts; text 0 is "" (passes)

_BITS = np.array([1, 2, 4], dtype=np.int64)
_RESOURCE_TEXTS = [""] + [
    f"{NodeResourcesFit.name}: " + "; ".join(f"Insufficient {RESOURCE_NAMES[i]}"
                                              for i in range(3) if code & (1 << i))
    for code in range(1, 8)]
_READY_TEXTS = ["", str(NOT_READY)]


class RejectionTable:
    """The texts for one cluster's nodes (`rejections`); the spec filters' codes are kept
    until the node specs change."""

    __slots__ = ("_filters", "_names", "_pcie", "_spec_codes", "_spec_statuses", "_specs")

    def __init__(self, filters: Sequence[Filter], pcie: PcieRootComplex) -> None:
        self._filters = tuple(filters)
        self._pcie = pcie
        self._specs: tuple[NodeSpec, ...] = ()
        self._names = np.empty(0, dtype=object)
        self._spec_codes: dict[tuple[str, Hashable], Codes] = {}
        self._spec_statuses: dict[tuple[str, Hashable], list[Status | None]] = {}

    def rejections(self, task: Task, nodes: NodeArrays,
                   rows: Ints) -> tuple[tuple[str, str], ...]:
        """(node name, reasons) for the nodes at `rows` (ascending), each of which rejects
        the task."""
        self._follow(nodes)
        if not len(rows):
            return ()
        columns = [self._codes(one, task, nodes, rows) for one in self._filters]
        columns = [(codes, texts) for codes, texts in columns if len(texts) > 1]
        combinations: list[tuple[int, ...]] = [()]
        if not columns:
            keys = np.zeros(len(rows), dtype=np.int64)
        else:
            keys, combinations = _combined(columns)
        texts = np.empty(len(combinations), dtype=object)
        passing = np.zeros(len(combinations), dtype=np.bool_)  # no filter rejects: the rule
        for at, combination in enumerate(combinations):
            parts = [columns[f][1][code] for f, code in enumerate(combination) if code]
            texts[at], passing[at] = "; ".join(parts), not parts
        reasons = texts[keys]
        for at in np.flatnonzero(passing[keys]).tolist():  # the rule's, node by node
            reasons[at] = str(self._pcie.check(task, nodes.states[int(rows[at])]))
        return tuple(zip(self._names[rows].tolist(), reasons.tolist(), strict=True))

    def statuses(self, task: Task, nodes: NodeArrays,
                 rows: Ints) -> tuple[tuple[Status, ...], ...]:
        """For each node at `rows` (each of which rejects the task), the statuses
        `Decoder.statuses` gives node by node (what an extender's filter answers with):
        every failing filter's, in the filters' order, else the root-complex rule's."""
        self._follow(nodes)
        columns = [self._status_column(one, task, nodes, rows) for one in self._filters]
        columns = [column for column in columns if any(status is not None for status in column)]
        failing = [tuple(status for status in statuses if status is not None)
                   for statuses in zip(*columns, strict=True)] if columns \
            else [()] * len(rows)
        return tuple(found or (self._pcie.check(task, nodes.states[row]),)
                     for found, row in zip(failing, rows.tolist(), strict=True))

    def _follow(self, nodes: NodeArrays) -> None:
        if nodes.specs is not self._specs:
            self._specs, self._spec_codes, self._spec_statuses = nodes.specs, {}, {}
            self._names = np.array([spec.name for spec in nodes.specs], dtype=object)

    def _status_column(self, one: Filter, task: Task, nodes: NodeArrays,
                       rows: Ints) -> list[Status | None]:
        """One filter's failing status per row (None where it passes)."""
        if isinstance(one, NodeResourcesFit):
            need = needs(task.requests)
            short = (nodes.free[rows] < need).astype(np.int64) @ _BITS
            never: list[bool] = np.any(nodes.allocatable[rows] < need, axis=1).tolist()
            return [_resource_status(code, out) if code else None
                    for code, out in zip(short.tolist(), never, strict=True)]
        if isinstance(one, NodeReady):
            if task.tolerations and tolerates_not_ready(task):
                return [None] * len(rows)
            return [None if ready else NOT_READY for ready in nodes.ready[rows].tolist()]
        if isinstance(one, SpecFilter):
            known = self._of_spec_statuses(one, task, nodes)
            return [known[row] for row in rows.tolist()]
        return [None if (status := one.check(task, nodes.states[row])).ok else status
                for row in rows.tolist()]

    def _codes(self, one: Filter, task: Task, nodes: NodeArrays, rows: Ints) -> Codes:
        if isinstance(one, NodeResourcesFit):
            short = nodes.free[rows] < needs(task.requests)
            return short.astype(np.int64) @ _BITS, _RESOURCE_TEXTS
        if isinstance(one, NodeReady):
            if task.tolerations and tolerates_not_ready(task):
                return np.zeros(len(rows), dtype=np.int64), _READY_TEXTS[:1]
            return (~nodes.ready[rows]).astype(np.int64), _READY_TEXTS
        if isinstance(one, SpecFilter):
            codes, texts = self._of_specs(one, task, nodes)
            return codes[rows], texts
        return _indexed([str(one.check(task, nodes.states[row])) for row in rows.tolist()])

    def _of_specs(self, one: SpecFilter, task: Task, nodes: NodeArrays) -> Codes:
        """A spec filter's codes for every node, once per the fields of the pod it reads
        (its texts those of `_of_spec_statuses`: the filter is checked once for both)."""
        key = (one.name, one.key(task))
        known = self._spec_codes.get(key)
        if known is None:
            known = self._spec_codes[key] = _indexed(
                ["" if status is None else str(status)
                 for status in self._of_spec_statuses(one, task, nodes)])
        return known

    def _of_spec_statuses(self, one: SpecFilter, task: Task,
                          nodes: NodeArrays) -> list[Status | None]:
        """A spec filter's failing status for every node (None where it passes), once per the
        fields of the pod it reads."""
        key = (one.name, one.key(task))
        known = self._spec_statuses.get(key)
        if known is None:
            known = self._spec_statuses[key] = [
                None if (status := one.check(task, state)).ok else status
                for state in nodes.states]
        return known


@lru_cache(maxsize=16)
def _resource_status(short: int, never: bool) -> Status:
    """NodeResourcesFit's status for the short resources' bits: unresolvable when the node
    has less than the pod asks for at all (NodeResourcesFit.check)."""
    reasons = tuple(f"Insufficient {RESOURCE_NAMES[i]}" for i in range(3) if short & (1 << i))
    return Status(Code.UNRESOLVABLE if never else Code.UNSCHEDULABLE, reasons,
                  NodeResourcesFit.name)


def _indexed(texts: list[str]) -> Codes:
    """Each text as an index into the distinct ones, "" first."""
    index = {"": 0}
    codes = np.fromiter((index.setdefault(text, len(index)) for text in texts),
                        dtype=np.int64, count=len(texts))
    return codes, list(index)


def _combined(columns: list[Codes]) -> tuple[Ints, list[tuple[int, ...]]]:
    """Per row the index of its combination of codes, and the distinct combinations."""
    stacked = np.stack([codes for codes, _ in columns])  # (filters, rows)
    sizes = [len(texts) for _, texts in columns]
    if np.prod(sizes, dtype=np.float64) < 2.0**62:  # one integer per combination
        radix = np.cumprod([1, *sizes[:-1]], dtype=np.int64)
        unique, first, keys = np.unique(radix @ stacked, return_index=True,
                                        return_inverse=True)
        del unique
    else:
        _, first, keys = np.unique(stacked.T, axis=0, return_index=True, return_inverse=True)
    combinations = [tuple(column) for column in stacked[:, first].T.tolist()]
    return keys.reshape(-1), combinations
