"""Which pending pods the policy scores: capped, one per task, higher priority first, then by
b-level and by age."""

from __future__ import annotations

import numpy as np
import pytest

from dagpilot.core.snapshot import ClusterSnapshot
from dagpilot.core.types import Cluster, Job
from dagpilot.core.view import PodRef
from dagpilot.decide.candidates import STALE_ENTRIES, RankingMemo, select_candidates
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.filters import filters
from dagpilot.decide.node_arrays import NodeArrays
from tests.schedulers.views import job, node, task

CLUSTER = Cluster("two", (node("small", 2), node("big", 8, unschedulable=False)))
LONG = job("long", [task("a", 1, 100), task("b", 1, 1000, parents=["a"])])
SHORT = job("short", [task(f"s{i}", 1, 1) for i in range(6)])
WIDE = job("wide", [task("w", 4, 10, instances=5)])
HUGE = job("huge", [task("h", 64, 10)])
URGENT = job("urgent", [task("u", 1, 1)], priority=100)


def pods(*specs: tuple[Job, str, int, float]) -> tuple[PodRef, ...]:
    return tuple(PodRef(uid, owner, owner.task(task_id), instance, created)
                 for uid, (owner, task_id, instance, created) in enumerate(specs))


def view(pending: tuple[PodRef, ...]) -> ClusterSnapshot:
    return ClusterSnapshot.of(CLUSTER, pending)


def choose(pending: tuple[PodRef, ...], limit: int, include: PodRef | None = None) -> list[str]:
    fake = view(pending)
    chosen = select_candidates(fake.pending, NodeArrays.from_view(fake),
                               Feasibility(filters()), limit, include)
    return [pod.name for pod in chosen.pods]


def test_the_longest_path_and_the_oldest_pods_take_turns() -> None:
    pending = pods(*[(SHORT, f"s{i}", 0, float(i)) for i in range(6)], (LONG, "a", 0, 30.0))
    # b-level ranks long/a first although it is the youngest; age ranks s0, s1, ...
    assert choose(pending, 4) == ["long/a", "short/s0", "short/s1", "short/s2"]
    assert choose(pending, 1) == ["long/a"]


def test_a_higher_priority_comes_first_in_both_rankings() -> None:
    # the youngest pod with the shortest path, but priority 100 against 0: first, even when
    # a single candidate is taken; the rest alternate as before
    pending = pods(*[(SHORT, f"s{i}", 0, float(i)) for i in range(6)], (LONG, "a", 0, 30.0),
                   (URGENT, "u", 0, 40.0))
    assert choose(pending, 1) == ["urgent/u"]
    assert choose(pending, 4) == ["urgent/u", "long/a", "short/s0", "short/s1"]
    # a priority below the others' goes last in both
    later = pods(*[(SHORT, f"s{i}", 0, float(i)) for i in range(2)],
                 (job("idle", [task("i", 1, 5000)], priority=-5), "i", 0, 0.0))
    assert choose(later, 3) == ["short/s0", "short/s1", "idle/i"]


def test_the_pods_of_one_task_are_one_candidate_the_oldest() -> None:
    pending = pods(*[(WIDE, "w", i, 10.0 + i) for i in range(5)], (SHORT, "s0", 0, 20.0))
    assert choose(pending, 16) == ["wide/w-0", "short/s0"]


def test_pods_that_fit_nowhere_are_skipped_and_masks_come_from_the_filters() -> None:
    pending = pods((HUGE, "h", 0, 0.0), (WIDE, "w", 0, 1.0), (SHORT, "s0", 0, 2.0))
    fake = view(pending)
    nodes = NodeArrays.from_view(fake)
    feasibility = Feasibility(filters())
    chosen = select_candidates(fake.pending, nodes, feasibility, 16)
    assert [pod.name for pod in chosen.pods] == ["wide/w-0", "short/s0"]
    for pod, row in zip(chosen.pods, chosen.feasible, strict=True):
        assert np.array_equal(row, feasibility.mask(pod.task, nodes))
    assert chosen.feasible.tolist() == [[False, True], [True, True]]  # 4 cores: big only


def test_an_included_pod_comes_first_and_is_not_repeated() -> None:
    pending = pods(*[(SHORT, f"s{i}", 0, float(i)) for i in range(6)], (LONG, "a", 0, 30.0))
    assert choose(pending, 3, include=pending[4]) == ["short/s4", "long/a", "short/s0"]


def test_nothing_pending_gives_no_candidates() -> None:
    fake = view(())
    chosen = select_candidates((), NodeArrays.from_view(fake), Feasibility(filters()), 16)
    assert len(chosen) == 0
    assert chosen.feasible.shape == (0, 2)


@pytest.mark.parametrize("urgent", [0, 2])
def test_a_memo_kept_between_decisions_chooses_what_a_fresh_one_does(urgent: int) -> None:
    # a backlog as serving sees it: placed pods leave, new ones arrive (some created in the
    # same second as older ones: the API's timestamps are whole seconds), a failed bind's
    # pod comes back (anywhere in the order); a task's pods in any order of creation; with
    # `urgent`, pods of a higher priority come and go among them
    rng = np.random.default_rng(7)
    specs = [(owner, name, instance, float(rng.integers(0, 5)))
             for owner, name, count in ((SHORT, "s0", 1), (SHORT, "s1", 1), (LONG, "a", 1),
                                        (URGENT, "u", urgent), (LONG, "b", 1), (WIDE, "w", 5),
                                        (SHORT, "s2", 1))
             for instance in range(count)]
    every = pods(*specs)
    fake = view(every)
    nodes, feasibility = NodeArrays.from_view(fake), Feasibility(filters())
    memo = RankingMemo()
    pending = list(every[:6])
    arrivals = list(every[6:])
    for step in range(12):
        for include in (None, pending[-1]):
            kept = select_candidates(tuple(pending), nodes, feasibility, 3, include, memo=memo)
            fresh = select_candidates(tuple(pending), nodes, feasibility, 3, include)
            assert kept.pods == fresh.pods
            assert np.array_equal(kept.feasible, fresh.feasible)
        placed = pending.pop(int(rng.integers(0, len(pending))))
        if arrivals:
            pending.append(arrivals.pop(0))
        if step % 4 == 3:  # the placed pod's bind failed: pending again
            pending.insert(int(rng.integers(0, len(pending) + 1)), placed)


def test_a_memo_forgets_the_pods_no_longer_pending() -> None:
    backlog = pods(*[(WIDE, "w", i % 5, float(i)) for i in range(2000)])
    fake = view(backlog)
    nodes, feasibility = NodeArrays.from_view(fake), Feasibility(filters())
    memo = RankingMemo()
    select_candidates(backlog, nodes, feasibility, 16, memo=memo)
    assert len(memo) == 2000
    select_candidates(backlog[:10], nodes, feasibility, 16, memo=memo)
    assert len(memo) <= 2 * 10 + STALE_ENTRIES
    # pods it forgot come back beside the ones it kept: still one task, one candidate
    mixed = backlog[1990:] + backlog[:10]
    kept = select_candidates(mixed, nodes, feasibility, 16, memo=memo)
    assert kept.pods == select_candidates(mixed, nodes, feasibility, 16).pods == (mixed[0],)
