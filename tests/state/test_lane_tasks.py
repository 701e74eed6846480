"""Task rows of several decisions at once: each is what `task_features` gives it, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from dagpilot.state import EncodeContext
from dagpilot.state.encode import candidate_jobs
from dagpilot.state.lane_tasks import Decision, lane_task_features
from dagpilot.state.task_features import task_features
from tests.state.sim_views import busy_default


def _decisions() -> list[Decision]:
    """Decision points of two busy episodes, each with 1-9 of its pending pods (at different
    clocks; from several jobs where several are pending, which these pools reach late)."""
    found: list[Decision] = []
    for pool, seed in (("builtin:mix:20", 2), ("builtin:spark-etl:8", 3)):
        env, view, scheduler = busy_default(pool, seed)
        context = EncodeContext()
        for step in range(1200):
            pods = list(view.pending)
            several = len({pod.job.id for pod in pods}) > 1
            if pods and (step % 60 == 0 or (several and step % 7 == 0)):
                # the newest pod first: another job's where several are pending
                candidates = pods[-1:] + pods[:min(len(found) % 9, len(pods) - 1)]
                found.append((candidates, candidate_jobs(view, candidates, context),
                              view.now_s))
            view, _, done, _ = env.step(scheduler.decide(view))
            if done:
                break
    return found


def test_each_decision_gets_its_own_rows_bit_for_bit() -> None:
    decisions = _decisions()
    assert len({now for _, _, now in decisions}) > 5
    assert any(len(jobs) > 1 for _, jobs, _ in decisions)
    for rows, (candidates, jobs, now) in zip(lane_task_features(decisions), decisions,
                                             strict=True):
        alone = task_features(candidates, jobs, now)
        assert rows.dtype == alone.dtype and np.array_equal(rows, alone)


def test_a_decision_without_candidates_is_refused() -> None:
    decisions = _decisions()[:1]
    with pytest.raises(ValueError, match="at least one candidate"):
        lane_task_features([*decisions, ([], {}, 0.0)])
