"""CWS Nextflow loader: the hand-written toy pipeline, the edge rebuild, malformed input, and the
six real pipelines."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import JobDraft, build
from dagpilot.core.types import Job, Recorded, TaskClass
from dagpilot.workloads import cws, cws_runs
from dagpilot.workloads.cws_edges import (
    TracedTask,
    _ProcessTasks,
    boundary_prefixes,
    completed_before,
    effective_parents,
    rebuild,
)

SETTINGS = LoaderSettings()
BASE_S = 1_700_000_000.0


@pytest.fixture(scope="module")
def toy(fixtures: Path) -> dict[str, Job]:
    return {draft.job_id: build(draft) for draft in cws.read(str(fixtures / "cws"), SETTINGS)}


def _copy_toy(fixtures: Path, tmp_path: Path) -> Path:
    """A writable copy of the toy CWS folder."""
    folder = tmp_path / "cws"
    shutil.copytree(fixtures / "cws", folder)
    return folder


# --- the toy pipeline ----------------------------------------------------------------------

def test_one_job_per_run_in_strategy_rep_order(toy: dict[str, Job]) -> None:
    assert list(toy) == ["toy/fifo_fair/2", "toy/original/1"]
    job = toy["toy/original/1"]
    assert (job.label("workflow"), job.label("strategy"), job.label("rep")) == (
        "toy", "original", "1")
    assert len(job.tasks) == 17
    assert job.recorded_makespan_s == pytest.approx(50.0)


@pytest.mark.parametrize(("task_id", "parents"), [
    ("1", ()), ("2", ()),
    ("3", ("1",)), ("7", ("1",)),  # single-task parent process: broadcast
    ("8", ("3", "2")),  # TRIM tag A_R1; CONVERT has no A_R1 (a mix); INDEX broadcast
    ("11", ("6", "2")),  # CONVERT tag C_R1; TRIM has none (a mix)
    ("13", ("8", "9")),  # MERGE A <- ALIGN A_R1, A_R2: the child's tag is a prefix
    ("14", ("10",)),
    ("15", ("13",)),  # REPORT "A - summary" <- MERGE A, through the process that never ran
    ("17", ("15", "16", "8", "9", "10", "11", "12")),  # untagged MULTIQC collects everything
])
def test_rebuilt_parents(toy: dict[str, Job], task_id: str, parents: tuple[str, ...]) -> None:
    assert toy["toy/original/1"].task(task_id).parents == parents


def test_edges_that_contradict_the_recorded_times_are_dropped(toy: dict[str, Job]) -> None:
    late = toy["toy/fifo_fair/2"]
    assert late.task("10").parents == ("2",)  # TRIM B_R1 completed after ALIGN B_R1's submit
    assert late.task("17").parents == ("15", "8", "9", "10", "11", "12")  # REPORT B too late


@pytest.mark.parametrize(("job_id", "expected"), [
    ("toy/original/1", {"tag_edges": "10", "tag_edges_consistent": "10",
                        "broadcast_edges": "17", "broadcast_edges_consistent": "17",
                        "channel_mixes": "5", "unrebuilt_edges": "0"}),
    ("toy/fifo_fair/2", {"tag_edges": "10", "tag_edges_consistent": "9",
                         "broadcast_edges": "17", "broadcast_edges_consistent": "16",
                         "channel_mixes": "5", "unrebuilt_edges": "1"}),
])
def test_rebuild_counts_in_labels(toy: dict[str, Job], job_id: str,
                                  expected: dict[str, str]) -> None:
    labels = dict(toy[job_id].labels)
    assert {key: labels[key] for key in expected} == expected


def test_task_fields(toy: dict[str, Job]) -> None:
    job = toy["toy/original/1"]
    first = job.task("1")
    assert first.name == "TOY:INPUT_CHECK (samplesheet.csv)"
    assert first.runtime_s == pytest.approx(1.7)  # realtime, ms -> s
    assert (first.requests.cpu, first.requests.memory) == (1.0, 2_147_483_648)
    assert first.peak_memory == 3_000_000
    assert (first.read_bytes, first.written_bytes) == (0, 4096)
    assert first.cpu_intensity == pytest.approx(0.95)
    assert first.recorded == Recorded("node2", BASE_S, BASE_S + 2, BASE_S + 4)
    assert job.task("2").cpu_intensity == 1.0  # 250 % on 2 cpus, clamped
    assert job.task("2").requests.cpu == 2.0
    trim = job.task("4")  # memory "-", 10 % CPU, 2 GB read in 4 s
    assert trim.requests.memory == SETTINGS.default_memory
    assert trim.task_class is TaskClass.IO
    assert trim.io_intensity == pytest.approx(0.9)
    assert job.task("5").recorded == Recorded(None, BASE_S + 5.2, BASE_S + 7, BASE_S + 12)
    assert (job.task("6").read_bytes, job.task("6").written_bytes) == (10_000, 5_000)  # rchar
    assert job.task("7").runtime_s == pytest.approx(3.6)  # realtime "-": duration


def test_build_keeps_the_loaded_tasks(fixtures: Path) -> None:
    """The loader records children as build fills them in, so build copies no task."""
    for draft in cws.read(str(fixtures / "cws"), SETTINGS):
        loaded = {id(task) for task in draft.tasks}
        assert all(id(task) in loaded for task in build(draft).tasks)


def test_milliseconds_become_seconds_by_division(fixtures: Path, tmp_path: Path) -> None:
    """1669573016143 ms / 1000 is 1669573016.143; times 0.001 it is 1669573016.1430001."""
    folder = _copy_toy(fixtures, tmp_path)
    trace = folder / "traces" / "toy.csv"
    trace.write_text(trace.read_text().replace("1700003600000", "1669573016143", 1))
    job = build(cws.read(str(folder), SETTINGS)[0])
    recorded = job.task("1").recorded
    assert recorded is not None
    assert recorded.submit_s == 1669573016143 / 1000 != 1669573016143 * 0.001


def test_records_name_the_line(fixtures: Path) -> None:
    drafts = cws.read(str(fixtures / "cws"), SETTINGS)
    assert drafts[1].records[0] == "line 19 (task_id 1)"  # original/1 starts after 17 rows


def test_single_trace_argument_and_gzip(fixtures: Path, tmp_path: Path,
                                        toy: dict[str, Job]) -> None:
    folder = _copy_toy(fixtures, tmp_path)
    plain = folder / "traces" / "toy.csv"
    packed = folder / "traces" / "toy.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    jobs = [build(draft) for draft in cws.read(str(packed), SETTINGS)]
    assert [job.id for job in jobs] == list(toy)
    assert [job.tasks for job in jobs] == [job.tasks for job in toy.values()]


def test_missing_dag_file(fixtures: Path, tmp_path: Path) -> None:
    folder = _copy_toy(fixtures, tmp_path)
    (folder / "process_dags" / "toy.json").unlink()
    with pytest.raises(InvalidInput, match="process DAG"):
        cws.read(str(folder), SETTINGS)


def test_not_a_cws_folder(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="traces/"):
        cws.read(str(tmp_path), SETTINGS)


# --- the rebuild rule, piece by piece ------------------------------------------------------

@pytest.mark.parametrize(("tag", "prefixes"), [
    ("sample1", []),
    ("WT_REP1_T1", ["WT", "WT_REP1"]),
    ("bad9 - taxonomic level: 2", ["bad9", "bad9 - taxonomic", "bad9 - taxonomic level"]),
    ("-", []),
])
def test_boundary_prefixes(tag: str, prefixes: list[str]) -> None:
    assert boundary_prefixes(tag) == prefixes


def _tasks(*tags: str) -> _ProcessTasks:
    return _ProcessTasks([TracedTask(f"p{i}", "P", tag) for i, tag in enumerate(tags)])


@pytest.mark.parametrize(("parent_tags", "child_tag", "matched"), [
    (("sample1", "sample10"), "sample1", ["sample1"]),  # exact, never a bare prefix
    (("WT_R1_T1", "WT_R1_T2", "WT_R2_T1"), "WT_R1", ["WT_R1_T1", "WT_R1_T2"]),  # a merge
    (("SPT5", "SPT5_T0"), "SPT5_T0_REP1", ["SPT5_T0"]),  # a split: the longest prefix
    (("A_1", "B_1"), "C_1", []),
    (("-", "-"), "-", []),  # untagged never matches
    (("sampleID_1", "sampleID_1a"), "sampleID_1a", ["sampleID_1a"]),
])
def test_tag_matching(parent_tags: tuple[str, ...], child_tag: str, matched: list[str]) -> None:
    assert [t.tag for t in _tasks(*parent_tags).matching(child_tag)] == matched


def test_effective_parents_walk_through_absent_processes_and_ignore_self_loops() -> None:
    parents = {"D": ("C", "D"), "C": ("B",), "B": ("A",)}
    assert effective_parents(parents, ["A", "D"]) == {"A": [], "D": ["A"]}


def test_missing_times_keep_the_edge() -> None:
    parent = TracedTask("1", "A", "x", 0.0, None)
    child = TracedTask("2", "B", "x", 5.0, 9.0)
    assert completed_before(parent, child)
    assert not completed_before(TracedTask("1", "A", "x", 0.0, 6.0), child)


def test_unmatched_task_without_other_parents_is_unrebuilt() -> None:
    tasks = [TracedTask("a1", "A", "s1", 0, 1), TracedTask("a2", "A", "s2", 0, 1),
             TracedTask("b1", "B", "s1", 2, 3), TracedTask("b3", "B", "s3", 2, 3)]
    parents, stats = rebuild(tasks, {"B": ("A",)})
    assert parents == {"a1": [], "a2": [], "b1": ["a1"], "b3": []}
    assert (stats.tag_edges, stats.channel_mixes, stats.unrebuilt) == (1, 0, 1)


# --- runs.csv ------------------------------------------------------------------------------

def test_read_runs(fixtures: Path, toy: dict[str, Job]) -> None:
    runs = cws_runs.read_runs(fixtures / "cws" / "runs.csv")
    assert [run.job_id for run in runs] == list(toy)
    first = runs[0]
    assert (first.workflow, first.strategy, first.rep, first.n_tasks) == ("toy", "fifo_fair", 2, 17)
    assert first.makespan_s == 50.0
    assert first.first_submit_s == pytest.approx(BASE_S + 3600)


@pytest.mark.parametrize(("old", "new", "record", "field"), [
    ("makespan_s", "makespan", "header (line 1)", "makespan_s"),
    ("toy,original,1,", "toy,original,one,", "line 3", "rep"),
    ("toy,original,1,", "toy,original,1.5,", "line 3", "rep"),
])
def test_malformed_runs(fixtures: Path, tmp_path: Path, *, old: str, new: str, record: str,
                        field: str) -> None:
    path = tmp_path / "runs.csv"
    path.write_text((fixtures / "cws" / "runs.csv").read_text().replace(old, new))
    with pytest.raises(InvalidInput) as caught:
        cws_runs.read_runs(path)
    assert (caught.value.file, caught.value.record, caught.value.field) == (str(path), record,
                                                                           field)


# --- malformed traces and DAGs -------------------------------------------------------------

def _load(folder: Path) -> list[Job]:
    return [build(draft) for draft in cws.read(str(folder), SETTINGS)]


@pytest.mark.parametrize(("old", "new", "record", "field"), [
    (",submit,", ",submitted,", "header (line 1)", "submit"),  # a wrong column name
    ("1700000000000,1700000002000,1700000004000,4000,1700,",
     "1700000000000,1700000002000,1700000004000,4000,fast,", "line 19", "realtime"),
    ("original,1,3,node2", "original,x,3,node2", "line 21", "rep"),
    ("original,1,3,node2,ab/000003,TOY:TRIM", "original,1,3,node2,ab/000003,TOY:SORT",
     "line 21", "process"),  # a process the DAG does not know
    ("1700000000000,1700000002000,1700000004000,4000,1700,",
     "1700000000000,1700000002000,1700000004000,4000,-1700,", "line 19 (task_id 1)",
     "runtime"),  # negative runtime
    ("1700000000000,1700000002000,1700000004000,4000,1700,",
     "1700000000000,1700000002000,1700000004000,-,-,", "line 19 (task_id 1)", "runtime"),
])
def test_malformed_trace(fixtures: Path, tmp_path: Path, *, old: str, new: str, record: str,
                         field: str) -> None:
    folder = _copy_toy(fixtures, tmp_path)
    trace = folder / "traces" / "toy.csv"
    text = trace.read_text()
    assert old in text
    trace.write_text(text.replace(old, new, 1))
    with pytest.raises(InvalidInput) as caught:
        _load(folder)
    assert (caught.value.file, caught.value.record, caught.value.field) == (str(trace), record,
                                                                           field)


def test_truncated_gzip_trace(fixtures: Path, tmp_path: Path) -> None:
    folder = _copy_toy(fixtures, tmp_path)
    plain = folder / "traces" / "toy.csv"
    packed = folder / "traces" / "toy.csv.gz"
    data = gzip.compress(plain.read_bytes())
    packed.write_bytes(data[: len(data) // 2])
    plain.unlink()
    with pytest.raises(InvalidInput, match="gzip") as caught:
        _load(folder)
    assert caught.value.file == str(packed)


@pytest.mark.parametrize(("content", "record", "field"), [
    ('{"processes": ["A"], "process_edges": [["A"]]}', "process_edges[0]", "process_edges"),
    ('{"processes": ["A"]}', "top level", "process_edges"),
    ('{"processes": "A", "process_edges": []}', "top level", "processes"),
    ('{"processes": [', "line 1 column 16", ""),
])
def test_malformed_dag(fixtures: Path, tmp_path: Path, content: str, record: str,
                       field: str) -> None:
    folder = _copy_toy(fixtures, tmp_path)
    dag = folder / "process_dags" / "toy.json"
    dag.write_text(content)
    with pytest.raises(InvalidInput) as caught:
        _load(folder)
    assert (caught.value.file, caught.value.record, caught.value.field) == (str(dag), record,
                                                                           field)


def test_recorded_times_keep_a_process_cycle_out_of_the_task_dag(toy: dict[str, Job],
                                                                  fixtures: Path,
                                                                  tmp_path: Path) -> None:
    folder = _copy_toy(fixtures, tmp_path)
    dag_file = folder / "process_dags" / "toy.json"
    dag = json.loads(dag_file.read_text())
    dag["process_edges"].append(["TOY:MERGE", "TOY:ALIGN"])
    dag_file.write_text(json.dumps(dag))
    jobs = {job.id: job for job in _load(folder)}
    assert jobs["toy/original/1"].tasks == toy["toy/original/1"].tasks
    # without the submit time of ALIGN A_R1 the back edge stays, and the rules refuse the cycle
    trace = folder / "traces" / "toy.csv"
    trace.write_text(trace.read_text().replace(",1700000021000,", ",-,", 1))
    with pytest.raises(InvalidInput, match="cycle") as caught:
        _load(folder)
    assert (caught.value.file, caught.value.field) == (str(trace), "parents")


# --- the real traces -----------------------------------------------------------------------

TASKS_PER_RUN = {"ampliseq": 144, "atacseq": 496, "chipseq": 598, "eager": 660, "nanoseq": 617,
                 "rnaseq": 433}  # the shared traces' README
PIPELINES = tuple(TASKS_PER_RUN)
RUNS_PER_PIPELINE = 110
STRATEGIES = 22


@pytest.fixture(scope="module")
def recorded_runs(traces: Path) -> dict[str, cws_runs.RecordedRun]:
    runs = cws_runs.read_runs(traces / "cws-k8s-nextflow" / "runs.csv")
    return {run.job_id: run for run in runs}


def _read_pipeline(traces: Path, name: str) -> list[JobDraft]:
    folder = traces / "cws-k8s-nextflow"
    return cws.read(str(folder / "traces" / f"{name}.csv.gz"), SETTINGS)


def test_every_pipeline_is_found(traces: Path) -> None:
    found = cws.pipelines(traces / "cws-k8s-nextflow")
    assert [cws.pipeline_name(trace) for trace, _ in found] == list(PIPELINES)


@pytest.mark.parametrize("name", PIPELINES)
def test_real_pipeline(traces: Path, recorded_runs: dict[str, cws_runs.RecordedRun],
                       name: str) -> None:
    drafts = _read_pipeline(traces, name)
    assert len(drafts) == RUNS_PER_PIPELINE
    assert len({dict(draft.labels)["strategy"] for draft in drafts}) == STRATEGIES
    assert [d.job_id for d in drafts if "/original/" in d.job_id] == [
        f"{name}/original/{rep}" for rep in range(1, 6)]
    tag_edges = tag_consistent = unrebuilt = tasks = 0
    for draft in drafts:
        run = recorded_runs[draft.job_id]
        assert len(draft.tasks) == run.n_tasks == TASKS_PER_RUN[name], draft.job_id
        assert draft.recorded_makespan_s == pytest.approx(run.makespan_s, abs=1e-3)
        job = build(draft)  # the rebuilt task DAG is acyclic and every parent is known
        labels = dict(job.labels)
        tag_edges += int(labels["tag_edges"])
        tag_consistent += int(labels["tag_edges_consistent"])
        unrebuilt += int(labels["unrebuilt_edges"])
        tasks += len(job.tasks)
        for task in job.tasks:
            assert task.recorded is not None and task.recorded.submit_s is not None
            for parent in task.parents:  # kept edges respect the recorded times
                up = job.task(parent).recorded
                assert up is not None and up.complete_s is not None
                assert task.recorded.submit_s >= up.complete_s
    assert tag_edges > 0
    assert tag_consistent / tag_edges >= 0.98
    assert unrebuilt <= 0.01 * tasks


def test_runs_csv_covers_every_run(recorded_runs: dict[str, cws_runs.RecordedRun]) -> None:
    assert len(recorded_runs) == len(PIPELINES) * RUNS_PER_PIPELINE
    assert {run.workflow for run in recorded_runs.values()} == set(PIPELINES)
