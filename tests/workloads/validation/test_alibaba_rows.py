"""Alibaba v2018 rows the reader repairs: missing requests and counts, unended durations."""

from __future__ import annotations

from pathlib import Path

from dagpilot.workloads.validate import validate_path
from dagpilot.workloads.validation.alibaba_rows import row_violations


def test_row_flaws(fixtures: Path) -> None:
    found = row_violations(fixtures / "validate" / "alibaba" / "batch_task.csv")
    assert [(v.record, v.rule) for v in found] == [
        ("line 5", "field.requests"), ("line 5", "field.requests"), ("line 5", "field.instances"),
        ("line 7", "field.runtime")]
    assert found[0].message == ("j_2 R3_2 Waiting: plan_cpu is missing: the reader uses the "
                                "settings default")
    assert found[3].message.endswith("not a runtime (mean_instance_duration 5000)")


def test_with_the_reader_the_dropped_parent_and_unfinished_jobs_are_reported(
        fixtures: Path) -> None:
    found = validate_path(fixtures / "validate" / "alibaba" / "batch_task.csv")
    rules = sorted((v.rule, v.message.split(":")[0]) for v in found
                   if v.rule in ("dag.unknown-parent", "field.status"))
    assert rules == [("dag.unknown-parent", "job batch_task/j_2"),
                     ("field.status", "job batch_task/j_2"),
                     ("field.status", "job batch_task/j_3")]


def test_an_unreadable_file_is_left_to_the_reader(tmp_path: Path) -> None:
    path = tmp_path / "x.csv.gz"
    path.write_bytes(b"\x1f\x8b broken")
    assert row_violations(path) == []
