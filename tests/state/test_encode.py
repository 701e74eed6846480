"""The entry point on real simulated views: shapes, types, candidates and job rows."""

from __future__ import annotations

import numpy as np

from dagpilot.core.scheduler import Placement
from dagpilot.core.view import PodRef
from dagpilot.state import EncodeContext, Normaliser, encode, observe
from dagpilot.state.job_graph import EMPTY
from dagpilot.state.schema import GRAPH, NODE, PAIR, POSITION, TASK
from dagpilot.workloads import load
from tests.state.sim_views import sim_env


def test_an_observation_of_several_jobs() -> None:
    workload = load("builtin:mix:4")
    _, view = sim_env(workload, "builtin:default")
    jobs = [one.id for one in workload]
    # Pods of each job's first task, as if every job had one pending (twice, interleaved).
    candidates = [PodRef(uid, one, one.tasks[0], 0, 0.0) for uid, one in enumerate(workload)] * 2
    observation = observe(view, candidates, EncodeContext(graph_tasks=8))
    c, n = len(candidates), len(view.nodes)
    assert observation.candidates == tuple(candidates)
    assert observation.pair_features.shape == (len(jobs), n, PAIR.dim)
    assert [jobs[row] for row in observation.pair_job] == [p.job.id for p in candidates]
    assert observation.graph_features.shape == (c, 8, GRAPH.dim)
    assert observation.graph_positions.shape == (c, 8, POSITION.dim)
    assert observation.graph_valid.shape == observation.graph_status.shape == (c, 8)
    assert ((observation.graph_status == EMPTY) == ~observation.graph_valid).all()
    assert observation.graph_valid[:, 0].all()  # the candidate itself
    for array in observation.arrays().values():
        assert array.dtype == np.float32 and np.isfinite(array).all()
    assert not observation.normalised


def test_no_candidates_still_describes_the_nodes() -> None:
    _, view = sim_env()
    observation = observe(view, [])
    assert observation.node_features.shape == (len(view.nodes), NODE.dim)
    assert observation.task_features.shape == (0, TASK.dim)
    assert observation.pair_features.shape == (0, len(view.nodes), PAIR.dim)
    assert observation.graph_features.shape == (0, 32, GRAPH.dim)
    assert observation.graph_valid.shape == (0, 32)


def test_encode_is_observe_then_normalise() -> None:
    _, view = sim_env()
    candidates = list(view.pending)[:3]
    normaliser = Normaliser.fresh().update(observe(view, candidates))
    direct = encode(view, candidates, normaliser)
    by_hand = normaliser.normalise(observe(view, candidates))
    assert direct.normalised
    for name, array in direct.arrays().items():
        assert np.array_equal(array, by_hand.arrays()[name])


def test_one_context_through_an_episode_matches_a_fresh_one_at_each_step() -> None:
    env, view = sim_env()
    context = EncodeContext()
    for _ in range(6):
        candidates = list(view.pending)[:2]
        kept, fresh = observe(view, candidates, context), observe(view, candidates)
        # The kept context differs only in the congestion streaks (a fresh one sees one sample).
        streak = NODE.index("await_congested_samples")
        same = np.ones(NODE.dim, dtype=np.bool_)
        same[[streak, NODE.index("await_sustained")]] = False
        assert np.array_equal(kept.node_features[:, same], fresh.node_features[:, same])
        assert np.array_equal(kept.task_features, fresh.task_features)
        assert np.array_equal(kept.graph_features, fresh.graph_features)
        pod = view.pending[0]
        view, _, done, _ = env.step(Placement(pod, "node-0004"))
        if done:
            break
