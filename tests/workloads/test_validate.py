"""`dagpilot validate`: rules on hand-written fixtures, garbage that must not crash, real traces."""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from dagpilot.core.config import ValidatorSettings
from dagpilot.core.job_draft import JobDraft, Severity, Violation
from dagpilot.core.types import Resources, Task
from dagpilot.workloads import validate as validate_module
from dagpilot.workloads.validate import (
    Report,
    Unread,
    data_files,
    report_json,
    summarize,
    validate_file,
    validate_path,
    validate_paths,
)
from dagpilot.workloads.validation.detect import Kind
from dagpilot.workloads.validation.repairs import repair_violations


@pytest.fixture(scope="module")
def here(fixtures: Path) -> Path:
    return fixtures / "validate"


def rules_and_records(violations: list[Violation]) -> list[tuple[str, str]]:
    return sorted((v.rule, v.record) for v in violations)


@pytest.mark.parametrize(("name", "expected"), [
    ("wf_valid.json", []),
    ("wf_cycle.json", [("dag.cycle", 'tasks[1] (id "b")')]),
    ("wf_missing_parent.json", [("dag.unknown-parent", 'tasks[1] (id "b")')]),
    ("wf_negative_runtime.json", [("field.runtime", 'tasks[1] (id "b")')]),
    ("wf_orphan.json", [("dag.orphan", 'tasks[2] (id "c")')]),
    ("wf_machines.json", [("field.units", "workflow.execution.machines[1]"),
                          ("field.units", "workflow.execution.tasks[1]"),
                          ("resource.node-capacity", "workflow.execution.tasks[0]")]),
    ("cws/traces/tiny.csv", [("placement.missing", "line 5 (task_id 4)"),
                             ("resource.conservation", "line 8 (task_id 7)")]),
    ("cws/cluster.json", []),
    ("metrics/node_cpu_gap.csv", [("time.gap", "line 10")]),
    ("metrics/prometheus_gap.json", [("time.gap", "data.result[1].values[2]")]),
    ("inventory/nodes.csv", []),
    ("inventory/pods.csv", [("field.runtime", "line 4"), ("resource.node-capacity", "line 3"),
                            ("resource.node-capacity", "line 5")]),
])
def test_fixture_violations(here: Path, name: str, expected: list[tuple[str, str]]) -> None:
    assert rules_and_records(validate_path(here / name)) == expected


def test_overloaded_node_is_one_line_with_the_values(here: Path) -> None:
    [overload] = [v for v in validate_path(here / "cws" / "traces" / "tiny.csv")
                  if v.rule == "resource.conservation"]
    assert overload.file == str(here / "cws" / "traces" / "tiny.csv")
    assert overload.message == ("job tiny/original/1: n2 at t=1700000015 s for 10 s: 6.0 CPUs "
                                "requested > 4.0 allocatable (peak; opened by task '7')")
    assert overload.severity is Severity.ERROR


def test_a_cws_trace_without_a_cluster_file_skips_conservation(here: Path,
                                                               tmp_path: Path) -> None:
    copy = tmp_path / "cws"
    shutil.copytree(here / "cws", copy)
    (copy / "cluster.json").unlink()
    rules = [v.rule for v in validate_path(copy / "traces" / "tiny.csv")]
    assert rules == []  # nothing to compare the placements with, and nothing else is wrong


def test_a_node_the_cluster_does_not_list_is_reported_once(here: Path, tmp_path: Path) -> None:
    copy = tmp_path / "cws"
    shutil.copytree(here / "cws", copy)
    trace = copy / "traces" / "tiny.csv"
    trace.write_text(trace.read_text().replace(",n2,", ",n9,"))
    unknown = [v for v in validate_path(trace) if v.rule == "placement.unknown-node"]
    assert [(v.record, v.message) for v in unknown] == [
        ("line 4 (task_id 3)", "node 'n9' ran 3 task(s) but is not in cluster.json")]


def test_gap_limit_comes_from_the_settings(here: Path) -> None:
    path = here / "metrics" / "node_cpu_gap.csv"
    assert validate_path(path, ValidatorSettings(max_gap_s=45.0)) == []
    assert len(validate_path(path, ValidatorSettings(max_gap_s=44.0))) == 1
    assert len(validate_path(path, ValidatorSettings(max_gap_s=10.0))) == 8  # every 15 s step


def test_report_exit_decision(here: Path) -> None:
    valid = validate_paths([here / "wf_valid.json", here / "cws" / "cluster.json"])
    assert (valid.valid, valid.exit_code, valid.violations) == (True, 0, ())
    assert valid.checked == (str(here / "wf_valid.json"), str(here / "cws" / "cluster.json"))
    invalid = validate_paths([here / "wf_valid.json", here / "wf_cycle.json"])
    assert (invalid.valid, invalid.exit_code) == (False, 1)


def test_report_as_json(here: Path) -> None:
    report = validate_paths([here / "wf_cycle.json", here / "cws"])
    document = report_json(report)
    assert json.loads(json.dumps(document)) == document
    assert (document["valid"], document["files_checked"]) == (False, 3)
    assert document["skipped"] == [{"file": str(here / "cws" / "process_dags" / "tiny.json"),
                                    "reason": report.skipped[0].reason}]
    assert document["summary"]["by_rule"] == {"dag.cycle": 1, "placement.missing": 1,
                                              "resource.conservation": 1}
    assert document["summary"]["by_file"][str(here / "wf_cycle.json")] == {"dag.cycle": 1}
    assert document["violations"][0] == {
        "file": str(here / "wf_cycle.json"), "record": 'tasks[1] (id "b")', "rule": "dag.cycle",
        "severity": "error", "message": report.violations[0].message}


def test_a_warning_alone_makes_the_data_invalid(here: Path) -> None:
    report = validate_paths([here / "wf_orphan.json"])
    assert [v.severity for v in report.violations] == [Severity.WARNING]
    assert report.exit_code == 1


def test_a_folder_is_walked_and_documentation_skipped(here: Path, tmp_path: Path) -> None:
    shutil.copy(here / "wf_valid.json", tmp_path / "a.json")
    (tmp_path / "sub").mkdir()
    shutil.copy(here / "wf_cycle.json", tmp_path / "sub" / "b.json")
    (tmp_path / "README.md").write_text("# data\n")
    (tmp_path / "LICENSE").write_text("MIT\n")
    (tmp_path / "MANIFEST.csv").write_text("path,sha256\na.json,00\n")
    (tmp_path / "notes.txt").write_text("notes\n")
    (tmp_path / "schema.json").write_text('{"$schema": "x", "type": "object"}')
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    report = validate_paths([tmp_path])
    assert report.checked == (str(tmp_path / "a.json"), str(tmp_path / "sub" / "b.json"))
    assert sorted(Path(s.file).name for s in report.skipped) == [
        "LICENSE", "MANIFEST.csv", "README.md", "notes.txt", "schema.json"]
    assert [v.rule for v in report.violations] == ["dag.cycle"]


def test_files_are_listed_in_a_stable_order(here: Path) -> None:
    files = data_files([here])
    assert files == sorted(files)
    assert here / "cws" / "traces" / "tiny.csv" in files


def test_on_file_sees_every_file(here: Path) -> None:
    seen: list[Path] = []
    validate_paths([here / "metrics"], on_file=seen.append)
    assert seen == data_files([here / "metrics"])


def test_workers_give_the_same_report(here: Path) -> None:
    paths = [here / "metrics", here / "inventory", here / "wf_cycle.json"]
    assert validate_paths(paths, workers=2) == validate_paths(paths)


@pytest.mark.parametrize(("name", "content", "rule"), [
    ("data.bin", b"\x00\x01\x02garbage\xff", "format.unknown"),
    ("table.csv", b"alpha,beta\n1,2\n", "format.unknown"),
    ("thing.json", b'{"alpha": 1}', "format.unknown"),
    ("list.json", b"[1, 2, 3]", "format.unknown"),
    ("config.yaml", b"kind: ConfigMap\nmetadata: {name: x}\n", "format.unknown"),
])
def test_unknown_data_files_are_violations(tmp_path: Path, name: str, content: bytes,
                                           rule: str) -> None:
    (tmp_path / name).write_bytes(content)
    [violation] = validate_path(tmp_path / name)
    assert (violation.file, violation.rule) == (str(tmp_path / name), rule)


GARBAGE = bytes(range(256)) * 8


@pytest.mark.parametrize("name", [
    "x.json", "x.json.gz", "x.csv", "x.csv.gz", "x.yaml", "x.yml", "x.bin", "x",
])
@pytest.mark.parametrize("content", [GARBAGE, b"", b"\x1f\x8b\x08\x00truncated"])
def test_garbage_never_crashes(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    result = validate_file(path)
    assert result.violations, "garbage must not pass as valid"
    assert {v.rule for v in result.violations} <= {"parse", "format.unknown"}
    assert all(v.file == str(path) for v in result.violations)


def test_truncated_gzip_of_a_real_format_is_a_parse_violation(here: Path,
                                                              tmp_path: Path) -> None:
    packed = gzip.compress((here / "wf_valid.json").read_bytes())
    path = tmp_path / "wf.json.gz"
    path.write_bytes(packed[: len(packed) // 2])
    [violation] = validate_path(path)
    assert violation.rule == "parse"


@pytest.mark.parametrize(("name", "text", "record"), [
    ("bad.json", '{"workflow": {"specification": ', "line 1 column 32"),
    ("bad.yaml", "kind: Workflow\nspec: [unclosed\n", "line 3"),
    ("wf.json", '{"schemaVersion": "1.5", "workflow": {"specification": {"tasks": 3}}}', ""),
])
def test_unparsable_files_name_the_record(tmp_path: Path, name: str, text: str,
                                          record: str) -> None:
    (tmp_path / name).write_text(text)
    [violation] = validate_path(tmp_path / name)
    assert violation.rule == "parse"
    assert violation.record.startswith(record)


def test_a_pod_list_with_a_broken_number_is_a_parse_violation(here: Path,
                                                              tmp_path: Path) -> None:
    shutil.copy(here / "inventory" / "nodes.csv", tmp_path / "nodes.csv")
    (tmp_path / "pods.csv").write_text("name,cpu_milli,memory_mib,num_gpu\npod-0,lots,1,0\n")
    [violation] = validate_path(tmp_path / "pods.csv")
    assert (violation.rule, violation.record) == ("parse", "line 2")
    assert "cpu_milli" in violation.message


def test_conflicting_node_inventories_are_reported_on_one_file(tmp_path: Path) -> None:
    (tmp_path / "a_nodes.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\n"
                                          "n0,32000,1024,0,\nn1,64000,2048,8,T4\n")
    (tmp_path / "b_nodes.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\n"
                                          "n0,64000,1024,2,P100\nn1,64000,2048,8,T4\n")
    report = validate_paths([tmp_path])
    [conflict] = report.violations
    assert (Path(conflict.file).name, conflict.rule) == ("b_nodes.csv", "inventory.conflict")
    assert conflict.message.startswith("1 of 2 node names shared with a_nodes.csv")


def test_a_validator_bug_is_one_internal_line_not_a_crash(here: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    def broken(*_: object) -> list[Violation]:
        raise RuntimeError("boom")

    monkeypatch.setitem(validate_module._CHECKERS, Kind.WFFORMAT, broken)
    report = validate_paths([here / "wf_valid.json", here / "metrics" / "node_cpu_gap.csv"])
    assert [(Path(v.file).name, v.rule) for v in report.violations] == [
        ("wf_valid.json", "internal"), ("node_cpu_gap.csv", "time.gap")]
    assert "RuntimeError: boom" in report.violations[0].message
    assert "validating" in caplog.text


def test_reader_repairs_are_reported_per_job() -> None:
    job = JobDraft("trace.csv", "run/1", labels=(("unrebuilt_edges", "3"), ("workflow", "x")))
    job.add(Task("a", "a", 1.0, Resources(1.0)), "line 2")
    clean = JobDraft("trace.csv", "run/2", labels=(("unrebuilt_edges", "0"),))
    [violation] = repair_violations([job, clean])
    assert (violation.record, violation.rule, violation.severity) == (
        "line 2", "dag.unrebuilt", Severity.WARNING)
    assert violation.message == ("job run/1: 3 process-level dependencies could not be rebuilt "
                                 "between tasks")


def test_a_missing_path_cannot_be_checked(tmp_path: Path) -> None:
    report = validate_paths([tmp_path / "nowhere.json"])
    assert report.unread == (Unread(str(tmp_path / "nowhere.json"), "no such file or folder"),)
    assert (report.violations, report.valid, report.exit_code) == ((), False, 2)


def test_summary_counts_by_rule_and_file() -> None:
    found = [Violation("a", "1", "dag.cycle", "m"), Violation("a", "2", "dag.orphan", "m"),
             Violation("b", "1", "dag.orphan", "m")]
    summary = summarize(found)
    assert summary.by_rule == {"dag.cycle": 1, "dag.orphan": 2}
    assert summary.by_file == {"a": 2, "b": 1}
    assert summary.by_file_and_rule == {("a", "dag.cycle"): 1, ("a", "dag.orphan"): 1,
                                        ("b", "dag.orphan"): 1}


# The real traces: every file is read, none crashes the validator, and the flaws documented in
# docs/DATA.md are found (counts that must hold as long as ../shared/traces does not change).


@pytest.fixture(scope="module")
def real(traces: Path) -> Report:
    return validate_paths([traces], workers=2)  # the CWS traces take most of the time


def per_dataset(report: Report, traces: Path) -> Counter[tuple[str, str]]:
    counts: Counter[tuple[str, str]] = Counter()
    for violation in report.violations:
        dataset = Path(violation.file).relative_to(traces).parts[0]
        counts[dataset, violation.rule] += 1
    return counts


def test_real_traces_are_all_read(real: Report, traces: Path) -> None:
    assert not [v for v in real.violations if v.rule in ("internal", "parse", "format.unknown")]
    assert len(real.checked) == 158
    skipped = {Path(s.file).relative_to(traces).as_posix(): s.reason for s in real.skipped}
    assert skipped["wfinstances/MANIFEST.csv"] == "documentation"
    assert skipped["wfinstances/schema/wfcommons-schema-1.5.json"] == "JSON schema"
    assert skipped["cws-k8s-nextflow/runs.csv"].startswith("run summary")
    assert sum("process DAG" in reason for reason in skipped.values()) == 6


def test_real_traces_known_flaws(real: Report, traces: Path) -> None:
    counts = per_dataset(real, traces)
    assert counts == Counter({
        ("alibaba-gpu-v2023", "inventory.conflict"): 1,
        ("alibaba-v2018-dags", "dag.orphan"): 267,
        ("alibaba-v2018-dags", "dag.unknown-parent"): 16,
        ("alibaba-v2018-dags", "field.instances"): 104,
        ("alibaba-v2018-dags", "field.requests"): 318,
        ("alibaba-v2018-dags", "field.runtime"): 23,
        ("alibaba-v2018-dags", "field.status"): 260,
        ("argo-examples-dags", "dag.orphan"): 4,
        ("cws-k8s-nextflow", "dag.orphan"): 4180,
        ("cws-k8s-nextflow", "placement.missing"): 7,
        ("wfinstances", "field.units"): 4,
    })


def test_real_cws_placements_respect_the_nodes(real: Report) -> None:
    # the CWS scheduler and kube-scheduler never overcommitted a node: no conservation line
    assert not [v for v in real.violations if v.rule.startswith("resource.")]
    missing = [v for v in real.violations if v.rule == "placement.missing"]
    assert Counter(Path(v.file).name for v in missing) == {
        "chipseq.csv.gz": 2, "eager.csv.gz": 4, "nanoseq.csv.gz": 1}


def test_real_helloworld_memory_is_in_kilobytes(real: Report) -> None:
    units = [v for v in real.violations if v.rule == "field.units"]
    assert {Path(v.file).parent.name for v in units} == {"helloworld"}
    assert sum("machine 'ubuntu' has memoryInBytes 196483612" in v.message for v in units) == 2
