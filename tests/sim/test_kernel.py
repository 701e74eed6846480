from __future__ import annotations

import math

import pytest

from dagpilot.sim.kernel import Kernel, Order


def test_events_run_by_time_then_priority_then_scheduling_order() -> None:
    kernel = Kernel()
    seen: list[str] = []

    def note(label: str, _: int) -> None:
        seen.append(label)

    kernel.schedule(2.0, Order.SUBMIT, note, "t2-submit")
    kernel.schedule(1.0, Order.SAMPLE, note, "t1-sample")
    kernel.schedule(1.0, Order.COMPLETE, note, "t1-complete-a")
    kernel.schedule(1.0, Order.COMPLETE, note, "t1-complete-b")
    kernel.schedule(0.5, Order.SAMPLE, note, "t0.5")
    assert kernel.run_until(math.inf) == 5
    assert seen == ["t0.5", "t1-complete-a", "t1-complete-b", "t1-sample", "t2-submit"]
    assert kernel.now_s == 2.0
    assert kernel.processed == 5


def test_run_until_includes_events_scheduled_at_the_same_instant() -> None:
    kernel = Kernel()
    seen: list[tuple[float, int]] = []

    def chain(depth: int, aux: int) -> None:
        seen.append((kernel.now_s, aux))
        if depth:
            kernel.schedule(kernel.now_s, Order.START, chain, depth - 1, aux + 1)

    kernel.schedule(3.0, Order.START, chain, 2, 0)
    kernel.schedule(4.0, Order.START, chain, 0, 9)
    assert kernel.run_until(3.0) == 3
    assert seen == [(3.0, 0), (3.0, 1), (3.0, 2)]
    assert kernel.next_time() == 4.0
    assert len(kernel) == 1


def test_step_and_empty_kernel() -> None:
    kernel = Kernel()
    assert kernel.next_time() == math.inf
    assert kernel.step() is False
    box: list[int] = []
    kernel.schedule(1.0, Order.ARRIVAL, lambda arg, aux: box.append(arg + aux), 40, 2)
    assert kernel.step() is True
    assert box == [42]
    assert kernel.step() is False


def test_scheduling_in_the_past_is_refused() -> None:
    kernel = Kernel()
    kernel.schedule(5.0, Order.SAMPLE, lambda arg, aux: None)
    kernel.run_until(5.0)
    with pytest.raises(ValueError, match="in the past"):
        kernel.schedule(4.0, Order.SAMPLE, lambda arg, aux: None)


def test_run_instant_processes_one_time_only() -> None:
    kernel = Kernel()
    seen: list[str] = []

    def note(label: str, _: int) -> None:
        seen.append(label)
        if label == "a":
            kernel.schedule(kernel.now_s, Order.SAMPLE, note, "a-echo")

    kernel.schedule(2.0, Order.COMPLETE, note, "a")
    kernel.schedule(2.0, Order.START, note, "b")
    kernel.schedule(3.0, Order.COMPLETE, note, "c")
    assert kernel.run_instant() == 2.0
    assert seen == ["a", "b", "a-echo"]
    assert kernel.run_instant() == 3.0
    assert kernel.run_instant() == math.inf
    assert kernel.processed == 4
