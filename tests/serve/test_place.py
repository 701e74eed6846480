"""`place`: each top-level DAG task's template pinned to the planned node with the decision
annotation; a template two tasks share is copied so each keeps its own plan; the YAML reads
back as the same Workflow plus the plan; a file that is no Workflow is refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dagpilot.clusters import load_cluster
from dagpilot.core.errors import InvalidInput
from dagpilot.core.types import Resources
from dagpilot.serve.explanation import DECISION_ANNOTATION
from dagpilot.serve.place import place, with_free_capacity
from tests.serve.test_model_reload import SHIPPED
from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "serve" / "etl-workflow.yaml"


def test_every_task_is_pinned_to_its_planned_node() -> None:
    cluster = load_cluster("builtin:small")
    placed = yaml.safe_load(place(FIXTURE, cluster, SHIPPED))
    templates = {t["name"]: t for t in placed["spec"]["templates"]}
    tasks = {t["name"]: t for t in templates["main"]["dag"]["tasks"]}
    plan = json.loads(placed["metadata"]["annotations"][DECISION_ANNOTATION])
    assert set(plan["plan"]) == {"extract", "transform", "load"} and plan["unplanned"] == []
    assert tasks["extract"]["template"] == "work-extract"  # `work` is shared: copied
    assert tasks["load"]["template"] == "work-load" and tasks["transform"]["template"] == "heavy"
    names = {spec.name for spec in cluster.nodes}
    for task, nodes in plan["plan"].items():
        template = templates[tasks[task]["template"]]
        term = template["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert term == [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                          "values": nodes}]}]
        assert set(nodes) <= names
        note = json.loads(template["metadata"]["annotations"][DECISION_ANNOTATION])
        assert note["task"] == task and note["nodes"] == nodes and note["model"] == plan["model"]
        assert template["container"] == templates["work" if task != "transform"
                                                  else "heavy"]["container"]


def test_a_node_without_room_left_is_not_planned_on() -> None:
    cluster = load_cluster("builtin:small")
    last = next(spec.name for spec in reversed(cluster.nodes) if not spec.taints)
    held = {spec.name: spec.allocatable if spec.name != last else Resources(1.0, 2**30)
            for spec in cluster.nodes}
    free = with_free_capacity(cluster, held)
    assert [spec.allocatable.cpu == 0.0 for spec in free.nodes] == [
        spec.name != last for spec in cluster.nodes]
    placed = yaml.safe_load(place(FIXTURE, free, SHIPPED))
    plan = json.loads(placed["metadata"]["annotations"][DECISION_ANNOTATION])["plan"]
    assert plan and all(nodes == [last] for nodes in plan.values())


def test_a_file_that_is_no_workflow_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "pod.yaml"
    other.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    with pytest.raises(InvalidInput, match=r"pod\.yaml.*one Argo Workflow"):
        place(other, load_cluster("builtin:small"), SHIPPED)
