"""Which pending pods the policy scores at a decision: at most C, each feasible somewhere.

A backlog can hold thousands of pods, so the action space is bounded: pods of one task are
interchangeable (same requests, constraints and DAG place), so each task is represented by its
oldest pending pod; the representatives are ranked two ways, by remaining critical path
(b-level, longest first: what list schedulers such as sjf-cp and heft favour) and by age
(oldest first: no pod starves however short its path), and taken alternately from the two
rankings. Both rankings put higher priorities first (kube-scheduler's PrioritySort), so a
backlog of low-priority pods never keeps a high-priority one out of the C; with one priority
throughout (every simulated workload without Argo priorities) they are the two orders above.
Pods that fit on no node are skipped (they would be dead rows), until C are found.
The feasibility mask comes from `decide`'s filters, computed once per distinct pod spec.

The walk over the backlog is the only part that grows with it, so each pod's ranking entry
(its task and its place in the b-level order) is kept between decisions (`RankingMemo`), and
the per-pod steps left are C loops (map, dict, sort).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from operator import attrgetter

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import PodRef
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.node_arrays import NodeArrays
from dagpilot.decide.signature import placement_key

Bools = npt.NDArray[np.bool_]
STALE_ENTRIES = 256  # entries of pods gone a RankingMemo may hold beyond twice the backlog


@dataclass(frozen=True)
class Candidates:
    pods: tuple[PodRef, ...]
    feasible: Bools  # (C, N): the filters' verdict for each candidate and node

    def __len__(self) -> int:
        return len(self.pods)


@dataclass(frozen=True, slots=True)
class _Entry:
    pod: PodRef
    task: tuple[str, str]  # (job id, task id): the pods of one task are interchangeable
    group: int  # the task's number in the memo (an int hashes faster than the pair)
    order: tuple[int, float, float, int]  # highest priority, longest b-level, oldest, uid
    rank: int  # the negated priority alone: the age order's key when priorities differ


class RankingMemo:
    """Each pending pod's ranking entry, kept from one decision to the next: a backlog's pods
    stay pending for many decisions, and building their entries was most of the walk over it
    (docs/BENCHMARKS.md, "A deep backlog"). Keyed by the PodRef's id, the object held by its
    entry so that the id is not reused while the entry lives; the entries of pods no longer
    pending go when the memo outgrows the backlog."""

    __slots__ = ("_entries", "_groups", "_numbers")

    def __init__(self) -> None:
        self._entries: dict[int, _Entry] = {}
        self._groups: dict[tuple[str, str], int] = {}
        self._numbers = itertools.count()

    def __len__(self) -> int:
        """The entries kept (the pending pods' and at most a bounded number of others)."""
        return len(self._entries)

    def ranked(self, pending: Sequence[PodRef], include: PodRef | None) -> Iterator[PodRef]:
        """`include`, then one pod per task (its oldest pending), alternately by b-level and
        by age, without repeats."""
        entries = self._entries_of(pending)
        groups = list(map(attrgetter("group"), entries))
        oldest: dict[int, _Entry] = dict.fromkeys(groups)  # type: ignore[assignment]
        oldest.update(zip(reversed(groups), reversed(entries), strict=True))  # first wins
        if include is not None:
            chosen = self._entry(include)
            oldest[chosen.group] = chosen
            yield include
        by_age = list(oldest.values())
        by_b_level = sorted(by_age, key=attrgetter("order"))  # priority is its first key
        if by_b_level and by_b_level[0].rank != by_b_level[-1].rank:  # priorities differ
            by_age.sort(key=attrgetter("rank"))  # stable: oldest first within each priority
        seen = {include.uid} if include is not None else set()
        for pair in zip(by_b_level, by_age, strict=True):
            for entry in pair:
                pod = entry.pod
                if pod.uid not in seen:
                    seen.add(pod.uid)
                    yield pod

    def _entries_of(self, pending: Sequence[PodRef]) -> list[_Entry]:
        ids = list(map(id, pending))
        found: list[_Entry | None] = list(map(self._entries.get, ids))
        for index in [index for index, entry in enumerate(found) if entry is None]:
            found[index] = self._entries[ids[index]] = self._entry(pending[index])
        entries: list[_Entry] = found  # type: ignore[assignment]  # every None filled
        if len(self._entries) > 2 * len(ids) + STALE_ENTRIES:
            self._entries = dict(zip(ids, entries, strict=True))
            self._groups = {entry.task: entry.group for entry in entries}
        return entries

    def _entry(self, pod: PodRef) -> _Entry:
        task = (pod.job.id, pod.task.id)
        group = self._groups.get(task)
        if group is None:
            group = self._groups[task] = next(self._numbers)
        priority = pod.priority
        return _Entry(pod, task, group,
                      (-priority, -pod.job.b_levels[pod.task.id], pod.created_s, pod.uid),
                      -priority)


def select_candidates(pending: Sequence[PodRef], nodes: NodeArrays, feasibility: Feasibility,
                      limit: int, include: PodRef | None = None, *,
                      memo: RankingMemo | None = None) -> Candidates:
    """Up to `limit` pending pods that fit somewhere, with their masks. `include` (behaviour
    cloning: the teacher's pod) is always first when it fits somewhere. `memo`: the ranking
    entries kept from the last decision (a fresh one when None)."""
    masks: dict[Hashable, Bools] = {}
    pods: list[PodRef] = []
    rows: list[Bools] = []
    for pod in (memo if memo is not None else RankingMemo()).ranked(pending, include):
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
