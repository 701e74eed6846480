"""A placement whose pod is no longer pending when it comes to be bound (another scheduler
bound it, it was deleted, its node went) is dropped and counted, never a crash of the loop."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from dagpilot.core.scheduler import Placement
from dagpilot.serve.decisions import Choice
from dagpilot.serve.scheduler_loop import SchedulerLoop
from tests.serve.test_scheduler_parts import _placement


class GoneView:
    cluster = None
    pod_listener = None

    def pod_key(self, pod: Any) -> str:
        return "ns/p"

    def api_uid(self, pod: Any) -> str:
        return "uid-p"

    def assume(self, pod: Any, node: str) -> None:
        raise ValueError(f"{pod.name} is not pending in this view")


class NoBinds:
    def bind(self, request: Any) -> None:
        raise AssertionError("a pod that is not pending must not be bound")


def test_a_pod_gone_before_its_bind_is_dropped_and_counted() -> None:
    loop = SchedulerLoop(cast(Any, GoneView()), cast(Any, None), cast(Any, NoBinds()),
                         leader=cast(Any, SimpleNamespace(is_leader=True)),
                         metrics=cast(Any, None))
    placement: Placement = _placement()
    choice = cast(Choice, SimpleNamespace(placement=placement, outcome="model", reason="",
                                          version="v"))
    loop._bind(choice)
    assert loop.dropped == 1
