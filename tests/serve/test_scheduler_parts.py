"""The custom scheduler's small parts: kube-scheduler's unschedulable message, the backoff
queue, the explanation's filter counts, the deadline runner, CPU lists."""

from __future__ import annotations

import dataclasses
import os
import threading

import pytest

from dagpilot.core.cpu_list import parse_cpus
from dagpilot.core.errors import SpecError
from dagpilot.core.scheduler import Placement
from dagpilot.core.status import Status
from dagpilot.core.view import PodRef
from dagpilot.serve.cpu_pinning import pin
from dagpilot.serve.deadline import DeadlinePassed, DeadlineRunner, PolicyBusy
from dagpilot.serve.explanation import event_message, rejected_by_filter
from dagpilot.serve.unschedulable import UnschedulableQueue, unschedulable_message
from tests.sim.helpers import job, task

CPU = Status.unschedulable("NodeResourcesFit", "Insufficient cpu")
CPU_MEMORY = Status.unschedulable("NodeResourcesFit", "Insufficient cpu", "Insufficient memory")
TAINT = Status.unschedulable("TaintToleration", "node(s) had untolerated taint {gpu: yes}")


def test_the_message_counts_each_reason_over_the_nodes_in_sorted_order() -> None:
    rejected = [("a", (CPU,)), ("b", (CPU_MEMORY,)), ("c", (TAINT,)), ("d", (CPU, TAINT))]
    assert unschedulable_message(4, rejected) == (
        "0/4 nodes are available: 3 Insufficient cpu, 1 Insufficient memory, "
        "2 node(s) had untolerated taint {gpu: yes}.")
    assert unschedulable_message(0, []) == "0/0 nodes are available."


def test_a_held_pod_waits_for_a_change_and_its_backoff_which_doubles() -> None:
    queue = UnschedulableQueue(initial_s=1.0, max_s=4.0, flush_s=100.0)
    assert queue.hold(7, 0.0, "m") is True
    assert not queue.eligible(7, 50.0)  # no change yet
    queue.cluster_changed()
    assert not queue.eligible(7, 0.5) and queue.eligible(7, 1.0)
    assert queue.hold(7, 1.0, "m") is False  # same message: no new status or Event
    queue.cluster_changed()
    assert not queue.eligible(7, 2.9) and queue.eligible(7, 3.0)  # 2 s
    queue.hold(7, 3.0, "m")
    queue.hold(7, 3.0, "other")
    queue.cluster_changed()
    assert queue.next_ready_s() == 7.0  # 4 s, the cap
    assert queue.eligible(8, 0.0)  # never held
    assert queue.eligible(7, 103.0)  # flushed after flush_s without a change
    queue.keep_only({8})
    assert len(queue) == 0


def _placement() -> Placement:
    one = job("j", task("t", 30.0, cpu=1.0))
    return Placement(PodRef(0, one, one.tasks[0], 0, 0.0), "n2", score=0.6,
                     alternatives=(("n2", 0.6), ("n1", 0.3), ("n4", 0.1)),
                     rejected=(("n3", "NodeResourcesFit: Insufficient cpu"),
                               ("n5", "NodeResourcesFit: Insufficient cpu; TaintToleration: "
                                      "node(s) had untolerated taint {a: b}"),
                               ("n6", "NodeUnschedulable: node(s) were unschedulable")))


def test_the_explanation_counts_nodes_per_filter() -> None:
    assert rejected_by_filter(_placement()) == {"NodeResourcesFit": 2, "NodeUnschedulable": 1,
                                                "TaintToleration": 1}
    message = event_message("ns/p", _placement(), "model", "v1")
    assert message == ("Successfully assigned ns/p to n2 by model v1; top nodes: n2 0.600, "
                       "n1 0.300, n4 0.100; rejected: 2 by NodeResourcesFit, "
                       "1 by NodeUnschedulable, 1 by TaintToleration")
    twice = dataclasses.replace(_placement(), rejected=_placement().rejected * 2)
    assert rejected_by_filter(twice) == {"NodeResourcesFit": 4, "NodeUnschedulable": 2,
                                         "TaintToleration": 2}  # shared texts, each node counted


def test_the_deadline_runner_returns_raises_and_abandons_a_late_call() -> None:
    runner = DeadlineRunner(0.05)
    assert runner.call(lambda: 3) == 3
    with pytest.raises(ZeroDivisionError):
        runner.call(lambda: 1 / 0)
    release, entered = threading.Event(), threading.Event()

    def stalled() -> int:
        entered.set()
        release.wait(30)
        return 1
    with pytest.raises(DeadlinePassed, match="50 ms"):
        runner.call(stalled)
    assert entered.is_set() and runner.busy
    with pytest.raises(PolicyBusy):
        runner.call(lambda: 2)
    release.set()
    deadline = threading.Event()
    for _ in range(3000):  # until the late call has returned (a condition, not a sleep)
        if not runner.busy:
            break
        deadline.wait(0.01)
    assert not runner.busy and runner.call(lambda: 4) == 4
    runner.close()


def test_cpu_lists() -> None:
    assert parse_cpus("0,2-3") == frozenset({0, 2, 3})
    for bad in ("", "a", "3-1", "1-x"):
        with pytest.raises(SpecError, match="--cpus"):
            parse_cpus(bad)


def test_pinning_to_cpus_this_process_may_not_use_is_refused() -> None:
    allowed = frozenset(os.sched_getaffinity(0))
    assert pin(allowed) == allowed  # every allowed CPU: nothing changes
    with pytest.raises(SpecError, match="not all of these CPUs are available"):
        pin(frozenset({max(allowed) + 1}))
    assert frozenset(os.sched_getaffinity(0)) == allowed
