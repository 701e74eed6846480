"""The Filter protocol, and a base for filters that read only the node's spec."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Protocol

import numpy as np

from dagpilot.core.status import Code, Status
from dagpilot.core.types import NodeSpec, Task
from dagpilot.core.view import NodeState
from dagpilot.decide.node_arrays import Bools, NodeArrays


class Filter(Protocol):
    """A hard constraint: `check` for one (pod, node) pair with every reason, `mask` for all
    nodes at once. `static` filters read only the pod spec and the node specs, so their masks
    can be cached per `signature.constraint_key`."""

    @property
    def name(self) -> str: ...

    @property
    def static(self) -> bool: ...

    def check(self, task: Task, node: NodeState) -> Status: ...

    def mask(self, task: Task, nodes: NodeArrays) -> Bools: ...


class SpecFilter(ABC):
    """A static filter defined by the reasons a node spec rejects a task; the rest follows."""

    name: ClassVar[str]
    static: ClassVar[bool] = True
    code: ClassVar[Code] = Code.UNRESOLVABLE  # waiting never changes a node's spec

    @abstractmethod
    def reasons(self, task: Task, spec: NodeSpec) -> tuple[str, ...]:
        """Why the node rejects the task; empty when it passes."""

    def check(self, task: Task, node: NodeState) -> Status:
        reasons = self.reasons(task, node.spec)
        return Status(self.code, reasons, self.name) if reasons else Status.success()

    def mask(self, task: Task, nodes: NodeArrays) -> Bools:
        return np.fromiter((not self.reasons(task, spec) for spec in nodes.specs),
                           dtype=np.bool_, count=len(nodes.specs))
