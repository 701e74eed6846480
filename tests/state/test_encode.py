"""The entry point on real simulated views: shapes, types, candidates and job rows."""

from __future__ import annotations

import numpy as np

from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Job
from dagpilot.core.view import PodRef
from dagpilot.state import EncodeContext, Normaliser, encode, observe
from dagpilot.state.job_distance import distance_features
from dagpilot.state.job_graph import EMPTY
from dagpilot.state.schema import GRAPH, NODE, PAIR, POSITION, TASK
from dagpilot.workloads import load
from tests.state.sim_views import busy_default, sim_env


def test_an_observation_of_several_jobs() -> None:
    workload = load("builtin:mix:4")
    _, view = sim_env(workload, "builtin:default")
    jobs = [one.id for one in workload]
    # Pods of each job's first task, as if every job had one pending (twice, interleaved).
    candidates = [PodRef(uid, one, one.tasks[0], 0, 0.0) for uid, one in enumerate(workload)] * 2
    observation = observe(view, candidates, EncodeContext(graph_tasks=8))
    c, n = len(candidates), len(view.nodes)
    assert observation.candidates == tuple(candidates)
    # none of the jobs runs anywhere yet: they are as far from every node, one row for all
    assert observation.pair_features.shape == (1, n, PAIR.dim)
    assert not observation.pair_features.any() and not observation.pair_job.any()
    assert len(jobs) == 4
    assert observation.graph_features.shape == (c, 8, GRAPH.dim)
    assert observation.graph_positions.shape == (c, 8, POSITION.dim)
    assert observation.graph_valid.shape == observation.graph_status.shape == (c, 8)
    assert ((observation.graph_status == EMPTY) == ~observation.graph_valid).all()
    assert observation.graph_valid[:, 0].all()  # the candidate itself
    for array in observation.arrays().values():
        assert array.dtype == np.float32 and np.isfinite(array).all()
    assert not observation.normalised


def test_each_candidate_reads_the_distances_of_its_own_jobs_hosts_one_row_per_host_set(
        ) -> None:
    env, view, scheduler = busy_default("builtin:mix:30", seed=1)
    context, checked, shared = EncodeContext(), 0, 0
    seen: dict[str, Job] = {}  # every job that had a pod pending: running ones, finished ones
    for step in range(1200):
        seen.update((pod.job.id, pod.job) for pod in view.pending)
        if step % 20 == 0 and seen:
            candidates = [PodRef(uid, job, job.tasks[-1], 0, 0.0)
                          for uid, job in enumerate(list(seen.values())[-16:])]
            observation = observe(view, candidates, context)
            hosts = [context.job(view, pod.job).hosts for pod in candidates]
            topology = context.nodes(view).network
            for row, pod_hosts in zip(observation.pair_job, hosts, strict=True):
                assert np.array_equal(observation.pair_features[row],
                                      distance_features(topology, pod_hosts))
            host_sets = {pod_hosts.tobytes() for pod_hosts in hosts}
            assert len(observation.pair_features) == len(host_sets)
            checked += len(host_sets) > 1
            shared += len(host_sets) < len(candidates)
        view, _, done, _ = env.step(scheduler.decide(view))
        if done:
            break
    assert checked > 10 and shared > 10  # several host sets, and jobs sharing one


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
