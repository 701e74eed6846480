"""Replay of recorded runs: the DAG repair by recorded times, the simulated makespan."""

from __future__ import annotations

from dagpilot.bench.cws_replay import repair_dag, simulated_makespan
from dagpilot.core.job_draft import JobDraft, build
from dagpilot.core.types import Job, Recorded, Resources, Task
from dagpilot.sim.record import JobRecord, PodRecord, RunRecord


def recorded_task(task_id: str, submit_s: float, complete_s: float,
                  parents: tuple[str, ...] = ()) -> Task:
    return Task(task_id, task_id, max(complete_s - submit_s - 1.0, 0.0), Resources(1.0, 2**30),
                parents=parents, recorded=Recorded("n", submit_s, submit_s + 1.0, complete_s))


def make_job(*tasks: Task) -> Job:
    draft = JobDraft("test", "wf/original/1")
    for task in tasks:
        draft.add(task, task.id)
    return build(draft)


def parents_of(job: Job) -> dict[str, tuple[str, ...]]:
    return {task.id: task.parents for task in job.tasks}


def test_a_task_released_long_after_its_parents_gets_the_last_completed_task() -> None:
    job = make_job(
        recorded_task("a", 0.0, 10.0),
        recorded_task("b", 0.0, 60.0),
        recorded_task("c", 0.0, 61.0),  # completes just before d is submitted
        recorded_task("d", 65.0, 70.0, parents=("a",)),  # ready at 10, submitted at 65
        recorded_task("e", 15.0, 20.0, parents=("a",)))  # 5 s after its parent: on time
    repaired, count = repair_dag(job, late_s=15.0)
    assert count == 1
    assert parents_of(repaired)["d"] == ("a", "c")
    assert parents_of(repaired)["e"] == ("a",)
    assert "d" in repaired.task("c").children


def test_a_late_root_gets_a_parent_and_ties_give_several() -> None:
    job = make_job(
        recorded_task("a", 0.0, 30.0),
        recorded_task("b", 0.0, 30.0),
        recorded_task("late", 40.0, 45.0))  # no parent, 40 s after the run began
    repaired, count = repair_dag(job, late_s=15.0)
    assert count == 1
    assert parents_of(repaired)["late"] == ("a", "b")


def test_nothing_to_repair_returns_the_job_itself() -> None:
    job = make_job(recorded_task("a", 0.0, 5.0), recorded_task("b", 8.0, 9.0, parents=("a",)))
    assert repair_dag(job, late_s=15.0) == (job, 0)


def test_a_task_never_gets_a_descendant_as_parent() -> None:
    # Times recorded at 1 s resolution can put a child's completion before its parent's
    # submission; the repair must not close a cycle.
    job = make_job(
        recorded_task("a", 0.0, 1.0),
        recorded_task("p", 20.0, 20.0),
        recorded_task("child", 20.0, 20.0, parents=("p",)))
    repaired, count = repair_dag(job, late_s=15.0)
    assert count == 1
    assert parents_of(repaired)["p"] == ("a",)


def test_untimed_jobs_are_left_alone() -> None:
    job = make_job(Task("a", "a", 1.0, Resources(1.0, 2**30)))
    assert repair_dag(job, late_s=15.0) == (job, 0)


def test_makespan_runs_from_the_first_creation_to_the_last_end() -> None:
    record = RunRecord("s", 0, physics=False)
    record.jobs.append(JobRecord("j", 0.0, 40.0, 10.0, 10.0))
    record.pods.extend([
        PodRecord("p1", "j", "a", 0, "n", 2.0, 2.0, 3.0, 10.0, "succeeded", 10.0),
        PodRecord("p2", "j", "b", 0, "n", 5.0, 6.0, 9.0, 40.0, "succeeded", 40.0)])
    assert simulated_makespan(record) == 38.0
    record.jobs[0] = JobRecord("j", 0.0, None, 10.0, 10.0)
    assert simulated_makespan(record) is None
