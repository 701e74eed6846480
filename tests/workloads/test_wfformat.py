"""WfFormat loader: hand-written 1.5 and 1.4 instances, malformed input, the real WfInstances."""

from __future__ import annotations

import copy
import gzip
import json
import math
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import JobDraft, build
from dagpilot.core.types import Job, TaskClass
from dagpilot.workloads import wfformat

SETTINGS = LoaderSettings()
GIB = 2**30


@pytest.fixture(scope="module")
def forkjoin(fixtures: Path) -> Job:
    return build(wfformat.read_file(fixtures / "wfformat" / "v15" / "forkjoin.json", SETTINGS))


@pytest.fixture(scope="module")
def blast14(fixtures: Path) -> Job:
    return build(wfformat.read_file(fixtures / "wfformat" / "v14" / "blast-mini.json", SETTINGS))


def _document(fixtures: Path) -> dict[str, Any]:
    text = (fixtures / "wfformat" / "v15" / "forkjoin.json").read_text()
    document: dict[str, Any] = json.loads(text)
    return document


def _write(tmp_path: Path, document: Any, name: str = "bad.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


# --- schema 1.5 ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("task_id", "parents", "runtime_s", "cpu", "memory", "read", "written", "cpu_share",
     "task_class", "node"),
    [
        # no coreCount/memory: defaults; bytes from file sizes; 8 % CPU and 8 GB in 20 s: I/O
        ("split_00000001", (), 20.0, 1.0, GIB, 4_000_000_000, 4_000_000_000, 0.08,
         TaskClass.IO, "worker-1"),
        # readBytes/writtenBytes from the execution win over the file sizes; 380 % / 4 cores
        ("align_00000002", ("split_00000001",), 100.0, 4.0, 3_000_000_000, 2_000_000_000,
         500_000, 0.95, TaskClass.CPU, "worker-1"),
        # 500 % on 4 cores is clamped to 1
        ("align_00000003", ("split_00000001",), 120.0, 4.0, 3_100_000_000, 2_000_000_000,
         700_000, 1.0, TaskClass.CPU, "worker-2"),
        # no avgCPU: fully busy; no machine: nothing recorded
        ("join_00000004", ("align_00000002", "align_00000003"), 30.0, 1.0, GIB, 1_200_000, 0,
         1.0, TaskClass.CPU, None),
    ])
def test_v15_task_fields(forkjoin: Job, *, task_id: str, parents: tuple[str, ...],
                        runtime_s: float, cpu: float, memory: int, read: int, written: int,
                        cpu_share: float, task_class: TaskClass, node: str | None) -> None:
    task = forkjoin.task(task_id)
    assert task.parents == parents
    assert task.runtime_s == runtime_s
    assert (task.requests.cpu, task.requests.memory) == (cpu, memory)
    assert (task.read_bytes, task.written_bytes) == (read, written)
    assert task.cpu_intensity == pytest.approx(cpu_share)
    assert task.task_class is task_class
    assert (task.recorded.node if task.recorded else None) == node


def test_v15_job(forkjoin: Job) -> None:
    assert forkjoin.id == "forkjoin"
    assert forkjoin.recorded_makespan_s == 250.5
    assert forkjoin.label("workflow") == "forkjoin-4"
    assert forkjoin.label("file") == "forkjoin.json"
    assert forkjoin.label("runtime_system") == "Pegasus"
    assert forkjoin.task("align_00000002").peak_memory == 3_000_000_000
    assert forkjoin.task("split_00000001").peak_memory is None
    assert forkjoin.critical_path_s == 20.0 + 120.0 + 30.0
    # the I/O share is capped by what the CPU left idle
    assert forkjoin.task("split_00000001").io_intensity == pytest.approx(0.92)


def test_records_name_the_task(fixtures: Path) -> None:
    draft = wfformat.read_file(fixtures / "wfformat" / "v15" / "forkjoin.json", SETTINGS)
    assert draft.records[2] == 'tasks[2] (id "align_00000003")'


def test_gzipped_equals_plain(fixtures: Path, tmp_path: Path, forkjoin: Job) -> None:
    packed = tmp_path / "forkjoin.json.gz"
    plain = fixtures / "wfformat" / "v15" / "forkjoin.json"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    job = build(wfformat.read_file(packed, SETTINGS))
    assert job.id == "forkjoin"
    assert job.tasks == forkjoin.tasks


def test_settings_defaults_apply(fixtures: Path) -> None:
    settings = LoaderSettings(default_cpu=2.0, default_memory=5 * GIB)
    job = build(wfformat.read_file(fixtures / "wfformat" / "v15" / "forkjoin.json", settings))
    assert job.task("join_00000004").requests.cpu == 2.0
    assert job.task("join_00000004").requests.memory == 5 * GIB
    assert job.task("align_00000002").requests.cpu == 4.0


def test_without_execution_every_task_takes_the_default_runtime(fixtures: Path,
                                                                tmp_path: Path) -> None:
    document = _document(fixtures)
    del document["workflow"]["execution"]
    job = build(wfformat.read_file(_write(tmp_path, document, "spec.json"), SETTINGS))
    assert {task.runtime_s for task in job.tasks} == {SETTINGS.default_runtime_s}
    assert job.recorded_makespan_s is None
    assert job.label("runtimes") == "default"


# --- schema 1.4 (and the 1.3 names) --------------------------------------------------------

@pytest.mark.parametrize(("task_id", "parents"), [
    ("ID000001", ()),
    ("ID000002", ("ID000001",)),  # declared on both ends, by name
    ("ID000003", ("ID000001",)),  # declared by id, on the child only
    ("ID000004", ("ID000002", "ID000003")),  # one end each
])
def test_v14_dependencies(blast14: Job, task_id: str, parents: tuple[str, ...]) -> None:
    assert blast14.task(task_id).parents == parents


def test_v14_fields(blast14: Job) -> None:
    split, blast, _, cat = (blast14.task(f"ID00000{i}") for i in range(1, 5))
    assert blast14.recorded_makespan_s == 95.0
    assert blast14.label("runtime_system") == "Makeflow"
    assert split.name == "split_fasta_ID000001"
    assert (split.read_bytes, split.written_bytes) == (1000, 1000)  # from the linked files
    assert (blast.read_bytes, blast.written_bytes) == (7000, 3000)
    assert blast.requests == blast.requests.__class__(cpu=2.0, memory=1_000_000_000)
    assert blast.cpu_intensity == pytest.approx(0.75)
    assert blast.recorded is not None and blast.recorded.node == "worker-1"
    assert (cat.runtime_s, cat.written_bytes) == (3.0, 50)  # 1.3 names: runtime, size
    assert cat.recorded is None


def test_v13_memory_in_kilobytes(fixtures: Path, tmp_path: Path) -> None:
    document = json.loads((fixtures / "wfformat" / "v14" / "blast-mini.json").read_text())
    document["schemaVersion"] = "1.3"
    task = document["workflow"]["tasks"][2]
    task["memory"] = 2048
    job = build(wfformat.read_file(_write(tmp_path, document, "v13.json"), SETTINGS))
    assert job.task("ID000003").requests.memory == 2_048_000


# --- folders -------------------------------------------------------------------------------

def test_folder_is_read_recursively_in_order_and_skips_non_instances(fixtures: Path) -> None:
    drafts = wfformat.read(str(fixtures / "wfformat"), SETTINGS)
    assert [d.job_id for d in drafts] == ["blast-mini", "forkjoin"]
    assert [dict(d.labels)["file"] for d in drafts] == ["v14/blast-mini.json",
                                                       "v15/forkjoin.json"]


def test_same_name_in_two_subfolders_keeps_ids_unique(fixtures: Path, tmp_path: Path) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        shutil.copy(fixtures / "wfformat" / "v15" / "forkjoin.json", tmp_path / sub)
    assert [d.job_id for d in wfformat.read(str(tmp_path), SETTINGS)] == ["forkjoin",
                                                                         "b/forkjoin"]


def test_empty_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no WfFormat instance"):
        wfformat.read(str(tmp_path), SETTINGS)


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no such file"):
        wfformat.read(str(tmp_path / "absent.json"), SETTINGS)


# --- malformed input -----------------------------------------------------------------------

def _mutated(fixtures: Path, change: Any) -> dict[str, Any]:
    document = copy.deepcopy(_document(fixtures))
    change(document)
    return document


def _spec_task(document: dict[str, Any], index: int) -> dict[str, Any]:
    task: dict[str, Any] = document["workflow"]["specification"]["tasks"][index]
    return task


def _exec_task(document: dict[str, Any], index: int) -> dict[str, Any]:
    task: dict[str, Any] = document["workflow"]["execution"]["tasks"][index]
    return task


def _load(path: Path) -> list[Job]:
    return [build(draft) for draft in wfformat.read(str(path), SETTINGS)]


@pytest.mark.parametrize(("change", "record", "field"), [
    (lambda d: d["workflow"].pop("specification"), "workflow", "specification"),
    (lambda d: _spec_task(d, 1).pop("id"), "tasks[1]", "id"),
    (lambda d: _exec_task(d, 1).update(runtimeInSeconds="fast"),
     'execution.tasks[1] (id "align_00000002")', "runtimeInSeconds"),
    (lambda d: _exec_task(d, 0).update(id="ghost"), 'execution.tasks[0] (id "ghost")', "id"),
    (lambda d: _spec_task(d, 3)["inputFiles"].append("nowhere.bam"),
     'tasks[3] (id "join_00000004")', "inputFiles"),
    (lambda d: _spec_task(d, 2).update(parents="split_00000001"),
     'tasks[2] (id "align_00000003")', "parents"),
    (lambda d: d.update(schemaVersion="1.2"), "top level", "schemaVersion"),
    (lambda d: d.update(workflow=[]), "workflow", "specification"),
])
def test_malformed_fields(fixtures: Path, tmp_path: Path, change: Any, record: str,
                          field: str) -> None:
    path = _write(tmp_path, _mutated(fixtures, change))
    with pytest.raises(InvalidInput) as caught:
        _load(path)
    assert (caught.value.file, caught.value.record, caught.value.field) == (str(path), record,
                                                                           field)


@pytest.mark.parametrize(("change", "record", "field", "message"), [
    (lambda d: _exec_task(d, 3).update(runtimeInSeconds=-5.0),
     'tasks[3] (id "join_00000004")', "runtime", "negative"),
    (lambda d: _exec_task(d, 3).pop("runtimeInSeconds"),
     'tasks[3] (id "join_00000004")', "runtime", "missing"),
    (lambda d: _spec_task(d, 3)["parents"].append("ghost_00000009"),
     'tasks[3] (id "join_00000004")', "parents", "ghost_00000009"),
    (lambda d: _exec_task(d, 1).update(coreCount=-4), 'tasks[1] (id "align_00000002")',
     "requests", "negative"),
])
def test_rule_violations_are_located(fixtures: Path, tmp_path: Path, *, change: Any,
                                     record: str, field: str, message: str) -> None:
    path = _write(tmp_path, _mutated(fixtures, change))
    with pytest.raises(InvalidInput, match=message) as caught:
        _load(path)
    assert (caught.value.file, caught.value.record, caught.value.field) == (str(path), record,
                                                                           field)


def test_truncated_gzip(fixtures: Path, tmp_path: Path) -> None:
    packed = gzip.compress((fixtures / "wfformat" / "v15" / "forkjoin.json").read_bytes())
    path = tmp_path / "cut.json.gz"
    path.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(InvalidInput, match="gzip") as caught:
        _load(path)
    assert caught.value.file == str(path)


def test_bad_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"schemaVersion": "1.5",\n "workflow": {,}}')
    with pytest.raises(InvalidInput, match="not valid JSON") as caught:
        _load(path)
    assert (caught.value.file, caught.value.record) == (str(path), "line 2 column 15")


def test_bad_file_in_a_folder_names_that_file(fixtures: Path, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    good = (fixtures / "wfformat" / "v15" / "forkjoin.json").read_text()
    (tmp_path / "a" / "good.json").write_text(good)
    bad = tmp_path / "b.json"
    bad.write_text(good.replace('"runtimeInSeconds": 30.0', '"runtimeInSeconds": "30 s"'))
    with pytest.raises(InvalidInput) as caught:
        _load(tmp_path)
    assert (caught.value.file, caught.value.field) == (str(bad), "runtimeInSeconds")


# --- the real WfInstances ------------------------------------------------------------------

@pytest.fixture(scope="module")
def instances(traces: Path) -> list[JobDraft]:
    return wfformat.read(str(traces / "wfinstances"), SETTINGS)


def test_every_instance_matches_the_manifest(traces: Path, instances: list[JobDraft]) -> None:
    manifest = pl.read_csv(traces / "wfinstances" / "MANIFEST.csv")
    assert {"path", "n_tasks", "n_edges", "makespan_s"} <= set(manifest.columns)
    expected = {row["path"]: row for row in manifest.iter_rows(named=True)}
    loaded = {dict(draft.labels)["file"]: draft for draft in instances}
    assert set(loaded) == set(expected)  # the schema folder and MANIFEST.csv are skipped
    for path, draft in loaded.items():
        row = expected[path]
        job = build(draft)  # acyclic, parents known, runtimes recorded
        assert len(job.tasks) == row["n_tasks"], path
        assert sum(len(task.parents) for task in job.tasks) == row["n_edges"], path
        assert job.recorded_makespan_s == pytest.approx(row["makespan_s"]), path


def test_real_totals(instances: list[JobDraft]) -> None:
    assert len(instances) == 142
    assert sum(len(draft.tasks) for draft in instances) == 59_105
    assert len({draft.job_id for draft in instances}) == 142
    runtimes = [task.runtime_s for draft in instances for task in draft.tasks]
    assert all(not math.isnan(r) and r >= 0 for r in runtimes)
    recorded = sum(1 for draft in instances for task in draft.tasks if task.recorded)
    assert recorded == 59_095  # the execution names a machine for all but 10 tasks
