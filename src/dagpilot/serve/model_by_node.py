"""Two model versions at once during a canary: the node decides which model placed a pod.

The rule: the cluster is split into the canary's nodes (the stage's selector) and the stable
nodes (the rest), and each model decides only among its own nodes, so every placement on a
canary node is the canary version's (or the fallback's, standing in for it) and every other one
the stable version's; `abort` is then exactly "every node to stable". Pods are split into two
cohorts by workflow (a hash of the job id, so a workflow's pods stay together and under one
model), the canary cohort taking the canary nodes' share of the cluster's allocatable CPU: the
two models see comparable pod mixes, which makes their fallback and unschedulable rates
comparable for the gate. A cohort's pods go to their own nodes first; a pod that no node of
its own set can take is placed by the other set's model among the other set's nodes (a small
canary never blocks a pod), and the journal shows it (cohort != node_set). Calls alternate
between the cohorts so neither waits on the other. With no active canary it is the plain
`Decider` over every node.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace

from dagpilot.core.types import Cluster
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.registry.canary import node_labels
from dagpilot.serve.canary_metrics import CanaryMetrics
from dagpilot.serve.canary_reload import CanaryModel, CanaryPlan
from dagpilot.serve.deadline import DeadlineRunner
from dagpilot.serve.decisions import UNSCHEDULABLE, Choice, Decider, PolicySource
from dagpilot.serve.fallback import Fallback
from dagpilot.serve.node_subset import Subset, SubsetView

STABLE, CANARY = "stable", "canary"
KEEP_COHORTS = 100_000  # job ids whose cohort is remembered; then the memory starts over


@dataclass(frozen=True)
class NodeSets:
    cluster: Cluster  # what they were cut from
    revision: int  # of the canary's state
    canary: Subset
    stable: Subset
    share: float  # the canary nodes' share of allocatable CPU


def cohort_point(job_id: str) -> float:
    """The job's place in [0, 1): the same on every replica and every restart."""
    digest = hashlib.blake2b(job_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


class NodeSetDecider(Decider):
    def __init__(self, source: PolicySource, runner: DeadlineRunner, fallback: Fallback, *,
                 canary: CanaryModel, metrics: CanaryMetrics | None = None) -> None:
        super().__init__(source, runner, fallback)
        self.canary = canary
        self.canary_decider = Decider(canary, runner, Fallback())
        self.metrics = metrics
        self._sets: NodeSets | None = None
        self._points: dict[str, float] = {}
        self._turn = 0

    def decide(self, view: ClusterView) -> Choice:
        plan = self.canary.plan()
        self._gauges(plan)
        if plan is None:
            return super().decide(view)
        sets = self._node_sets(view, plan)
        cohorts = self._cohorts(view.pending, sets.share)
        order = (CANARY, STABLE) if self._turn == 0 else (STABLE, CANARY)
        self._turn ^= 1
        subsets = {CANARY: sets.canary, STABLE: sets.stable}
        spent, last = 0.0, None
        for cohort in order:
            pods = cohorts[cohort]
            if not pods:
                continue
            for node_set in (cohort, STABLE if cohort == CANARY else CANARY):
                if not len(subsets[node_set]):
                    continue
                decide = self.canary_decider.decide if node_set == CANARY else self._stable
                choice = decide(SubsetView(view, subsets[node_set], pods))
                spent += choice.decision_s
                self._count(node_set, choice)
                if choice.placement is not None:
                    return replace(choice, cohort=cohort, node_set=node_set, decision_s=spent)
                last = choice
        if last is None:  # no pending pod at all
            return Choice(None, UNSCHEDULABLE, None)
        return replace(last, decision_s=spent)

    def prepare(self, view: ClusterView) -> None:
        """As Decider.prepare, unless a canary splits the nodes: each model then decides on
        a view of its own node set, which the whole view would not prepare."""
        if self.canary.plan() is None:
            super().prepare(view)

    def _stable(self, view: ClusterView) -> Choice:
        return super().decide(view)

    def _node_sets(self, view: ClusterView, plan: CanaryPlan) -> NodeSets:
        sets = self._sets
        if sets is not None and sets.cluster is view.cluster and sets.revision == plan.revision:
            return sets
        nodes = view.cluster.nodes
        inside = [row for row, spec in enumerate(nodes)
                  if plan.selector.matches(node_labels(spec))]
        chosen = set(inside)
        outside = [row for row in range(len(nodes)) if row not in chosen]
        total = sum(spec.allocatable.cpu for spec in nodes)
        share = sum(nodes[row].allocatable.cpu for row in inside) / total if total > 0 else 0.0
        self._sets = NodeSets(view.cluster, plan.revision, Subset(view, inside),
                              Subset(view, outside), share)
        return self._sets

    def _cohorts(self, pods: Sequence[PodRef], share: float) -> dict[str, list[PodRef]]:
        split: dict[str, list[PodRef]] = {CANARY: [], STABLE: []}
        points = self._points
        if len(points) > KEEP_COHORTS:
            points.clear()
        for pod in pods:
            point = points.get(pod.job.id)
            if point is None:
                point = points[pod.job.id] = cohort_point(pod.job.id)
            split[CANARY if point < share else STABLE].append(pod)
        return split

    def _count(self, node_set: str, choice: Choice) -> None:
        if self.metrics is not None:
            self.metrics.node_set_decisions.labels(node_set, choice.outcome).inc()

    def _gauges(self, plan: CanaryPlan | None) -> None:
        if self.metrics is not None:
            self.metrics.canary(plan.version if plan is not None else None,
                                plan.stage + 1 if plan is not None else 0)
