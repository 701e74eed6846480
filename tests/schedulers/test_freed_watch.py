"""FreedWatch: freed resources or a node back to Ready, nothing else."""

from __future__ import annotations

from dagpilot.core.snapshot import NodeSnapshot
from dagpilot.core.types import Resources
from dagpilot.decide.node_arrays import NodeArrays
from tests.schedulers.views import node


def arrays(cpu_a: float, cpu_b: float, ready_b: bool = True) -> NodeArrays:
    return NodeArrays.from_states([NodeSnapshot(node("a", 4), Resources(cpu_a, 0)),
                                   NodeSnapshot(node("b", 4), Resources(cpu_b, 0), ready=ready_b)])


def test_freed_only_when_some_node_gains_room() -> None:
    from dagpilot.schedulers.freed_watch import FreedWatch
    watch = FreedWatch()
    assert watch.saw_freed(arrays(1, 1))  # first look: everything is new
    assert not watch.saw_freed(arrays(2, 1))  # a placement
    assert watch.saw_freed(arrays(2, 0))  # b freed a core
    assert not watch.saw_freed(arrays(2, 0, ready_b=False))
    assert watch.saw_freed(arrays(2, 0, ready_b=True))  # b is back
