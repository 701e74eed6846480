"""The run history: medians of recent runs, a workflow's own template before the bare name,
finished Workflows recorded into it, written and read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.serve.run_history import (
    RECENT,
    RunHistory,
    family_of,
    finished_pods,
    parse_history,
    record,
    record_file,
    write_history,
)


def history(templates: dict[str, object]) -> RunHistory:
    return parse_history(json.dumps({"version": 1, "templates": templates}).encode(), "h.json")


def test_the_expected_duration_is_the_median_of_recent_runs() -> None:
    runs = [1000.0] * 5 + [10.0, 20.0, 30.0] * 7  # the old outliers fall out of the window
    found = history({"train": runs, "etl/load": 7, "load": [3, 100]})
    assert found.expected_s("any", "train") == 20.0
    assert found.expected_s("etl", "load") == 7.0  # the family's own entry wins
    assert found.expected_s("other", "load") == 51.5
    assert found.expected_s("etl", "unknown") is None
    assert history({"x": []}).expected_s("f", "x") is None


@pytest.mark.parametrize(("document", "field"), [
    ({"templates": {}}, "version"),
    ({"version": 2, "templates": {}}, "version"),
    ({"version": 1}, "templates"),
    ({"version": 1, "templates": {"a": [-1]}}, "a"),
    ({"version": 1, "templates": {"a": ["90s"]}}, "a"),
    ({"version": 1, "templates": {"a": [True]}}, "a"),
    ({"version": 1, "templates": {"a": [1e300]}}, "a"),
    ({"version": 1, "templates": {}, "workflows": [1]}, "workflows"),
])
def test_a_bad_history_is_named(document: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_history(json.dumps(document).encode(), "h.json")
    assert caught.value.field == field


def test_the_family_is_the_template_ref_else_generate_name_else_name() -> None:
    assert family_of({"metadata": {"generateName": "etl-", "name": "etl-x7k"},
                      "spec": {"workflowTemplateRef": {"name": "nightly"}}}) == "nightly"
    assert family_of({"metadata": {"generateName": "etl-", "name": "etl-x7k"}}) == "etl"
    assert family_of({"metadata": {"name": "once"}}) == "once"
    assert family_of({"metadata": "odd"}) == ""


FINISHED = {
    "apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
    "metadata": {"name": "etl-abc", "generateName": "etl-", "uid": "uid-1"},
    "status": {"phase": "Succeeded", "nodes": {
        "etl-abc": {"type": "DAG", "phase": "Succeeded", "templateName": "main",
                    "startedAt": "2026-12-01T10:00:00Z", "finishedAt": "2026-12-01T10:05:00Z"},
        "etl-1": {"type": "Pod", "phase": "Succeeded", "templateName": "work",
                  "startedAt": "2026-12-01T10:00:00Z", "finishedAt": "2026-12-01T10:01:30Z"},
        "etl-2": {"type": "Pod", "phase": "Succeeded", "templateName": "work",
                  "startedAt": "2026-12-01T10:01:30Z", "finishedAt": "2026-12-01T10:03:30Z"},
        "etl-3": {"type": "Pod", "phase": "Failed", "templateName": "flaky",
                  "startedAt": "2026-12-01T10:00:00Z", "finishedAt": "2026-12-01T10:00:09Z"},
        "etl-4": {"type": "Pod", "phase": "Succeeded", "templateName": "clock-skew",
                  "startedAt": "2026-12-01T10:00:09Z", "finishedAt": "2026-12-01T10:00:00Z"}}}}


def test_a_finished_workflow_records_its_succeeded_pods() -> None:
    assert finished_pods(FINISHED) == [("work", 90.0), ("work", 120.0)]
    updated = record(history({"work": [10.0]}), FINISHED)
    assert updated.templates == {"work": (10.0, 90.0, 120.0), "etl/work": (90.0, 120.0)}
    assert updated.expected_s("etl", "work") == 105.0
    assert updated.workflows == ("uid-1",)
    assert record(updated, FINISHED) is updated  # a Workflow counts once
    assert finished_pods({"status": {"nodes": []}}) == []


def test_only_the_recent_runs_are_kept() -> None:
    many = history({"work": [1.0] * RECENT})
    assert record(many, FINISHED).templates["work"] == (1.0,) * (RECENT - 2) + (90.0, 120.0)


def test_written_history_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    written = record(history({}), FINISHED)
    write_history(path, written)
    assert parse_history(path.read_bytes(), str(path)) == written
    assert [p.name for p in tmp_path.iterdir()] == ["history.json"]  # no scratch file left


def test_kubectls_list_is_recorded_once_per_workflow(tmp_path: Path) -> None:
    path, listing = tmp_path / "history.json", tmp_path / "workflows.json"
    running = {**FINISHED, "metadata": {"name": "etl-r", "uid": "uid-2"},
               "status": {**FINISHED["status"], "phase": "Running"}}
    listing.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                   "items": [FINISHED, running]}))
    history, new = record_file(path, listing)
    assert new == 1 and history.templates["work"] == (90.0, 120.0)
    history, new = record_file(path, listing)
    assert new == 0 and history.templates["work"] == (90.0, 120.0)
    listing.write_text(json.dumps({**FINISHED, "metadata": {"name": "etl-x", "uid": "uid-3"}}))
    history, new = record_file(path, listing)
    assert new == 1 and parse_history(path.read_bytes(), "h").workflows == ("uid-1", "uid-3")


@pytest.mark.parametrize("document", [[], {"kind": "List", "items": "x"}])
def test_a_listing_that_is_no_workflows_is_named(tmp_path: Path, document: object) -> None:
    listing = tmp_path / "workflows.json"
    listing.write_text(json.dumps(document))
    with pytest.raises(InvalidInput) as caught:
        record_file(tmp_path / "history.json", listing)
    assert caught.value.file == str(listing)
    assert not (tmp_path / "history.json").exists()


def test_dagpilot_serve_record(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from dagpilot.cli import app
    listing = tmp_path / "workflows.json"
    listing.write_text(json.dumps({"kind": "List", "items": [FINISHED]}))
    result = CliRunner().invoke(app, ["serve", "record", str(listing), "--history",
                                      str(tmp_path / "h.json")])
    assert result.exit_code == 0, result.output
    assert "1 Workflow(s) recorded; 2 templates" in result.output
