"""Ranking: where one pod may go and how the policy scores each such node.

What a kube-scheduler extender answers for a pod: the nodes that pass (its filter call), why
each other node does not (the Status of every failing filter, or of the PCIe root-complex rule),
and a score for each node that passes (its prioritize call). `Agent.rank` makes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from dagpilot.core.status import Status
from dagpilot.core.view import PodRef


@dataclass(frozen=True, slots=True)
class Ranking:
    pod: PodRef
    feasible: tuple[str, ...]  # node names, in node order
    scores: tuple[float, ...]  # the policy's P(node | pod) for each feasible node; sum 1
    rejected: tuple[tuple[str, tuple[Status, ...]], ...]  # every other node, in node order

    def score(self, node: str) -> float | None:
        """The node's score; None when the node is not feasible for the pod."""
        for name, score in zip(self.feasible, self.scores, strict=True):
            if name == node:
                return score
        return None
