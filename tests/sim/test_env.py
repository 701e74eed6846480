"""The RL environment: decision points, and a reward that sums to minus the jobs' time in the
system (and the OOM penalties), worked out by hand."""

from __future__ import annotations

import pytest

from dagpilot.core.scheduler import Placement
from dagpilot.core.view import ClusterView
from dagpilot.sim import SimEnv
from tests.sim.helpers import GIB, cluster, job, node, only, settings, task


def place(view: ClusterView, task_id: str) -> Placement:
    pod = next(p for p in view.pending if p.task.id == task_id)
    return Placement(pod, view.nodes[0].spec.name)


def test_reward_is_minus_jobs_in_system_times_time() -> None:
    jobs = [job("long", task("l", 10)), job("short", task("s", 4))]
    env = SimEnv(jobs, cluster(node("n", cpu=1)), settings(), "agent")
    view = env.reset(seed=0)
    assert view.now_s == 0.0
    assert [p.task.id for p in view.pending] == ["l", "s"]
    view, reward, done, info = env.step(place(view, "l"))
    # The node is full now: the environment ran on to t=10, two jobs in the system all along.
    assert (reward, done, view.now_s) == (-20.0, False, 10.0)
    assert info.placed and info.jobs_ended == 1 and info.jobs_in_system == 1
    view, reward, done, info = env.step(place(view, "s"))
    assert (reward, done, view.now_s) == (-4.0, True, 14.0)
    record = env.close()
    assert sorted(j.jct_s for j in record.jobs if j.jct_s is not None) == [10.0, 14.0]
    assert record.decisions == 2


def test_none_advances_to_the_next_decision_point() -> None:
    jobs = [job("first", task("a", 10)), job("later", task("b", 1), arrival_s=3.0)]
    env = SimEnv(jobs, cluster(node("n", cpu=2)), settings(sample_interval_s=1e9), "agent")
    view = env.reset(seed=0)
    view, reward, done, _ = env.step(None)  # hold "a" back: next decision when "b" arrives
    assert (view.now_s, reward, done) == (3.0, -3.0, False)
    assert [p.task.id for p in view.pending] == ["a", "b"]


def test_oom_kills_cost_the_penalty() -> None:
    x = job("x", task("x", 100, memory=4 * GIB, peak_memory=8 * GIB))
    y = job("y", task("y", 5, memory=4 * GIB, peak_memory=4 * GIB))
    env = SimEnv([x, y], cluster(node("n", cpu=2, memory=10 * GIB)),
                 settings(only(memory=True), reward_oom_penalty=1_000.0), "agent")
    view = env.reset(seed=0)
    view, reward, done, info = env.step(place(view, "x"))
    assert (reward, done, info.oom_kills) == (0.0, False, 0)  # y still fits: same decision point
    view, reward, done, info = env.step(place(view, "y"))
    # x is killed at 0 (penalty); y ends at 5 (2 jobs x 5 s); x is back after its 10 s back-off
    # (1 job x 5 s).
    assert (view.now_s, reward, done, info.oom_kills) == (10.0, -15.0 - 1_000.0, False, 1)
    view, reward, done, info = env.step(place(view, "x"))
    assert (view.now_s, reward, done) == (110.0, -100.0, True)


def test_stepping_needs_a_live_episode() -> None:
    env = SimEnv([job("j", task("a", 1))], cluster(node("n")), settings(), "agent")
    with pytest.raises(RuntimeError, match="reset"):
        env.step(None)
    view = env.reset(seed=0)
    env.step(place(view, "a"))
    assert env.done
    with pytest.raises(RuntimeError, match="over"):
        env.step(None)


def test_reset_starts_a_fresh_identical_episode() -> None:
    jobs = [job("j", task("a", 10), task("b", 5, parents=("a",)))]
    env = SimEnv(jobs, cluster(node("n")), settings(poll_interval_s=5.0), "agent")
    first = env.reset(seed=4).now_s
    assert env.reset(seed=4).now_s == first
    assert env.reset(seed=5).now_s != first


def test_a_failed_job_costs_its_critical_path_so_failing_never_ends_an_episode_cheaply() -> None:
    x = job("x", task("x", 100, memory=4 * GIB, peak_memory=12 * GIB))
    env = SimEnv([x], cluster(node("n", cpu=2, memory=10 * GIB)),
                 settings(only(memory=True), reward_oom_penalty=0.0, oom_retry_limit=0),
                 "agent")
    view = env.reset(seed=0)
    view, reward, done, info = env.step(place(view, "x"))
    # killed at once, past the retry limit: the job fails, the episode is over at t=0, and the
    # reward charges its rerun (critical path 100 s), as the benchmark's JCT does
    assert (view.now_s, done, info.oom_kills) == (0.0, True, 1)
    assert reward == -100.0
    (record,) = env.close().jobs
    assert record.failed and record.effective_jct_s(0.0) == 100.0
