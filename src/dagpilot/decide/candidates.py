"""Which pending pods the policy scores at a decision: at most C, each feasible somewhere.

A backlog can hold thousands of pods, so the action space is bounded: pods of one task are
interchangeable (same requests, constraints and DAG place), so each task is represented by its
oldest pending pod; the representatives are ranked two ways, by remaining critical path
(b-level, longest first: what list schedulers such as sjf-cp and heft favour) and by age
(oldest first: no pod starves however short its path), and taken alternately from the two
rankings. Pods that fit on no node are skipped (they would be dead rows), until C are found.
The feasibility mask comes from `decide`'s filters, computed once per distinct pod spec.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import PodRef
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.node_arrays import NodeArrays
from dagpilot.decide.signature import placement_key

Bools = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Candidates:
    pods: tuple[PodRef, ...]
    feasible: Bools  # (C, N): the filters' verdict for each candidate and node

    def __len__(self) -> int:
        return len(self.pods)


def select_candidates(pending: Sequence[PodRef], nodes: NodeArrays, feasibility: Feasibility,
                      limit: int, include: PodRef | None = None) -> Candidates:
    """Up to `limit` pending pods that fit somewhere, with their masks. `include` (behaviour
    cloning: the teacher's pod) is always first when it fits somewhere."""
    masks: dict[Hashable, Bools] = {}
    pods: list[PodRef] = []
    rows: list[Bools] = []
    for pod in _ranked(pending, include):
        key = placement_key(pod.task)
        mask = masks.get(key)
        if mask is None:
            mask = masks[key] = feasibility.mask(pod.task, nodes)
        if mask.any():
            pods.append(pod)
            rows.append(mask)
            if len(pods) == limit:
                break
    feasible = np.array(rows, dtype=np.bool_).reshape(len(rows), len(nodes))
    return Candidates(tuple(pods), feasible)


def _ranked(pending: Sequence[PodRef], include: PodRef | None) -> Iterator[PodRef]:
    """`include`, then one pod per task, alternately by b-level and by age, without repeats."""
    oldest: dict[tuple[str, str], PodRef] = {}
    for pod in pending:  # oldest first
        oldest.setdefault((pod.job.id, pod.task.id), pod)
    if include is not None:
        oldest[(include.job.id, include.task.id)] = include
        yield include
    by_age = list(oldest.values())
    by_b_level = sorted(by_age, key=lambda p: (-p.job.b_levels[p.task.id], p.created_s, p.uid))
    seen = {include.uid} if include is not None else set()
    for pair in zip(by_b_level, by_age, strict=True):
        for pod in pair:
            if pod.uid not in seen:
                seen.add(pod.uid)
                yield pod
