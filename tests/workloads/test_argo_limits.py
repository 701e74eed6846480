"""Hostile Argo manifests: non-finite quantities, priorities beyond int32, counts beyond their
ceilings, deep expressions and template chains, odd kinds and annotations. Each is refused,
quickly and before anything is unrolled, with an InvalidInput naming file, record and field.

Regression tests of issue 14, defects 1, 2 (depends expressions), 3 (counts), 12 and 13."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import build
from dagpilot.workloads import argo, argo_digest, argo_expand
from dagpilot.workloads.argo_expand import expand
from dagpilot.workloads.argo_limits import (
    MAX_FAN_OUT,
    MAX_TEMPLATE_DEPTH,
    Budget,
)
from dagpilot.workloads.argo_manifest import Library, Where, read_manifest

SETTINGS = LoaderSettings()
MESSAGE_LIMIT = 400


def workflow(tasks: list[dict[str, Any]], *, spec: dict[str, Any] | None = None,
             templates: list[dict[str, Any]] | None = None,
             metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A Workflow whose entrypoint DAG has `tasks`, each calling the container template `c`."""
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
            "metadata": {"name": "w", **(metadata or {})},
            "spec": {"entrypoint": "main", **(spec or {}), "templates": [
                {"name": "main", "dag": {"tasks": tasks}},
                {"name": "c", "container": {"image": "busybox"}},
                *(templates or [])]}}


def task(name: str = "A", **fields: Any) -> dict[str, Any]:
    return {"name": name, "template": "c", **fields}


def refused(tmp_path: Path, document: dict[str, Any] | str) -> InvalidInput:
    path = tmp_path / "w.yaml"
    path.write_text(document if isinstance(document, str) else yaml.safe_dump(document))
    with pytest.raises(InvalidInput) as caught:
        [build(draft) for draft in argo.read(str(path), SETTINGS)]
    assert caught.value.file == str(path)
    assert len(str(caught.value)) < MESSAGE_LIMIT
    return caught.value


def container(resources: dict[str, Any]) -> dict[str, Any]:
    return {"name": "c", "container": {"image": "busybox", "resources": resources}}


@pytest.mark.parametrize(("amount", "message"), [
    ("1e999", "finite"), (float("inf"), "finite"), (float("nan"), "finite"),
    ("-1", "below the minimum 0"), ("1e300", "beyond the limit"), ("9" * 400, "finite"),
])
@pytest.mark.parametrize("resource", ["cpu", "memory", "nvidia.com/gpu"])
def test_resource_amounts_are_finite_and_in_range(tmp_path: Path, resource: str, amount: Any,
                                                  message: str) -> None:
    document = workflow([task()])
    document["spec"]["templates"][1] = container({"limits": {resource: amount}})
    error = refused(tmp_path, document)
    assert message in error.message
    assert error.field == f"container.resources.limits.{resource}"


@pytest.mark.parametrize(("place", "value"), [
    ("spec.priority", 2**63), ("spec.priority", 2**31), ("spec.priority", -(2**31) - 1),
    ("spec.podPriority", 2**40), ("priority", 10**30), ("spec.priority", 1.5),
])
def test_priorities_are_int32(tmp_path: Path, place: str, value: Any) -> None:
    document = workflow([task()])
    if place == "priority":
        document["spec"]["templates"][1]["priority"] = value
    else:
        document["spec"][place.removeprefix("spec.")] = value
    assert refused(tmp_path, document).field == place


def test_int32_priorities_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(workflow([task()], spec={"priority": 2**31 - 1,
                                                              "podPriority": -(2**31)})))
    job = build(argo.read(str(path), SETTINGS)[0])
    assert job.priority == 2**31 - 1
    assert job.task("A").priority == -(2**31)


@pytest.mark.parametrize(("sequence", "field"), [
    ({"count": float("inf")}, "withSequence.count"),
    ({"count": float("nan")}, "withSequence.count"),
    ({"count": 10**30}, "withSequence.count"),
    ({"count": [1]}, "withSequence.count"),
    ({"count": "1000000000"}, "withSequence"),  # hung before: a billion tasks
    ({"count": MAX_FAN_OUT + 1}, "withSequence"),
    ({"start": "0", "end": "999999999999"}, "withSequence"),
    ({"start": 0, "end": 10**30}, "withSequence.end"),
])
def test_sequence_counts_have_a_ceiling(tmp_path: Path, sequence: dict[str, Any],
                                        field: str) -> None:
    error = refused(tmp_path, workflow([task(withSequence=sequence)]))
    assert (error.record, error.field) == ("document 1, template 'main', task 'A'", field)


def test_a_sequence_counted_at_run_time_takes_the_fan_out_annotation(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(workflow(
        [task(withSequence={"count": "{{inputs.parameters.n}}"})],
        metadata={"annotations": {"dagpilot.io/fan-out": "3"}})))
    assert len(build(argo.read(str(path), SETTINGS)[0]).tasks) == 3


@pytest.mark.parametrize("value", ["²", "٣", "1_0", str(MAX_FAN_OUT + 1), "-1", "9" * 5000])
def test_fan_out_annotations_are_ascii_counts_within_the_ceiling(tmp_path: Path,
                                                                 value: str) -> None:
    document = workflow([task(withParam="{{tasks.x.outputs.result}}")],
                        metadata={"annotations": {"dagpilot.io/fan-out": value}})
    assert refused(tmp_path, document).field == "metadata.annotations.dagpilot.io/fan-out"


def test_literal_with_param_beyond_the_ceiling(tmp_path: Path) -> None:
    items = json.dumps(list(range(MAX_FAN_OUT + 1)))
    assert refused(tmp_path, workflow([task(withParam=items)])).field == "withParam"


def test_nested_fan_outs_stop_at_the_file_budget() -> None:
    # 300 x 300 pods: each count is within MAX_FAN_OUT, the product is not within this budget.
    document = workflow([task(template="inner", withItems=list(range(300)))], templates=[
        {"name": "inner", "dag": {"tasks": [task(withSequence={"count": 300})]}}])
    manifest = read_manifest(document, Where("w.yaml", "document 1"))
    assert manifest is not None
    with pytest.raises(InvalidInput, match=r"more than .* Argo nodes"):
        expand(manifest, "w", Library([]), {}, SETTINGS, budget=Budget(nodes=10_000))


def test_a_fan_in_of_fan_outs_stops_at_the_edge_budget() -> None:
    document = workflow([task("A", withItems=list(range(200))),
                         task("B", depends="A", withItems=list(range(200)))])
    manifest = read_manifest(document, Where("w.yaml", "document 1"))
    assert manifest is not None
    with pytest.raises(InvalidInput, match="dependencies between pods"):
        expand(manifest, "w", Library([]), {}, SETTINGS, budget=Budget(edges=10_000))


def test_workflows_of_one_file_share_its_budget() -> None:
    budget = Budget(nodes=5)
    manifest = read_manifest(workflow([task("A"), task("B")]), Where("w.yaml", "document 1"))
    assert manifest is not None
    expand(manifest, "w1", Library([]), {}, SETTINGS, budget=budget)  # the DAG and two pods
    assert budget.nodes == 2
    with pytest.raises(InvalidInput, match="Argo nodes"):
        expand(manifest, "w2", Library([]), {}, SETTINGS, budget=budget)


def test_template_chains_deeper_than_argo_allows(tmp_path: Path) -> None:
    chain = [{"name": f"t{i}", "steps": [[{"name": "s", "template": f"t{i + 1}"}]]}
             for i in range(MAX_TEMPLATE_DEPTH + 20)]
    chain.append({"name": f"t{MAX_TEMPLATE_DEPTH + 20}", "container": {"image": "x"}})
    document = workflow([task(template="t0")], templates=chain)
    error = refused(tmp_path, document)
    assert error.field == "template" and "deep" in error.message


@pytest.mark.parametrize("expression", ["(" * 3000 + "A" + ")" * 3000,
                                        "(" * 101 + "A" + ")" * 101])
def test_deep_depends_expressions_are_refused(tmp_path: Path, expression: str) -> None:
    error = refused(tmp_path, workflow([task("A"), task("B", depends=expression)]))
    assert (error.field, "nested deeper than 100" in error.message) == ("depends", True)


def test_a_long_run_of_not_is_read_without_recursion(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(workflow([task("A"), task("B", depends="!" * 5000 + "A")])))
    job = build(argo.read(str(path), SETTINGS)[0])
    assert job.task("B").parents == ("A",)


@pytest.mark.parametrize("kind", ["[Workflow]", "{a: 1}", "7"])
def test_a_kind_that_is_no_name(tmp_path: Path, kind: str) -> None:
    text = f"kind: {kind}\nmetadata: {{name: w}}\nspec: {{entrypoint: a}}\n"
    assert refused(tmp_path, text).field == "kind"


def test_annotations_are_strings(tmp_path: Path) -> None:
    document = workflow([task()], metadata={"annotations": {"note": ["a", "b"], "n": 3}})
    assert refused(tmp_path, document).field == "metadata.annotations.'note'"


def test_messages_do_not_echo_whole_values(tmp_path: Path) -> None:
    document = workflow([task()])
    document["spec"]["templates"][1] = container({"requests": {"memory": list(range(5000))}})
    error = refused(tmp_path, document)
    assert error.field == "container.resources.requests.memory"


# --- the examples digest -------------------------------------------------------------------

def digest(tmp_path: Path, items: Any) -> Path:
    document = {"workflows": [{"file": "examples/x.yaml", "kind": "Workflow", "name": "x",
                               "entrypoint": "d", "templates": [
                                   {"name": "d", "type": "dag", "tasks": [
                                       {"name": "A", "template": "c", "withItems": items}]},
                                   {"name": "c", "type": "container", "image": "busybox"}]}]}
    path = tmp_path / "digest.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("items", [10**8, 2**63, MAX_FAN_OUT + 1, -1])
def test_digest_item_counts_are_checked_before_a_list_is_made(tmp_path: Path,
                                                              items: int) -> None:
    with pytest.raises(InvalidInput) as caught:
        argo.read(str(digest(tmp_path, items)), SETTINGS)
    assert (caught.value.record, caught.value.field) == (
        "workflows[0] (examples/x.yaml), template 'd', task 'A'", "withItems")


def test_digest_item_counts_within_the_ceiling(tmp_path: Path) -> None:
    job = build(argo.read(str(digest(tmp_path, 3)), SETTINGS)[0])
    assert [t.id for t in job.tasks] == ["A(0)", "A(1)", "A(2)"]


# --- work that must not grow with the product of two sizes ---------------------------------

def test_a_template_run_by_many_items_is_read_once(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = argo_expand.pod

    def counted(template: Any, *args: Any) -> Any:
        calls.append(template["name"])
        return real(template, *args)

    monkeypatch.setattr(argo_expand, "pod", counted)
    document = workflow([task(withItems=list(range(100)))])
    document["spec"]["templates"][1]["sidecars"] = [{"name": f"s{i}"} for i in range(50)]
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(document))
    assert len(build(argo.read(str(path), SETTINGS)[0]).tasks) == 100
    assert calls == ["c"]  # not 100 times its 51 containers


def test_the_digest_lists_a_workflows_templates_once_whatever_their_number(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    walks: list[str] = []
    real = argo_digest.sequence

    def counted(parent: Any, key: str, *args: Any) -> Any:
        if key == "templates":
            walks.append(key)
        return real(parent, key, *args)

    monkeypatch.setattr(argo_digest, "sequence", counted)
    path = digest(tmp_path, 1)
    document = json.loads(path.read_text())
    dag = document["workflows"][0]["templates"][0]
    document["workflows"][0]["templates"] += [{**dag, "name": f"d{i}"} for i in range(30)]
    path.write_text(json.dumps(document))
    assert len(argo.read(str(path), SETTINGS)) == 31
    assert len(walks) == 2  # the DAG templates, and the images: not once per DAG template
