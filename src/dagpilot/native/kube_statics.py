"""The fixed inputs of the native kube-default scheduler (csrc/kube*.c), computed with the Python
decide code so that labels, taints, affinity and GPU models have one source of truth.

Tasks with one `placement_key` (requests, limits, selector, tolerations, affinity) form a class:
the Python queue groups pods by (placement key, priority), and every filter and score reads only
the placement key. Classes with one `constraint_key` share the static masks and scores, which
are the arrays that grow with the cluster, so those are stored per constraint.

The dict (all C-contiguous numpy arrays; K constraints, C classes, N nodes, T tasks, P static
score plugins in profile order):
  nodes_to_find (1,) int32         partial node search limit (node_sampling.nodes_to_find)
  capacity_milli (N, 2) float64    ClusterStatics.capacity_milli
  capacity_positive (1,) uint8     ClusterStatics.capacity_positive
  priority (T,) int64              PodRef.priority of each task's pods
  constraint (C,) int32            each class's constraint
  need (C, 3) float64              NodeResourcesFit.needs (-inf: not asked)
  request_least (C, 2) float64     pod_request(non_zero=True): LeastAllocated's request
  request_balanced (C, 2) float64  pod_request(non_zero=False): BalancedAllocation's
  clip (C,) uint8                  LeastAllocated clips at 0 (a request counted at a default)
  tolerates_not_ready (C,) uint8   NodeReady lets the class onto NotReady nodes
  static_mask (K, N) uint8         Feasibility.static_mask
  static_raw (P, K, N) float64     each static score plugin's raw scores
  static_constant (P, K) float64   its normalised score when equal on every node, else NaN
  static_weight (P,) float64       its weight
  static_reverse (P,) uint8        its DefaultNormalizeScore is reversed
  separable_constant (K,) float64  Scoring.node_totals' constant, NaN when it gives None
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import numpy as np
import numpy.typing as npt

from dagpilot.core.types import Cluster, Job, Task
from dagpilot.core.view import PodRef
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.filters import DEFAULT_FILTERS, filters
from dagpilot.decide.filters.node_resources_fit import needs
from dagpilot.decide.node_arrays import ClusterStatics, Floats, NodeArrays
from dagpilot.decide.scores import DEFAULT_WEIGHTS, Score
from dagpilot.decide.scores.balanced_allocation import BalancedAllocation
from dagpilot.decide.scores.least_allocated import LeastAllocated
from dagpilot.decide.scores.resource_amounts import pod_request
from dagpilot.decide.scoring import Scoring
from dagpilot.decide.signature import constraint_key, placement_key
from dagpilot.schedulers.node_sampling import nodes_to_find

Statics = dict[str, np.ndarray]
DYNAMIC_FILTERS = ("NodeReady", "NodeResourcesFit")  # the ones the C side evaluates itself
ALLOCATION_SCORES = (LeastAllocated, BalancedAllocation)  # the C side's totals, weight 1 each


def kube_statics(jobs: Sequence[Job], cluster: Cluster) -> tuple[npt.NDArray[np.int32], Statics]:
    """(the class of every task, tasks numbered over all jobs in input order; the statics)."""
    nodes = _static_nodes(cluster)
    klass, firsts = _grouped([task for job in jobs for task in job.tasks], placement_key)
    # PrioritySort reads the pod's priority; every pod of a task has the same (a stand-in pod).
    priority = np.array([PodRef(0, job, task, 0, 0.0).priority
                         for job in jobs for task in job.tasks], dtype=np.int64)
    statics = _class_arrays(firsts) | _constraint_arrays(firsts, nodes)
    statics["priority"] = priority
    statics["nodes_to_find"] = np.array([nodes_to_find(len(nodes))], dtype=np.int32)
    statics["capacity_milli"] = np.ascontiguousarray(nodes.capacity_milli, dtype=np.float64)
    statics["capacity_positive"] = np.array([nodes.statics.capacity_positive], dtype=np.uint8)
    return klass, statics


def _grouped(tasks: list[Task], key: Callable[[Task], Hashable]
             ) -> tuple[npt.NDArray[np.int32], list[Task]]:
    """(the group of every task, the first task of each group): tasks with one key, one group."""
    groups: dict[Hashable, int] = {}
    firsts: list[Task] = []
    group = np.empty(len(tasks), dtype=np.int32)
    for index, task in enumerate(tasks):
        number = groups.setdefault(key(task), len(firsts))
        if number == len(firsts):
            firsts.append(task)
        group[index] = number
    return group, firsts


def _static_nodes(cluster: Cluster) -> NodeArrays:
    """The nodes as the first decision sees them (nothing bound, all Ready): what the static
    filters and scores read (the specs) is all that matters here."""
    specs = cluster.nodes
    allocatable: Floats = np.array(
        [[n.allocatable.cpu, n.allocatable.memory, n.allocatable.gpus] for n in specs],
        dtype=np.float64).reshape(len(specs), 3)
    return NodeArrays(specs, (), allocatable, np.zeros_like(allocatable),
                      ready=np.ones(len(specs), dtype=np.bool_),
                      statics=ClusterStatics.of(specs, allocatable))


def _class_arrays(firsts: list[Task]) -> Statics:
    """What each class asks for, as the dynamic filters and the allocation scores read it."""
    _check_profile()
    ready_filter = filters(("NodeReady",))[0]
    free: tuple[float, float, float] = (0.0, 0.0, 0.0)
    return {
        "need": np.array([needs(t.requests) for t in firsts], dtype=np.float64).reshape(-1, 3),
        "request_least": np.array([pod_request(t.requests, True) for t in firsts],
                                  dtype=np.float64).reshape(-1, 2),
        "request_balanced": np.array([pod_request(t.requests, False) for t in firsts],
                                     dtype=np.float64).reshape(-1, 2),
        "clip": np.array([not (t.requests.cpu and t.requests.memory) for t in firsts],
                         dtype=np.uint8),
        "tolerates_not_ready": np.array(
            [ready_filter.row_test(t)(free, False) for t in firsts], dtype=np.uint8),
    }


def _constraint_arrays(firsts: list[Task], nodes: NodeArrays) -> Statics:
    """Static masks and scores per constraint key, and each class's constraint."""
    of_class, representatives = _grouped(firsts, constraint_key)
    feasibility = Feasibility(filters(DEFAULT_FILTERS))
    scoring = Scoring.named(DEFAULT_WEIGHTS)
    static = [(score, weight) for score, weight in scoring.weighted if score.static]
    count = len(nodes)
    masks = np.array([feasibility.static_mask(t, nodes) for t in representatives],
                     dtype=np.uint8).reshape(-1, count)
    raw = np.array([[score.scores(t, nodes) for t in representatives] for score, _ in static],
                   dtype=np.float64).reshape(len(static), -1, count)
    constants = np.array([[_constant(score, row) for row in rows]
                          for (score, _), rows in zip(static, raw, strict=True)],
                         dtype=np.float64).reshape(len(static), -1)
    separable = [_separable_constant(scoring, t, nodes) for t in representatives]
    return {
        "constraint": of_class,
        "static_mask": masks,
        "static_raw": raw,
        "static_constant": constants,
        "static_weight": np.array([weight for _, weight in static], dtype=np.float64),
        "static_reverse": np.array([_reversed(score) for score, _ in static], dtype=np.uint8),
        "separable_constant": np.array(separable, dtype=np.float64),
    }


def _constant(score: Score, raw: Floats) -> float:
    """Scoring's rule: a static score equal on every node adds its normalised value to every
    total; NaN otherwise (normalised over the nodes searched)."""
    if not raw.size or not bool((raw == raw[0]).all()):
        return float("nan")
    return float(score.normalize(raw[:1])[0])


def _separable_constant(scoring: Scoring, task: Task, nodes: NodeArrays) -> float:
    totals = scoring.node_totals(task, nodes) if len(nodes) else None
    return float("nan") if totals is None else totals[1]


def _reversed(score: Score) -> bool:
    """Whether the plugin normalises with DefaultNormalizeScore reversed (the C side knows only
    DefaultNormalizeScore, forward or reversed)."""
    normalised = score.normalize(np.array([0.0, 2.0])).tolist()
    if normalised == [100.0, 0.0]:
        return True
    if normalised == [0.0, 100.0]:
        return False
    raise RuntimeError(f"the native kube-default cannot normalise {score.name}: "
                       "not DefaultNormalizeScore")


def _check_profile() -> None:
    """The C side hard-codes the dynamic filters and the allocation scores of kube-default."""
    dynamic = tuple(f.name for f in filters(DEFAULT_FILTERS) if not f.static)
    allocation = [(type(s), w) for s, w in Scoring.named(DEFAULT_WEIGHTS).weighted
                  if not s.static]
    if dynamic != DYNAMIC_FILTERS or allocation != [(kind, 1) for kind in ALLOCATION_SCORES]:
        raise RuntimeError("csrc/kube*.c is out of date with kube-default's filters or scores")
