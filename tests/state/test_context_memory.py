"""What the EncodeContext remembers between decisions (node rows, job graphs, job distance
features) changes no observation: over a simulated run, one context kept through the episode
observes what a fresh context observes at each decision, except the congestion streaks that
only a kept context can count."""

from __future__ import annotations

import itertools

import numpy as np

from dagpilot.clusters import load_cluster
from dagpilot.core.config import PhysicsParameters
from dagpilot.core.types import NodeSpec
from dagpilot.live.kube_api import Resource
from dagpilot.live.nodes import decode_node
from dagpilot.live.pods import decode_pod
from dagpilot.live.view import LiveView
from dagpilot.live.watcher import Relist
from dagpilot.sim import physics
from dagpilot.state import EncodeContext, observe
from dagpilot.state.schema import NODE
from tests.live.objects import CREATED_S, node, pod
from tests.state.sim_views import busy_default, sim_env

DECISIONS = 250
MEMORY_ONLY = [NODE.index("await_congested_samples"), NODE.index("await_sustained")]


def test_a_kept_context_observes_what_a_fresh_one_does() -> None:
    env, view, scheduler = busy_default("builtin:mix:40", 5)
    context = EncodeContext(graph_tasks=16)
    same = np.ones(NODE.dim, dtype=np.bool_)
    same[MEMORY_ONLY] = False
    running_jobs = 0
    for _ in range(DECISIONS):
        candidates = list(itertools.islice(view.pending, 16))
        kept = observe(view, candidates, context)
        fresh = observe(view, candidates, EncodeContext(graph_tasks=16))
        assert np.array_equal(kept.node_features[:, same], fresh.node_features[:, same])
        for name in ("task_features", "pair_features", "pair_job", "graph_features",
                     "graph_positions", "graph_valid", "graph_status"):
            assert np.array_equal(getattr(kept, name), getattr(fresh, name)), name
        running_jobs += int(kept.pair_features.any(axis=(1, 2)).sum())
        view, _, done, _ = env.step(scheduler.decide(view))
        if done:
            break
    assert running_jobs > 0  # candidates of jobs already running: distance features in play


def test_remembered_distance_features_cannot_be_written() -> None:
    _, view = sim_env("builtin:mix:4", "builtin:default")
    context = EncodeContext()
    pod = view.pending[0]
    job = context.job(view, pod.job)
    rows = context.job_pairs(view, job)
    assert context.job_pairs(view, job) is rows  # the same hosts: remembered
    assert not rows.flags.writeable


def _live_view(pods: int) -> LiveView:
    """A real LiveView fed by hand-written API objects (no API server): `builtin:small`'s
    nodes and `pods` pending single-pod jobs."""
    def rtt(a: NodeSpec, b: NodeSpec) -> float:
        return physics.rtt_ms(physics.distance(a, b), PhysicsParameters())

    view = LiveView(rtt, clock=lambda: CREATED_S + 100)
    view.feed(Relist(Resource.NODES, [decode_node(node(spec))
                                      for spec in load_cluster("builtin:small").nodes]))
    view.feed(Relist(Resource.PODS, [decode_pod(pod(f"p{i}")) for i in range(pods)]))
    view.feed(Relist(Resource.WORKFLOWS, []))
    view.sync()
    return view


def test_equal_finished_sets_keep_a_jobs_progress_and_graphs() -> None:
    # The live view answers a single-pod job with a new empty set at every call (a workflow
    # with a new set at every status update): equal contents must not count as progress, or
    # every decision rebuilds every candidate's graph (issue 11's serving profile).
    view = _live_view(4)
    candidates = list(view.pending)
    job = candidates[0].job
    assert view.finished_tasks(job.id) is not view.finished_tasks(job.id)
    context = EncodeContext(graph_tasks=16)
    first = observe(view, candidates, context)
    now = context.job(view, job)
    graphs = context.job_graphs(now, [0])
    again = context.job(view, job)
    assert again.progress is now.progress
    assert context.job_graphs(again, [0])[0] is graphs[0]  # remembered, not rebuilt
    fresh = observe(view, candidates, EncodeContext(graph_tasks=16))
    kept = observe(view, candidates, context)
    for name in ("task_features", "graph_features", "graph_positions", "graph_valid",
                 "graph_status"):
        assert np.array_equal(getattr(kept, name), getattr(fresh, name)), name
        assert np.array_equal(getattr(kept, name), getattr(first, name)), name


def test_the_node_memory_and_full_passes_give_the_same_node_rows() -> None:
    # Up to FULL_PASS_NODES a context computes every row at every decision (cheaper there);
    # beyond, the memory updates the changed rows: the same rows, streaks included.
    env, view, scheduler = busy_default("builtin:mix:40", 6)
    full, kept = EncodeContext(), EncodeContext(full_pass_nodes=0)
    assert len(view.nodes) <= full.full_pass_nodes
    for _ in range(DECISIONS):
        assert np.array_equal(full.node_features(view), kept.node_features(view))
        view, _, done, _ = env.step(scheduler.decide(view))
        if done:
            break
    assert kept._node_memory.row_updates > DECISIONS // 2  # the memory's own path ran
