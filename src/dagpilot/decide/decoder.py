"""Decoder: the hard constraints around the policy's choice, and the explanation of it.

Before the network, `shortlist` gives the candidates of a decision: the view's nodes as arrays
(their statics kept between decisions), at most `limit` pending pods with the filters' mask
(`decide.candidates`), narrowed for multi-GPU pods by the root-complex rule, whose fallback
penalty becomes a logit bias (`decide.root_complex_mask`); `for_pod` gives the same for one pod,
whether or not it fits anywhere (a scheduler extender asks about one pod at a time). After it,
`placement` turns the chosen (candidate, node) and the policy's conditional probabilities over
the nodes into a Placement of a node only (the kubelet picks the pod's GPUs there, for every
scheduler alike: `sim.kubelet`), the `TOP_NODES` best-scored nodes, and why every node the
filters or the rule rejected was rejected (`statuses` as text, kept between decisions by
`RejectionMemory`; the many of a new pod spec worked out from the decision's arrays by
`RejectionTable`). Nothing here is learned and nothing needs torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dagpilot.core.scheduler import Placement
from dagpilot.core.status import Status
from dagpilot.core.types import Task
from dagpilot.core.view import ClusterView, NodeState, PodRef
from dagpilot.decide.candidates import Candidates, RankingMemo, select_candidates
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.filters import DEFAULT_FILTERS, filters
from dagpilot.decide.node_arrays import ClusterStatics, NodeArrays
from dagpilot.decide.pcie import PcieRootComplex
from dagpilot.decide.rejection_memory import RejectionMemory
from dagpilot.decide.rejection_table import RejectionTable
from dagpilot.decide.root_complex_mask import Bias, root_complex_mask

TOP_NODES = 3  # the best-scored nodes a placement names as its alternatives
# From this many rejected nodes the table's array operations cost less than node by node
# (measured at 100 nodes: statuses cross over at 3-4 nodes, texts at 6-8).
STATUS_TABLE_ROWS = 4
TEXT_TABLE_ROWS = 8


class Decoder:
    """The filters, the root-complex rule and the reasons kept for one episode or live session
    at a time (`reset` starts the next)."""

    def __init__(self, filter_names: tuple[str, ...] = DEFAULT_FILTERS) -> None:
        self._filters = filters(filter_names)
        self.reset()

    def reset(self) -> None:
        self._feasibility = Feasibility(self._filters)
        self._ranking = RankingMemo()
        self._pcie = PcieRootComplex()
        self._statics: ClusterStatics | None = None
        self._table = RejectionTable(self._filters, self._pcie)
        self._reasons = RejectionMemory(self._explain)

    def shortlist(self, view: ClusterView, limit: int, include: PodRef | None = None) -> tuple[
            Candidates, Bias | None] | None:
        """(up to `limit` candidates with their mask, the rule's logit bias); None when no
        pending pod fits anywhere. `include` forces a pod among them (behaviour cloning)."""
        nodes = self._nodes(view)
        candidates = select_candidates(view.pending, nodes, self._feasibility, limit, include,
                                       memo=self._ranking)
        if not len(candidates):
            return None
        return root_complex_mask(candidates, nodes, self._pcie)

    def for_pod(self, view: ClusterView, pod: PodRef) -> tuple[Candidates, Bias | None]:
        """`pod` alone as the candidate, with its mask (all False when it fits nowhere) and
        the rule's bias."""
        nodes = self._nodes(view)
        feasible = self._feasibility.mask(pod.task, nodes).reshape(1, len(nodes))
        return root_complex_mask(Candidates((pod,), feasible), nodes, self._pcie)

    def placement(self, view: ClusterView, candidates: Candidates, candidate: int, node: int,
                  log_conditional: npt.NDArray[np.float32], *, explain: bool) -> Placement:
        """The placement of candidate `candidate` on node `node`; `log_conditional` holds
        log P(node | candidate) for every node (-inf where infeasible). Without `explain`,
        no alternatives and no rejections."""
        pod = candidates.pods[candidate]
        spec = view.cluster.nodes[node]
        if not explain:
            return Placement(pod, spec.name, (), float(np.exp(log_conditional[node])))
        conditional = np.exp(log_conditional)
        feasible = candidates.feasible[candidate]
        top = best_first(conditional, TOP_NODES)
        return Placement(
            pod, spec.name, (), float(conditional[node]),
            alternatives=tuple((view.cluster.nodes[i].name, float(conditional[i]))
                               for i in top.tolist() if feasible[i]),
            rejected=self._reasons.rejections(view, pod.task,
                                              np.flatnonzero(~feasible).tolist()))

    def statuses(self, task: Task, node: NodeState) -> tuple[Status, ...]:
        """Why the node rejects the task: every failing filter's status, or (when the filters
        pass it) the root-complex rule's."""
        return self._feasibility.statuses(task, node) or (self._pcie.check(task, node),)

    def rejected(self, view: ClusterView, task: Task,
                 rows: Sequence[int]) -> tuple[tuple[str, tuple[Status, ...]], ...]:
        """(node name, `statuses`) of the nodes at `rows`, each of which rejects the task;
        many at once from the decision's arrays (RejectionTable.statuses)."""
        if len(rows) >= STATUS_TABLE_ROWS:
            at = np.asarray(rows, dtype=np.int64)
            specs = view.cluster.nodes
            return tuple(zip((specs[row].name for row in at.tolist()),
                             self._table.statuses(task, self._nodes(view), at), strict=True))
        nodes = view.nodes
        return tuple((nodes[row].spec.name, self.statuses(task, nodes[row])) for row in rows)

    def _nodes(self, view: ClusterView) -> NodeArrays:
        nodes = NodeArrays.from_view(view, self._statics)
        self._statics = nodes.statics
        return nodes

    def _explain(self, view: ClusterView, task: Task,
                 rows: npt.NDArray[np.int64]) -> Sequence[tuple[str, str]]:
        if len(rows) >= TEXT_TABLE_ROWS:
            return self._table.rejections(task, self._nodes(view), rows)
        nodes = view.nodes
        return [(nodes[row].spec.name, self.reasons(task, nodes[row])) for row in rows.tolist()]

    def reasons(self, task: Task, node: NodeState) -> str:
        """`statuses` as a placement's explanation gives them, worked out for one node alone
        (what `RejectionTable` gives for all of them at once)."""
        return "; ".join(str(s) for s in self.statuses(task, node))


def best_first(values: npt.NDArray[np.floating[Any]], count: int) -> npt.NDArray[np.intp]:
    """Indices of the `count` largest values, largest first, ties in index order: what a
    stable argsort of -values begins with, without sorting all of them (5,000 nodes)."""
    negated = -values
    if len(values) > count:
        kth = np.partition(negated, count - 1)[count - 1]
        contenders = np.flatnonzero(negated <= kth)  # in index order: ties stay so
        return contenders[np.argsort(negated[contenders], kind="stable")][:count]
    return np.argsort(negated, kind="stable")
