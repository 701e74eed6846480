"""The loop pins one view again for each decision the model makes, so what the decoder keeps
about the view (the reasons nodes reject a pod spec, until the change log lists the node)
carries over; after a fallback decision (a policy call past its deadline may still read the
old list) it pins a new one. Placements and explanations are those of a new view per decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from dagpilot.clusters import load_cluster
from dagpilot.core.scheduler import Placement
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.live.kube_api import Resource
from dagpilot.live.nodes import decode_node
from dagpilot.live.pods import decode_pod
from dagpilot.live.watcher import Relist
from dagpilot.serve.deadline import DeadlineRunner
from dagpilot.serve.decisions import FALLBACK, MODEL, Choice, Decider
from dagpilot.serve.fallback import Fallback
from dagpilot.serve.model_reload import ModelPolicy
from dagpilot.serve.scheduler_loop import LoopConfig, SchedulerLoop
from dagpilot.serve.scheduler_view import PinnedView, SchedulerView
from dagpilot.serve.serve_metrics import SchedulerMetrics
from tests.live.objects import CREATED_S, node, pod
from tests.serve.loop_helpers import RecordingBinder

MODELS = Path(__file__).resolve().parents[2] / "models"
SPECS = load_cluster("builtin:small").nodes


class FreshViewLoop(SchedulerLoop):
    """The loop as it was: a new PinnedView for every decision."""

    def _pin(self, eligible: Sequence[PodRef]) -> PinnedView:
        return PinnedView(self.view, eligible)


def _view() -> SchedulerView:
    view = SchedulerView(lambda a, b: 0.1, clock=lambda: CREATED_S + 100)
    view.feed(Relist(Resource.NODES, [decode_node(node(spec)) for spec in SPECS]))
    sizes = ("12", "6", "20", "3", "30", "10", "14", "8", "24", "5", "16", "2")
    view.feed(Relist(Resource.PODS, [decode_pod(pod(
        f"p{i}", cpu=cpu, memory="8Gi", scheduler="dagpilot",
        created=f"2026-12-01T10:00:{i:02d}Z")) for i, cpu in enumerate(sizes)]))
    view.feed(Relist(Resource.WORKFLOWS, []))
    return view


def _run(loop_type: type[SchedulerLoop]) -> list[tuple[str, str, str, str]]:
    view = _view()
    binder = RecordingBinder()
    loop = loop_type(view, Decider(ModelPolicy(MODELS, period_s=3600.0), DeadlineRunner(10.0),
                                   Fallback()),
                     cast(Any, binder), leader=cast(Any, SimpleNamespace(is_leader=True)),
                     metrics=SchedulerMetrics(), config=LoopConfig(decisions_per_round=64))
    while loop.round():
        pass
    assert loop.outcomes["model"] == len(binder.asked) > 8
    return [(r.name, r.placement.node, r.annotation, r.message) for r in binder.asked]


def test_placements_and_explanations_equal_those_of_a_new_view_per_decision() -> None:
    reused, fresh = _run(SchedulerLoop), _run(FreshViewLoop)
    assert reused == fresh
    assert any('"rejected":{"' in annotation for _, _, annotation, _ in reused)  # explained


class RecordingDecider:
    """Model choices, then a fallback one at `fallback_at`: the views it was given."""

    def __init__(self, fallback_at: int) -> None:
        self.views: list[ClusterView] = []
        self.pending: list[tuple[int, ...]] = []
        self.fallback_at = fallback_at
        self.source = SimpleNamespace(current=lambda: None)

    def decide(self, view: ClusterView) -> Choice:
        self.views.append(view)
        self.pending.append(tuple(p.uid for p in view.pending))
        pod = view.pending[0]
        placement = Placement(pod, view.cluster.nodes[0].name, ())
        if len(self.views) - 1 == self.fallback_at:
            return Choice(placement, FALLBACK, None, "no decision within 100 ms")
        return Choice(placement, MODEL, "v1")


def test_the_same_view_follows_model_decisions_and_a_new_one_the_fallbacks() -> None:
    decider = RecordingDecider(fallback_at=2)
    loop = SchedulerLoop(_view(), cast(Any, decider), cast(Any, RecordingBinder()),
                         leader=cast(Any, SimpleNamespace(is_leader=True)),
                         metrics=SchedulerMetrics(), config=LoopConfig(decisions_per_round=5))
    assert loop.round() == 5
    first, second, third, fourth, fifth = decider.views
    assert first is second is third  # model decisions: one view, pinned again
    assert fourth is not third and fourth is fifth  # after the fallback's: a new one
    assert [len(p) for p in decider.pending] == [12, 11, 10, 9, 8]  # each its own list
    assert decider.pending[1] == decider.pending[0][1:]
