"""Workflow objects -> Job through the Argo loader, Argo node names -> task ids, finished tasks."""

from __future__ import annotations

import copy

import pytest

from dagpilot.core.config import LoaderSettings
from dagpilot.live.workflows import WorkflowDecoder, task_of_node
from dagpilot.workloads.argo_expand import expand
from dagpilot.workloads.argo_manifest import Library, Where, read_manifest
from tests.live.objects import CREATED_S, DIAMOND_SPEC, workflow


def test_the_job_is_what_the_file_loader_reads_from_the_same_manifest() -> None:
    record = WorkflowDecoder()(workflow())
    assert record.error is None and record.job is not None
    manifest = read_manifest(workflow(), Where("file.yaml", "document 1"))
    assert manifest is not None
    draft = expand(manifest, "x", Library([]), {}, LoaderSettings())
    assert [t.id for t in record.job.tasks] == [t.id for t in draft.tasks]
    assert record.job.id == "ns/diamond" and record.job.arrival_s == CREATED_S
    assert record.job.task("d").parents == ("b(0)", "b(1)", "c")


@pytest.mark.parametrize(("node", "task", "attempt"), [
    ("diamond.a", "a", 0),
    ("diamond.b(1:y)", "b(1)", 0),
    ("diamond.b(0:{\"k\":\"(v)\"})", "b(0)", 0),  # an item with parentheses of its own
    ("diamond.c(2)", "c", 2),  # the third attempt of a retried task
    ("diamond", None, 0),  # the workflow's own node
    ("diamond.onExit", None, 0),
    ("other.a", None, 0),
])
def test_argo_node_names_map_to_the_loaders_task_ids(node: str, task: str | None,
                                                    attempt: int) -> None:
    record = WorkflowDecoder()(workflow())
    assert task_of_node(record, node) == (task, attempt)


def test_steps_node_names_map_too() -> None:
    spec = {"entrypoint": "main", "templates": [
        {"name": "main", "steps": [[{"name": "one", "template": "work"}],
                                   [{"name": "two", "template": "work"}]]},
        {"name": "work", "container": {"image": "x"}}]}
    record = WorkflowDecoder()(workflow("st", spec=spec))
    assert task_of_node(record, "st[1].two") == ("[1].two", 0)


def test_finished_tasks_are_the_succeeded_pod_and_retry_nodes() -> None:
    record = WorkflowDecoder()(workflow(nodes={
        "diamond": ("DAG", "Running"), "diamond.a": ("Pod", "Succeeded"),
        "diamond.b(0:x)": ("Pod", "Succeeded"), "diamond.b(1:y)": ("Pod", "Running"),
        "diamond.c": ("Retry", "Succeeded"), "diamond.c(0)": ("Pod", "Failed"),
        "diamond.c(1)": ("Pod", "Succeeded")}))
    assert record.finished == {"a", "b(0)", "c"}


def test_a_dag_that_does_not_parse_is_a_record_with_the_loaders_error() -> None:
    spec = copy.deepcopy(DIAMOND_SPEC)
    spec["templates"][0]["dag"]["tasks"][0]["dependencies"] = ["d"]  # a cycle
    record = WorkflowDecoder()(workflow(spec=spec))
    assert record.job is None and record.error is not None
    assert "workflow ns/diamond" in str(record.error) and "cycle" in str(record.error)
    assert record.finished == frozenset() and task_of_node(record, "diamond.a") == (None, 0)


def test_the_job_is_parsed_again_only_when_the_spec_changes() -> None:
    decode = WorkflowDecoder()
    first = decode(workflow(version=1))
    status_moved = decode(workflow(version=2, nodes={"diamond.a": ("Pod", "Succeeded")}))
    assert status_moved.job is first.job and status_moved.finished == {"a"}
    spec = copy.deepcopy(DIAMOND_SPEC)
    spec["templates"][0]["dag"]["tasks"].pop()  # d removed
    changed = decode(workflow(version=3, spec=spec))
    assert changed.job is not first.job and changed.job is not None
    assert "d" not in changed.job.index


def test_a_workflow_of_a_template_is_read_with_the_spec_argo_stored() -> None:
    raw = workflow(spec={"workflowTemplateRef": {"name": "diamond-template"}})
    assert WorkflowDecoder()(raw).job is None  # Argo has not stored the template yet
    raw["status"]["storedWorkflowTemplateSpec"] = copy.deepcopy(DIAMOND_SPEC)
    record = WorkflowDecoder()(raw)
    assert record.job is not None and len(record.job.tasks) == 5
