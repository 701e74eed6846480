"""The pool's dispatch order: slow (learned) schedulers' runs first, the rest in order."""

from __future__ import annotations

from dagpilot.bench.bounds import LowerBound
from dagpilot.bench.pool import slowest_first
from dagpilot.bench.runner import RunTask


def task(index: int, scheduler: str) -> RunTask:
    return RunTask(index, index // 3, scheduler, (), LowerBound(0.0, 0.0))


def test_dagpilot_runs_are_handed_out_first_and_the_others_keep_their_order() -> None:
    names = ["kube-default", "tetris", "dagpilot"] * 2
    tasks = [task(index, name) for index, name in enumerate(names)]
    ordered = slowest_first(tasks)
    assert [t.index for t in ordered] == [2, 5, 0, 1, 3, 4]
    assert sorted(t.index for t in ordered) == list(range(6))  # nothing lost or repeated
