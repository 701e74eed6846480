"""Hostile and careless values inside trace files: every one a clear InvalidInput (or SpecError)
naming file, record and field, never a traceback, an overflow or a silently wrong job.

Regression tests of issue 14, defects 1 (non-finite and huge numbers), 3 (counts) and 13
(Unicode digits, negative bytes, NaN times, negative CPU figures, an end before a start,
duplicated and short CSV rows, control characters, unbounded reprs)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput, SpecError
from dagpilot.core.job_draft import build
from dagpilot.workloads import alibaba, cws, cws_runs, load, tpch, wfformat
from dagpilot.workloads.alibaba import TaskName, parse_task_name
from dagpilot.workloads.cws_edges import TooManyEdges, TracedTask, rebuild

SETTINGS = LoaderSettings()
MESSAGE_LIMIT = 400  # whatever the input, an error stays one readable line


def located(error: InvalidInput) -> tuple[str, str]:
    return error.record, error.field


# --- wfformat ------------------------------------------------------------------------------

def wf_instance(task: dict[str, Any], files: list[dict[str, Any]] | None = None) -> str:
    """A one-task WfFormat 1.5 instance whose execution records `task` (NaN and Infinity written
    as Python's json writes them, which is how its reader reads them back)."""
    document = {"name": "w", "schemaVersion": "1.5", "workflow": {
        "specification": {"tasks": [{"id": "a", "name": "a", "parents": [], "children": [],
                                     "inputFiles": [f["id"] for f in files or []],
                                     "outputFiles": []}],
                          "files": files or []},
        "execution": {"makespanInSeconds": 10.0,
                      "tasks": [{"id": "a", "runtimeInSeconds": 10.0, **task}]}}}
    return json.dumps(document)


BAD_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e400", "1" + "0" * 400]


@pytest.mark.parametrize("field", ["readBytes", "writtenBytes", "memoryInBytes", "coreCount",
                                   "avgCPU", "runtimeInSeconds"])
@pytest.mark.parametrize("literal", BAD_NUMBERS)
def test_wfformat_numbers_are_finite(tmp_path: Path, field: str, literal: str) -> None:
    path = tmp_path / "w.json"
    path.write_text(wf_instance({field: "PLACEHOLDER"}).replace('"PLACEHOLDER"', literal))
    with pytest.raises(InvalidInput) as caught:
        wfformat.read(str(path), SETTINGS)
    assert located(caught.value) == ('execution.tasks[0] (id "a")', field)
    assert len(str(caught.value)) < MESSAGE_LIMIT


@pytest.mark.parametrize("literal", [*BAD_NUMBERS, "-5"])
def test_wfformat_file_sizes_are_finite_and_not_negative(tmp_path: Path, literal: str) -> None:
    path = tmp_path / "w.json"
    text = wf_instance({}, files=[{"id": "f", "sizeInBytes": "PLACEHOLDER"}])
    path.write_text(text.replace('"PLACEHOLDER"', literal))
    with pytest.raises(InvalidInput) as caught:
        wfformat.read(str(path), SETTINGS)
    assert located(caught.value) == ('files[0] (id "f")', "sizeInBytes")


@pytest.mark.parametrize(("field", "value"), [("readBytes", -1), ("writtenBytes", -2.5),
                                              ("avgCPU", -10.0)])
def test_wfformat_negative_bytes_and_cpu_are_refused(tmp_path: Path, field: str,
                                                     value: float) -> None:
    path = tmp_path / "w.json"
    path.write_text(wf_instance({field: value}))
    with pytest.raises(InvalidInput, match="negative") as caught:
        wfformat.read(str(path), SETTINGS)
    assert caught.value.field == field


def test_wfformat_files_adding_up_beyond_the_limit(tmp_path: Path) -> None:
    files = [{"id": f"f{i}", "sizeInBytes": 2**52} for i in range(4)]
    path = tmp_path / "w.json"
    path.write_text(wf_instance({}, files=files))
    with pytest.raises(InvalidInput, match="add up") as caught:
        wfformat.read(str(path), SETTINGS)
    assert caught.value.field == "inputFiles"


def test_wfformat_flat_layout_memory_in_kb(tmp_path: Path) -> None:
    document = {"name": "w", "schemaVersion": "1.4", "workflow": {"tasks": [
        {"name": "a", "id": "a", "runtimeInSeconds": 1.0, "memory": "PLACEHOLDER"}]}}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(document).replace('"PLACEHOLDER"', "Infinity"))
    with pytest.raises(InvalidInput) as caught:
        wfformat.read(str(path), SETTINGS)
    assert located(caught.value) == ('tasks[0] (id "a")', "memory")


def test_wfformat_task_ids_print_without_terminal_escapes(tmp_path: Path) -> None:
    document = json.loads(wf_instance({}))
    document["workflow"]["specification"]["tasks"][0]["parents"] = ["\x1b[2J\x1b]0;pwned\x07"]
    path = tmp_path / "esc\x1b[31m.json"
    path.write_text(json.dumps(document))
    with pytest.raises(InvalidInput) as caught:
        build(wfformat.read(str(path), SETTINGS)[0])
    assert "\x1b" not in str(caught.value) and "\x07" not in str(caught.value)


# --- tpch ----------------------------------------------------------------------------------

def tpch_file(tmp_path: Path, waves: dict[str, Any]) -> Path:
    document = {"2g": {"1": {"num_stages": 1, "edges": [], "stage_id_to_node_idx": {"0": 0},
                             "stages": [{"num_tasks": 1, "first_wave": waves,
                                         "rest_wave": {}}]}}}
    path = tmp_path / "tpch.json"
    path.write_text(json.dumps(document).replace('"PLACEHOLDER"', "NaN"))
    return path


@pytest.mark.parametrize("count", ["²", "٣", " 2", "1" * 30])
def test_tpch_executor_counts_are_ascii_digits(tmp_path: Path, count: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        tpch.read(str(tpch_file(tmp_path, {count: [1000]})), SETTINGS)
    assert caught.value.field == "first_wave"


@pytest.mark.parametrize("duration", ["PLACEHOLDER", 10**400, 1e300])
def test_tpch_durations_are_finite(tmp_path: Path, duration: Any) -> None:
    with pytest.raises(InvalidInput) as caught:
        tpch.read(str(tpch_file(tmp_path, {"2": [duration]})), SETTINGS)
    assert located(caught.value) == ("$.2g.1.stages[0].first_wave.2[0]", "first_wave")


# --- CWS -----------------------------------------------------------------------------------

TOY_ROW = ("original,1,1,node2,ab/000001,TOY:INPUT_CHECK,samplesheet.csv,"
           '"TOY:INPUT_CHECK (samplesheet.csv)",COMPLETED,0,1,2147483648,1,1700000000000,'
           "1700000002000,1700000004000,4000,1700,95.0,3000000,10000,5000,0,4096")
TOY_HEADER = ("strategy,rep,task_id,hostname,hash,process,tag,name,status,exit,cpus,memory,"
              "attempt,submit,start,complete,duration,realtime,%cpu,peak_rss,rchar,wchar,"
              "read_bytes,write_bytes")
TOY_COLUMNS = TOY_HEADER.split(",")


def toy_with(fixtures: Path, tmp_path: Path, column: str, value: str) -> Path:
    """A copy of the toy CWS folder whose first `original` row has `value` in `column`."""
    folder = tmp_path / "cws"
    shutil.copytree(fixtures / "cws", folder)
    trace = folder / "traces" / "toy.csv"
    text = trace.read_text()
    assert TOY_ROW in text
    fields = TOY_ROW.replace('"TOY:INPUT_CHECK (samplesheet.csv)"', "NAME").split(",")
    fields[TOY_COLUMNS.index(column)] = value
    row = ",".join(fields).replace("NAME", '"TOY:INPUT_CHECK (samplesheet.csv)"')
    trace.write_text(text.replace(TOY_ROW, row))
    return folder


@pytest.mark.parametrize("column", ["memory", "read_bytes", "write_bytes", "peak_rss", "cpus",
                                    "%cpu", "realtime", "submit", "complete"])
@pytest.mark.parametrize("value", ["inf", "nan", "-inf", "1e400", "Infinity"])
def test_cws_numbers_are_finite(fixtures: Path, tmp_path: Path, column: str, value: str) -> None:
    folder = toy_with(fixtures, tmp_path, column, value)
    with pytest.raises(InvalidInput, match="not a finite number") as caught:
        cws.read(str(folder), SETTINGS)
    assert located(caught.value) == ("line 19", column)


@pytest.mark.parametrize(("column", "value", "message"), [
    ("read_bytes", "-5", "below the minimum 0"),
    ("peak_rss", "9e18", "beyond the limit"),
    ("%cpu", "-1", "below the minimum 0"),
    ("submit", "-1", "below the minimum 0"),
    ("memory", "1e300", "beyond the limit"),
    ("start", "1699999999000", "start 1699999999000 is before submit"),
    ("complete", "1700000001000", "complete 1700000001000 is before start"),
])
def test_cws_ranges_and_event_order(fixtures: Path, tmp_path: Path, column: str, value: str,
                                    message: str) -> None:
    folder = toy_with(fixtures, tmp_path, column, value)
    with pytest.raises(InvalidInput, match=message) as caught:
        cws.read(str(folder), SETTINGS)
    assert located(caught.value) == ("line 19", column)


@pytest.mark.parametrize(("change", "record", "field"), [
    (lambda text: text.replace(",peak_rss,", ",cpus,", 1), "header (line 1)", "cpus"),
    (lambda text: text.replace(TOY_ROW, TOY_ROW.rsplit(",", 3)[0]), "line 19", "wchar"),
])
def test_cws_duplicated_columns_and_short_rows(fixtures: Path, tmp_path: Path, change: Any,
                                               record: str, field: str) -> None:
    folder = toy_with(fixtures, tmp_path, "rep", "1")
    trace = folder / "traces" / "toy.csv"
    trace.write_text(change(trace.read_text()))
    with pytest.raises(InvalidInput) as caught:
        cws.read(str(folder), SETTINGS)
    assert located(caught.value) == (record, field)


@pytest.mark.parametrize(("old", "new", "field"), [
    (",50.0\n", ",inf\n", "makespan_s"),
    (",50.0\n", ",-3\n", "makespan_s"),
    ("toy,original,1,17,", "toy,original,1,1e300,", "n_tasks"),
])
def test_cws_runs_numbers(fixtures: Path, tmp_path: Path, old: str, new: str,
                          field: str) -> None:
    path = tmp_path / "runs.csv"
    path.write_text((fixtures / "cws" / "runs.csv").read_text().replace(old, new, 1))
    with pytest.raises(InvalidInput) as caught:
        cws_runs.read_runs(path)
    assert caught.value.field == field


# --- Alibaba -------------------------------------------------------------------------------

ALIBABA_HEADER = ("job_name,task_name,instance_num,status,start_time,end_time,"
                  "mean_instance_duration,plan_cpu,plan_mem\n")


def alibaba_file(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "batch_task.csv"
    path.write_text(ALIBABA_HEADER + "".join(row + "\n" for row in rows))
    return path


@pytest.mark.parametrize(("row", "field", "message"), [
    ("j,M1,1,Terminated,1,2,1,100,1e308", "plan_mem", "beyond the limit 100"),
    ("j,M1,9223372036854775808,Terminated,1,2,1,100,1", "instance_num", "beyond the limit"),
    ("j,M1,1000001,Terminated,1,2,1,100,1", "instance_num",
     "1000001 is beyond the limit 1000000"),
    ("j,M1,1,Terminated,nan,2,1,100,1", "start_time", "not a finite number"),
    ("j,M1,1,Terminated,,2,1,100,1", "start_time", "missing"),
    ("j,M1,1,Terminated,1,inf,1,100,1", "end_time", "not a finite number"),
    ("j,M1,1,Terminated,-5,2,1,100,1", "start_time", "below the minimum 0"),
    ("j,M1,1,Terminated,1,2,1e400,100,1", "mean_instance_duration", "not a finite number"),
    ("j,M1,1,Terminated,1,2,1,1e300,1", "plan_cpu", "beyond the limit"),
    ("j,M1,1,Terminated,20,10,1,100,1", "end_time", "ends \\(10\\) before it starts \\(20\\)"),
])
def test_alibaba_numbers(tmp_path: Path, row: str, field: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message) as caught:
        alibaba.read(str(alibaba_file(tmp_path, "j,M2_1,1,Terminated,1,2,1,100,1", row)),
                     SETTINGS)
    assert located(caught.value) == ("line 3", field)


def test_alibaba_invalid_markers_take_the_defaults(tmp_path: Path) -> None:
    path = alibaba_file(tmp_path, "j,M1,1,Terminated,1,2,1,-1,101", "j,M2_1,1,Terminated,1,2,1,"
                        "100,-1")
    job = build(alibaba.read(str(path), SETTINGS)[0])
    assert job.task("M1").requests.cpu == SETTINGS.default_cpu
    assert {t.requests.memory for t in job.tasks} == {SETTINGS.default_memory}


@pytest.mark.parametrize(("text", "record", "field"), [
    (ALIBABA_HEADER.replace("plan_cpu", "status") + "j,M1,1,Terminated,1,2,1,100,1\n",
     "header (line 1)", "status"),
    (ALIBABA_HEADER + "j,M1,1,Terminated,1,2,1,100,1\nj,M2_1,1,Terminated,1,2\n", "line 3",
     "mean_instance_duration"),
])
def test_alibaba_duplicated_columns_and_short_rows(tmp_path: Path, text: str, record: str,
                                                   field: str) -> None:
    path = tmp_path / "batch_task.csv"
    path.write_text(text)
    with pytest.raises(InvalidInput) as caught:
        alibaba.read(str(path), SETTINGS)
    assert located(caught.value) == (record, field)


@pytest.mark.parametrize(("name", "parsed"), [
    ("M2_²", TaskName(2)),  # "²".isdigit() is True, int("²") raises
    ("M٣_1", TaskName(None)),  # an Arabic-Indic digit is not a task number
    ("M1_٣", TaskName(1)),
    ("M" + "9" * 5000 + "_1", TaskName(None)),  # int() refuses 4,301 digits
    ("M3_" + "1" * 5000 + "_2", TaskName(3, (2,))),
    ("M3_1_2", TaskName(3, (1, 2))),
])
def test_alibaba_task_names_use_ascii_digits(name: str, parsed: TaskName) -> None:
    assert parse_task_name(name) == parsed


# --- built-in specs ------------------------------------------------------------------------

@pytest.mark.parametrize("spec", ["builtin:mix:²", "builtin:mix:٣", "builtin:mix:1_0",
                                  "builtin:mix: 5", "builtin:mix:" + "9" * 5000])
def test_builtin_job_counts_are_ascii_digits(spec: str) -> None:
    with pytest.raises(SpecError, match="job count") as caught:
        load(spec)
    assert len(str(caught.value)) < MESSAGE_LIMIT


# --- CWS: what one trace may rebuild to ----------------------------------------------------

def test_cws_dependencies_have_a_ceiling(fixtures: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cws, "MAX_EDGES", 20)  # the toy's first run keeps 25
    with pytest.raises(InvalidInput, match="beyond the limit of 20") as caught:
        cws.read(str(fixtures / "cws"), SETTINGS)
    assert caught.value.record == "run fifo_fair/2"


def test_cws_rows_have_a_ceiling(fixtures: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cws, "MAX_ROWS", 10)
    with pytest.raises(InvalidInput, match="more than 10 tasks") as caught:
        cws.read(str(fixtures / "cws"), SETTINGS)
    assert caught.value.record == "line 12"


def test_a_broadcast_stops_at_the_limit_it_is_given() -> None:
    # 2,000 x 2,000 repeated rows would link 4,000,000 times; the rebuild stops past 10,000.
    parents = [TracedTask(f"a{i}", "A", "-") for i in range(2000)]
    children = [TracedTask(f"b{i}", "B", "-") for i in range(2000)]
    with pytest.raises(TooManyEdges):
        rebuild([*parents, *children], {"B": ("A",)}, limit=10_000)
    kept, _ = rebuild([*parents[:3], *children[:3]], {"B": ("A",)}, limit=9)
    assert sum(map(len, kept.values())) == 9


def test_repeated_rows_share_one_parents_tuple(fixtures: Path, tmp_path: Path) -> None:
    # 200 copies of one row: its parents once, not copied per row (copies of a list that grows
    # with every copy made the fuzzer's MemoryError); the DAG rules then refuse the repeated id.
    folder = toy_with(fixtures, tmp_path, "rep", "1")
    trace = folder / "traces" / "toy.csv"
    lines = trace.read_text().splitlines()
    repeated = next(line for line in lines if line.startswith("original,1,8,"))
    trace.write_text("\n".join([*lines, *[repeated] * 200]) + "\n")
    run = next(d for d in cws.read(str(folder), SETTINGS) if d.job_id == "toy/original/1")
    copies = [task.parents for task in run.tasks if task.id == "8"]
    assert len(copies) == 201 and all(parents is copies[0] for parents in copies)
    with pytest.raises(InvalidInput, match="task id '8' also at"):
        build(run)
