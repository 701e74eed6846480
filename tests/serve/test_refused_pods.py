"""Pods the custom scheduler will not place (a required rule it cannot honour, a spec it cannot
read) are told why once per reason, counted as unschedulable, and never bound; the others are
scheduled as usual; a follower tells nothing; shadow mode does not decide on them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from dagpilot.clusters import load_cluster
from dagpilot.live.kube_api import Resource
from dagpilot.live.nodes import decode_node
from dagpilot.live.pods import decode_pod
from dagpilot.live.watcher import Change, Relist
from dagpilot.serve.deadline import DeadlineRunner
from dagpilot.serve.decisions import Decider
from dagpilot.serve.fallback import Fallback
from dagpilot.serve.scheduler_loop import SchedulerLoop
from dagpilot.serve.scheduler_view import SchedulerView
from dagpilot.serve.serve_metrics import SchedulerMetrics
from dagpilot.serve.shadow import ShadowLoop
from tests.live.objects import CREATED_S, node, pod
from tests.serve.loop_helpers import RecordingBinder

SPECS = load_cluster("builtin:small").nodes
SPREAD = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
           "labelSelector": {}}]


class NoModel:
    def current(self) -> None:
        return None


def _view(scheduler: str) -> SchedulerView:
    view = SchedulerView(lambda a, b: 0.1, clock=lambda: CREATED_S + 100,
                         schedulers=frozenset({scheduler}))
    view.feed(Relist(Resource.NODES, [decode_node(node(spec)) for spec in SPECS]))
    view.feed(Relist(Resource.PODS, [decode_pod(raw) for raw in (
        pod("plain", scheduler=scheduler),
        pod("spread", scheduler=scheduler, topologySpreadConstraints=SPREAD),
        pod("unreadable", scheduler=scheduler, memory="lots"))]))
    view.feed(Relist(Resource.WORKFLOWS, []))
    return view


def _decider() -> Decider:
    return Decider(cast(Any, NoModel()), DeadlineRunner(10.0), Fallback())


def _loop(leading: bool) -> tuple[SchedulerLoop, SchedulerView, RecordingBinder]:
    view = _view("dagpilot")
    binder = RecordingBinder()
    loop = SchedulerLoop(view, _decider(), cast(Any, binder), leader=cast(
        Any, SimpleNamespace(is_leader=leading)), metrics=SchedulerMetrics())
    return loop, view, binder


def test_a_refused_pod_is_told_why_once_and_never_bound() -> None:
    loop, view, binder = _loop(True)
    assert loop.round() == 1
    assert [request.name for request in binder.asked] == ["plain"]
    told = {name: message for _, name, message in binder.unschedulable}
    assert set(told) == {"spread", "unreadable"}
    assert "whenUnsatisfiable: DoNotSchedule" in told["spread"]
    assert "spec.containers[0].resources.requests.memory" in told["unreadable"]
    assert loop.outcomes["unschedulable"] == 2
    assert loop.metrics.registry.get_sample_value("dagpilot_scheduler_refused_pods") == 2
    loop.round()
    assert len(binder.unschedulable) == 2  # told once while the reason stays
    # a new version of the pod with another rule it cannot honour: told again, with that
    view.feed(Change(Resource.PODS, "MODIFIED", decode_pod(pod(
        "spread", scheduler="dagpilot", version=2,
        containers=[{"name": "main", "image": "x", "ports": [{"hostPort": 80}]}]))))
    loop.round()
    assert [(name, "host port" in message) for _, name, message in binder.unschedulable[2:]] \
        == [("spread", True)]
    assert [request.name for request in binder.asked] == ["plain"]


def test_a_follower_tells_nothing() -> None:
    loop, _, binder = _loop(False)
    assert loop.round() == 0
    assert binder.unschedulable == [] and binder.asked == []


def test_shadow_mode_decides_only_on_the_pods_dagpilot_could_place() -> None:
    shadow = ShadowLoop(_view("default-scheduler"), _decider(), SchedulerMetrics(), None)
    assert shadow.round() == 1 and shadow.decided == 1
