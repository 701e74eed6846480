"""Alibaba cluster-trace-v2018 batch_task loader: name rules, fields, real samples, bad input."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from dagpilot.core.config import GIB, LoaderSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import build
from dagpilot.core.types import Job
from dagpilot.workloads import alibaba
from dagpilot.workloads.alibaba import TaskName, parse_task_name

SETTINGS = LoaderSettings(default_cpu=2.0, default_memory=3 * GIB, default_runtime_s=45.0,
                          alibaba_machine_memory=100 * GIB)


def located(error: InvalidInput) -> tuple[str, str, str]:
    """Where an error says the problem is: file, record, field."""
    return error.file, error.record, error.field
HEADER = ("job_name,task_name,instance_num,status,start_time,end_time,mean_instance_duration,"
          "plan_cpu,plan_mem\n")


def load(path: Path, settings: LoaderSettings = SETTINGS) -> dict[str, Job]:
    return {job.id: job for job in (build(d) for d in alibaba.read(str(path), settings))}


@pytest.mark.parametrize(("name", "expected"), [
    ("M1", TaskName(1, ())),
    ("R2_1", TaskName(2, (1,))),
    ("J4_2_3", TaskName(4, (2, 3))),
    ("M1_Stg8", TaskName(1, ())),
    ("R2_1_Stg8", TaskName(2, (1,))),
    ("J10_7_9_Stg4", TaskName(10, (7, 9))),
    ("J30_4_5_25_", TaskName(30, (4, 5, 25))),
    ("task_Nzg3ODAwNDgzMTAwNTc2NTQ2Mw==", TaskName(None)),
    ("MergeTask", TaskName(None)),
    ("42", TaskName(None)),
])
def test_task_names(name: str, expected: TaskName) -> None:
    assert parse_task_name(name) == expected


@pytest.fixture(scope="module")
def small(fixtures: Path) -> dict[str, Job]:
    return load(fixtures / "alibaba" / "small.csv")


@pytest.mark.parametrize(("job", "task", "parents", "instances", "runtime_s", "cpu", "memory"), [
    ("small/j_1", "M1", (), 4, 8.5, 1.0, round(0.005 * 100 * GIB)),
    ("small/j_1", "R2_1", ("M1",), 2, 12.0, 0.5, round(0.0025 * 100 * GIB)),
    ("small/j_1", "J3_1_2", ("M1", "R2_1"), 1, 20.0, 2.0, 1 * GIB),
    ("small/j_2", "R2_1_Stg8", ("M1_Stg8",), 5, 4.0, 1.0, round(0.0039 * 100 * GIB)),
    ("small/j_2", "J4_1_2_", ("M1_Stg8", "R2_1_Stg8"), 1, 1.0, 1.0, round(0.0039 * 100 * GIB)),
    ("small/j_3", "task_Nzg3ODAwNDgzMTAwNTc2NTQ2Mw==", (), 7, 50.0, 1.0, round(0.002 * 100 * GIB)),
    # Waiting row: "nan" instances, cpu and memory, no runtime; its parent R2_1 exists
    ("small/j_4", "R3_2", ("R2_1",), 1, 45.0, 2.0, 3 * GIB),
    # Running row: its mean_instance_duration (9) is not a runtime
    ("small/j_4", "R2_1", (), 6, 45.0, 1.0, round(0.003 * 100 * GIB)),
    # -1 is the trace's marker for an invalid value: the defaults apply
    ("small/j_5", "M1", (), 1, 1.0, 2.0, 3 * GIB),
])
def test_task_fields(small: dict[str, Job], *, job: str, task: str, parents: tuple[str, ...],
                     instances: int, runtime_s: float, cpu: float, memory: int) -> None:
    found = small[job].task(task)
    assert found.parents == parents
    assert found.instances == instances
    assert found.runtime_s == runtime_s
    assert found.requests.cpu == pytest.approx(cpu)
    assert found.requests.memory == memory


def test_jobs(small: dict[str, Job]) -> None:
    assert list(small) == ["small/j_1", "small/j_2", "small/j_3", "small/j_4", "small/j_5"]
    j_1 = small["small/j_1"]
    assert j_1.arrival_s == 100.0
    assert j_1.recorded_makespan_s == 30.0
    assert j_1.labels == ()
    assert j_1.task("J3_1_2").recorded is not None
    assert j_1.task("J3_1_2").recorded.start_s == 105.0
    assert j_1.task("J3_1_2").recorded.complete_s == 130.0
    assert [t.parents for t in small["small/j_3"].tasks] == [(), ()]  # independent tasks


def test_unfinished_job_keeps_its_status(small: dict[str, Job]) -> None:
    j_4 = small["small/j_4"]
    assert j_4.label("alibaba.status") == "Running=1,Waiting=1"
    assert j_4.label("alibaba.default_runtimes") == "2"
    assert small["small/j_1"].label("alibaba.default_runtimes", "") == ""
    assert j_4.recorded_makespan_s is None
    assert j_4.arrival_s == 400.0  # the Waiting row's start_time 0 means "not started"
    assert j_4.task("R3_2").recorded is None
    assert j_4.task("R2_1").recorded is not None
    assert j_4.task("R2_1").recorded.complete_s is None


def test_missing_parent_is_dropped_and_counted(small: dict[str, Job]) -> None:
    j_4 = small["small/j_4"]
    assert j_4.task("R2_1").parents == ()  # task 1 is not in the sample
    assert j_4.label("alibaba.dropped_parents") == "1"


def test_folder_reads_every_csv_and_keeps_job_ids_apart(fixtures: Path) -> None:
    jobs = load(fixtures / "alibaba")
    assert "second/j_1" in jobs
    assert "small/j_1" in jobs
    assert len(jobs) == 6
    assert jobs["second/j_1"].arrival_s == 700.0


def test_gzipped_file(tmp_path: Path, fixtures: Path) -> None:
    path = tmp_path / "packed.csv.gz"
    path.write_bytes(gzip.compress((fixtures / "alibaba" / "small.csv").read_bytes()))
    assert set(load(path)) == {f"packed/j_{n}" for n in range(1, 6)}


def rows(*lines: str) -> str:
    return HEADER + "".join(line + "\n" for line in lines)


def test_tasks_that_did_not_terminate_take_the_default_runtime(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "unfinished.csv"
    # R2_1 is one of the trace's tasks still Running at its end (set_0_6600 line 2527): its
    # mean_instance_duration is its start_time, 140562 s, a duration computed from no end
    path.write_text(rows("j,M1,2,Terminated,140000,140030,25,100,1",
                         "j,R2_1,3,Running,140562,0,140562,100,1",
                         "j,J3_2,1,Failed,140600,140700,80,100,1",
                         "k,M1,1,Terminated,140000,140010,10,100,1"))
    with caplog.at_level("INFO", logger="dagpilot.workloads.alibaba"):
        jobs = load(path)
    j = jobs["unfinished/j"]
    assert [t.runtime_s for t in j.tasks] == [25.0, 45.0, 45.0]
    assert j.total_work_core_s == pytest.approx(2 * 25.0 + 3 * 45.0 + 45.0)
    assert j.label("alibaba.default_runtimes") == "2"
    assert j.label("alibaba.status") == "Failed=1,Running=1,Terminated=1"
    assert j.recorded_makespan_s is None
    assert jobs["unfinished/k"].labels == ()
    assert "2 tasks of 1 jobs did not terminate" in caplog.text
    assert str(path) in caplog.text


@pytest.mark.parametrize(("content", "record", "field"), [
    (HEADER.replace(",plan_mem", "") + "j,M1,1,Terminated,1,2,3,100\n", "header", "plan_mem"),
    (rows("j,M1,1,Terminated,1,2,3,100,1", "j,R2_1,1,Terminated,1,2,three,100,1"), "line 3",
     "mean_instance_duration"),
    (rows("j,M1,1,Terminated,1,2,3,100,inf"), "line 2", "plan_mem"),
    (rows("j,M1,1.5,Terminated,1,2,3,100,1"), "line 2", "instance_num"),
    (rows("j,,1,Terminated,1,2,3,100,1"), "line 2", "task_name"),
    (rows("j,M1,1,Terminated,1,2,3,100,1", "j,M2,1,Terminated,1,2,3,100,1,9"), "line 3", ""),
])
def test_malformed_rows(tmp_path: Path, content: str, record: str, field: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(InvalidInput) as caught:
        alibaba.read(str(path), SETTINGS)
    assert located(caught.value) == (str(path), record, field)


@pytest.mark.parametrize(("line", "field"), [
    ("j,M1,1,Terminated,1,2,-5,100,1", "runtime"),
    ("j,M1,1,Terminated,1,2,nan,100,1", "runtime"),
    ("j,M1,0,Terminated,1,2,3,100,1", "instances"),
    ("j,M1,1,Terminated,1,2,3,-50,1", "requests"),
])
def test_bad_values_are_refused_by_the_job_rules(tmp_path: Path, line: str, field: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(rows("j,R2_1,1,Terminated,1,2,3,100,1", line))
    with pytest.raises(InvalidInput) as caught:
        load(path)
    assert (caught.value.file, caught.value.record, caught.value.field) == (str(path), "line 3",
                                                                             field)


def test_self_dependency_is_a_cycle(tmp_path: Path) -> None:
    path = tmp_path / "cycle.csv"
    path.write_text(rows("j,M1,1,Terminated,1,2,3,100,1", "j,R2_2_1,1,Terminated,1,2,3,100,1"))
    with pytest.raises(InvalidInput) as caught:
        load(path)
    assert (caught.value.record, caught.value.field) == ("line 3", "parents")


def test_truncated_gzip(tmp_path: Path, fixtures: Path) -> None:
    packed = gzip.compress((fixtures / "alibaba" / "small.csv").read_bytes())
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(InvalidInput, match="gzip") as caught:
        alibaba.read(str(path), SETTINGS)
    assert caught.value.file == str(path)


@pytest.mark.parametrize("name", ["missing.csv", "empty-folder"])
def test_nothing_to_read(tmp_path: Path, name: str) -> None:
    (tmp_path / "empty-folder").mkdir()
    with pytest.raises(InvalidInput) as caught:
        alibaba.read(str(tmp_path / name), SETTINGS)
    assert caught.value.file == str(tmp_path / name)


# The real samples (traces README: job and row counts per file).
REAL = {
    "random_50_dags": (50, 197),
    "set_0_6600_dags": (6_600, 25_196),
    "straight_chain_10k_dags_set1": (10_000, 26_920),
    "straight_chain_7k_dags_minlen4_set1": (7_000, 32_906),
}


@pytest.fixture(scope="module")
def real(traces: Path) -> list[Job]:
    return [build(d) for d in alibaba.read(str(traces / "alibaba-v2018-dags"), LoaderSettings())]


def test_real_counts(real: list[Job]) -> None:
    for stem, (jobs, task_rows) in REAL.items():
        mine = [job for job in real if job.id.startswith(f"{stem}/")]
        assert len(mine) == jobs, stem
        assert sum(len(job.tasks) for job in mine) == task_rows, stem
    assert len({job.id for job in real}) == len(real)


def test_real_shapes(real: list[Job]) -> None:
    set_0 = [job for job in real if job.id.startswith("set_0_6600_dags/")]
    # The README counts 4,261 jobs with dependencies by strict `X1_2` names; four more jobs have
    # dependencies in names with a `_Stg` suffix (R2_1_Stg8, J10_7_9_Stg4).
    assert sum(any(t.parents for t in job.tasks) for job in set_0) == 4_265
    assert max(len(job.tasks) for job in set_0) == 72
    for job in real:
        if job.id.startswith("straight_chain"):
            assert all(len(t.parents) <= 1 and len(t.children) <= 1 for t in job.tasks), job.id
    dropped = sum(int(job.label("alibaba.dropped_parents", "0")) for job in real)
    assert dropped == 16  # chains whose sample lost a middle task


def test_real_unfinished_tasks_take_the_default_runtime(real: list[Job]) -> None:
    # 669 rows are not Terminated (Running, Waiting, Failed) in 260 jobs (docs/DATA.md)
    counts = [int(job.label("alibaba.default_runtimes", "0")) for job in real]
    assert sum(counts) == 669
    assert sum(count > 0 for count in counts) == 260
    # the longest runtime is now a measured one (set_0_6600: 59,708 s), not the days that the
    # 23 tasks still Running at the end of the trace carried (up to 655,721 s)
    assert max(task.runtime_s for job in real for task in job.tasks) == 59_708.0
    assert all(job.arrival_s >= 0 for job in real)
