"""RejectionMemory: reasons worked out once per pod spec and node, until the view's change log
lists the node (or the view cannot tell)."""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from dagpilot.core.snapshot import ChangingView, ClusterSnapshot
from dagpilot.core.types import Resources, Task
from dagpilot.core.view import ClusterView
from dagpilot.decide.rejection_memory import RejectionMemory
from tests.sim.helpers import task
from tests.test_agent import filtered_cluster

Ints = npt.NDArray[np.int64]


def test_reasons_are_worked_out_once_per_pod_spec_and_node_until_the_node_changes() -> None:
    where = filtered_cluster()
    view = ChangingView(ClusterSnapshot.of(where, logged=True))
    asked: list[tuple[str, str]] = []

    def explain(view_: ClusterView, task_: Task, rows_: Ints) -> list[tuple[str, str]]:
        states = [view_.nodes[row] for row in rows_.tolist()]
        asked.extend((task_.id, state.spec.name) for state in states)
        return [(state.spec.name, f"{state.allocated.cpu:g} cores bound") for state in states]

    memory = RejectionMemory(explain)
    small, other = task("small", 10.0, cpu=1.0), task("other", 10.0, cpu=2.0)
    rows = [0, 1, 5]
    first = memory.rejections(view, small, rows)
    assert memory.rejections(view, small, rows) == first
    assert len(asked) == 3
    memory.rejections(view, other, rows)  # another pod spec
    assert len(asked) == 6
    second = where.nodes[1].name
    view.change(lambda now: now.with_node(second, allocated=Resources(0.5, 0)))
    again = memory.rejections(view, small, rows)
    assert asked[6:] == [("small", second)]
    assert again[1] == (second, "0.5 cores bound") and again[0] == first[0]
    view.change(lambda now: dataclasses.replace(now, log=None))  # a view that cannot tell
    memory.rejections(view, small, rows)
    assert len(asked) == 10


def test_another_view_object_starts_afresh() -> None:
    where = filtered_cluster()
    asked: list[str] = []

    def explain(view_: ClusterView, task_: Task, rows_: Ints) -> list[tuple[str, str]]:
        states = [view_.nodes[row] for row in rows_.tolist()]
        asked.extend(state.spec.name for state in states)
        return [(state.spec.name, "no") for state in states]

    memory = RejectionMemory(explain)
    small = task("small", 10.0, cpu=1.0)
    one, two = (ChangingView(ClusterSnapshot.of(where, logged=True)) for _ in range(2))
    memory.rejections(one, small, [0])
    memory.rejections(two, small, [0])  # equal tokens, but another view: they mean nothing
    assert asked == [where.nodes[0].name] * 2
