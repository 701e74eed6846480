"""NodeAffinity: the node's labels match every key of the pod's nodeSelector and, when the pod
has required node affinity, at least one of its terms (a term matches when all its
requirements do; an empty term matches nothing, as in Kubernetes)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import ClassVar

from dagpilot.core.types import NodeSpec, Task, Term
from dagpilot.decide.filters.base import SpecFilter


def term_matches(term: Term, node_labels: dict[str, str]) -> bool:
    return bool(term) and all(requirement.matches(node_labels) for requirement in term)


class NodeAffinity(SpecFilter):
    name: ClassVar[str] = "NodeAffinity"

    def key(self, task: Task) -> Hashable:
        return (task.node_selector, task.affinity)

    def reasons(self, task: Task, spec: NodeSpec) -> tuple[str, ...]:
        node_labels = dict(spec.labels)
        reasons = [f"node(s) didn't match Pod's node selector {key}={value}"
                   for key, value in task.node_selector if node_labels.get(key) != value]
        required = task.affinity.required if task.affinity else ()
        if required and not any(term_matches(term, node_labels) for term in required):
            reasons.append("node(s) didn't match Pod's node affinity")
        return tuple(reasons)
