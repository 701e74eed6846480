"""New metrics in the live view: the serving loop has the model re-encode the nodes before the
next decision (Agent.prepare, on the policy thread), once per sample, never while it does not
lead, and its placements are those of a model that is never prepared."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from dagpilot.clusters import load_cluster
from dagpilot.live.kube_api import Resource
from dagpilot.live.nodes import decode_node
from dagpilot.live.pods import decode_pod
from dagpilot.live.prometheus import MEASURED, Prometheus, Reading, SignalSample
from dagpilot.live.signal_poller import SignalPoller
from dagpilot.live.watcher import Relist
from dagpilot.serve.deadline import DeadlineRunner
from dagpilot.serve.decisions import Decider
from dagpilot.serve.fallback import Fallback
from dagpilot.serve.model_reload import ModelPolicy, Serving
from dagpilot.serve.scheduler_loop import LoopConfig, SchedulerLoop
from dagpilot.serve.scheduler_view import SchedulerView
from dagpilot.serve.serve_metrics import SchedulerMetrics
from tests.live.objects import CREATED_S, node, pod
from tests.serve.loop_helpers import RecordingBinder

MODELS = Path(__file__).resolve().parents[2] / "models"
SPECS = load_cluster("builtin:small").nodes


def _loop(is_leader: bool, *, prepare: bool = True) -> tuple[
        SchedulerLoop, SignalPoller, RecordingBinder, list[int]]:
    poller = SignalPoller(Prometheus("http://127.0.0.1:9"))  # never started: tests set it
    view = SchedulerView(lambda a, b: 0.1, poller=poller, clock=lambda: CREATED_S + 100)
    view.feed(Relist(Resource.NODES, [decode_node(node(spec)) for spec in SPECS]))
    view.feed(Relist(Resource.PODS, [decode_pod(pod(
        f"p{i}", cpu="4", memory="8Gi", scheduler="dagpilot",
        created=f"2026-12-01T10:00:0{i}Z")) for i in range(8)]))
    view.feed(Relist(Resource.WORKFLOWS, []))
    source = ModelPolicy(MODELS, period_s=3600.0)
    serving = source.current()
    assert serving is not None and serving.prepare is not None
    prepared: list[int] = []
    inner = serving.prepare

    def counting(v: Any) -> None:
        prepared.append(view.samples)
        inner(v)
    source._serving = Serving(serving.policy, serving.version, counting if prepare else None)
    binder = RecordingBinder()
    loop = SchedulerLoop(view, Decider(source, DeadlineRunner(10.0), Fallback()),
                         cast(Any, binder), leader=cast(Any, SimpleNamespace(
                             is_leader=is_leader)), metrics=SchedulerMetrics(),
                         config=LoopConfig(decisions_per_round=1))
    return loop, poller, binder, prepared


def _sample(load: float) -> SignalSample:
    """Every node at `load` (cores used, bytes, await...): a scrape that moves the features."""
    return SignalSample(CREATED_S + 10 * load, {
        column: {spec.name: Reading(load * (1 + i), CREATED_S + 10 * load)
                 for i, spec in enumerate(SPECS)} for column in MEASURED}, {}, {})


def test_each_new_sample_prepares_the_model_once_and_placements_are_unchanged() -> None:
    loop, poller, binder, prepared = _loop(True)
    twin, twin_poller, twin_binder, _ = _loop(True, prepare=False)
    for step in range(8):
        if step in (0, 3, 4):
            poller.latest = twin_poller.latest = _sample(float(step + 1))
        assert loop.round() == twin.round() == 1
    assert prepared == [1, 2, 3]  # one per new sample, before that round's decision
    assert [(r.name, r.placement.node) for r in binder.asked] == \
        [(r.name, r.placement.node) for r in twin_binder.asked]
    assert len(binder.asked) == 8 and loop.outcomes["model"] == 8
    assert binder.unschedulable == []  # every pod fits here


def test_a_follower_prepares_nothing() -> None:
    loop, poller, _binder, prepared = _loop(False)
    poller.latest = _sample(1.0)
    assert loop.round() == 0 and prepared == []
