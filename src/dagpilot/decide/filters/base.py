"""The Filter protocol, and a base for filters that read only the node's spec."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable
from typing import ClassVar, Protocol

import numpy as np

from dagpilot.core.status import Code, Status
from dagpilot.core.types import NodeSpec, Task
from dagpilot.core.view import NodeState
from dagpilot.decide.node_arrays import Bools, NodeArrays
from dagpilot.decide.node_log import Row
from dagpilot.decide.signature import placement_key

RowTest = Callable[[Row, bool], bool]


def passes(free: Row, ready: bool) -> bool:
    """The row test of a filter that free resources and readiness do not affect."""
    return True


class Filter(Protocol):
    """A hard constraint: `check` for one (pod, node) pair with every reason, `mask` for all
    nodes at once, `row_test` for one node from plain numbers (what `mask` gives that node, at a
    fraction of a mask's cost when only a few nodes changed). `static` filters read only the pod
    spec and the node specs, so their masks can be cached per `signature.constraint_key`."""

    @property
    def name(self) -> str: ...

    @property
    def static(self) -> bool: ...

    def check(self, task: Task, node: NodeState) -> Status: ...

    def mask(self, task: Task, nodes: NodeArrays) -> Bools: ...

    def row_test(self, task: Task) -> RowTest:
        """For a node the static filters let through: whether it passes, given its free (cpu,
        memory, GPUs) and readiness."""
        ...


class SpecFilter(ABC):
    """A static filter defined by the reasons a node spec rejects a task; the rest follows."""

    name: ClassVar[str]
    static: ClassVar[bool] = True
    code: ClassVar[Code] = Code.UNRESOLVABLE  # waiting never changes a node's spec

    @abstractmethod
    def reasons(self, task: Task, spec: NodeSpec) -> tuple[str, ...]:
        """Why the node rejects the task; empty when it passes."""

    def key(self, task: Task) -> Hashable:
        """The fields of the pod that `reasons` reads: two tasks of one key get the same
        verdict from every node (explanations keep them per key). All a filter may read,
        unless the filter says less."""
        return placement_key(task)

    def check(self, task: Task, node: NodeState) -> Status:
        reasons = self.reasons(task, node.spec)
        return Status(self.code, reasons, self.name) if reasons else Status.success()

    def row_test(self, task: Task) -> RowTest:
        return passes  # settled by the static mask

    def mask(self, task: Task, nodes: NodeArrays) -> Bools:
        return np.fromiter((not self.reasons(task, spec) for spec in nodes.specs),
                           dtype=np.bool_, count=len(nodes.specs))
