"""Requests held until the engine's next poll (`release_at_poll`), worked out by hand."""

from __future__ import annotations

from dagpilot.sim import simulate
from dagpilot.sim.engine import next_poll
from dagpilot.sim.record import PodRecord, RunRecord
from tests.sim.helpers import FirstFit, cluster, job, node, settings, task

POLL_S = 10.0


def pods(record: RunRecord) -> dict[str, PodRecord]:
    return {pod.task_id: pod for pod in record.pods}


def run(release_at_poll: bool) -> RunRecord:
    """Two independent 1-CPU tasks on a 1-CPU node: b waits for a's CPU."""
    pair = job("j", task("a", 12.0), task("b", 5.0))
    return simulate([pair], cluster(node("n", cpu=1.0)), FirstFit(),
                    settings(poll_interval_s=POLL_S, release_at_poll=release_at_poll), seed=0)


def test_a_finished_pod_frees_its_requests_at_once_by_default() -> None:
    done = pods(run(release_at_poll=False))
    assert done["b"].bound_s == done["a"].finished_s


def test_a_finished_pod_keeps_its_requests_until_the_next_poll() -> None:
    record = run(release_at_poll=True)
    done = pods(record)
    phase = done["a"].created_s  # the job arrived at 0: its first poll is its phase
    assert done["a"].finished_s == phase + 12.0
    assert done["b"].bound_s == next_poll(phase + 12.0, phase, POLL_S) == phase + 20.0
    assert done["b"].finished_s == phase + 25.0
    assert record.jobs[0].finish_s == phase + 25.0
    assert [p.outcome for p in record.pods] == ["succeeded", "succeeded"]


def test_holding_requests_does_not_delay_the_job_end() -> None:
    single = job("j", task("a", 12.0))
    record = simulate([single], cluster(node("n", cpu=1.0)), FirstFit(),
                      settings(poll_interval_s=POLL_S, release_at_poll=True), seed=0)
    a = record.pods[0]
    assert record.jobs[0].finish_s == a.finished_s == a.created_s + 12.0
    assert a.outcome == "succeeded"
