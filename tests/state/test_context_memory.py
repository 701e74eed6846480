"""What the EncodeContext remembers between decisions (node rows, job graphs, job distance
features) changes no observation: over a simulated run, one context kept through the episode
observes what a fresh context observes at each decision, except the congestion streaks that
only a kept context can count."""

from __future__ import annotations

import itertools

import numpy as np

from dagpilot.state import EncodeContext, observe
from dagpilot.state.schema import NODE
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
