"""Argo loader: depends expressions, DAG and steps unrolling, pod fields, the digest, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dagpilot.core.config import GIB, LoaderSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import build
from dagpilot.core.types import Job, NodeAffinity, Requirement, TaintEffect, TaskClass, Toleration
from dagpilot.workloads import argo
from dagpilot.workloads.argo_depends import DependsError, referenced_tasks

SETTINGS = LoaderSettings(default_cpu=1.0, default_memory=1 * GIB, default_runtime_s=60.0)


def located(error: InvalidInput) -> tuple[str, str, str]:
    """Where an error says the problem is: file, record, field."""
    return error.file, error.record, error.field


def load(path: Path) -> dict[str, Job]:
    return {job.id: job for job in (build(d) for d in argo.read(str(path), SETTINGS))}


def edges(job: Job) -> set[tuple[str, str]]:
    return {(parent, task.id) for task in job.tasks for parent in task.parents}


@pytest.mark.parametrize(("expression", "names"), [
    ("A", ("A",)),
    ("B && C", ("B", "C")),
    ("A && (C.Succeeded || C.Failed)", ("A", "C")),
    ("!A.Failed || B.Skipped", ("A", "B")),
    ("(task-1.AnySucceeded)&&task_2.AllFailed", ("task-1", "task_2")),
    ("x.Errored || x.Omitted || x.Daemoned", ("x",)),
    ("  ", ()),
])
def test_depends_names(expression: str, names: tuple[str, ...]) -> None:
    assert referenced_tasks(expression) == names


@pytest.mark.parametrize("expression", [
    "A &&", "A B", "(A", "A)", "A.Finished", "A.", "A & B", "|| A", "!", "A && && B",
])
def test_depends_errors(expression: str) -> None:
    with pytest.raises(DependsError, match="position"):
        referenced_tasks(expression)


@pytest.fixture(scope="module")
def valid(fixtures: Path) -> dict[str, Job]:
    return load(fixtures / "argo" / "valid")


def test_jobs_of_the_folder(valid: dict[str, Job]) -> None:
    # `library` and `shared` name no entrypoint: templates only. The ConfigMap is skipped.
    assert sorted(valid) == ["cron/nightly", "diamond/dag-diamond", "fan-out/fan-out",
                             "scheduling/scheduling", "steps/steps-demo", "templates/by-reference",
                             "templates/caller", "templates/runnable"]


@pytest.mark.parametrize(("job", "expected"), [
    ("diamond/dag-diamond", {("A", "B"), ("A", "C"), ("B", "D"), ("C", "D"), ("A", "E")}),
    ("steps/steps-demo", {("[0].prepare", "[1].left"), ("[0].prepare", "[1].right.first"),
                          ("[1].right.first", "[1].right.second"), ("[1].left", "[2].finish"),
                          ("[1].right.second", "[2].finish")}),
    ("cron/nightly", {("extract", "load")}),
    ("templates/caller", {("start", "lib.x"), ("lib.x", "lib.y"), ("lib.y", "cluster")}),
    ("templates/by-reference", {("[0].one", "[1].two")}),
])
def test_edges(valid: dict[str, Job], job: str, expected: set[tuple[str, str]]) -> None:
    assert edges(valid[job]) == expected


def test_fan_out(valid: dict[str, Job]) -> None:
    job = valid["fan-out/fan-out"]
    counts: dict[str, int] = {}
    for task in job.tasks:
        base = task.id.split("(")[0]
        counts[base] = counts.get(base, 0) + 1
    # withItems 3, withSequence count 2, literal withParam 2, computed withParam: the template's
    # fan-out annotation (4), else the workflow's (2); an empty withItems runs nothing
    assert counts == {"split": 1, "items": 3, "numbers": 2, "literal": 2, "computed": 4,
                      "workflow-default": 2, "join": 1}
    fanned = {t.id for t in job.tasks} - {"split", "join"}
    assert set(job.task("join").parents) - {"split"} == fanned
    assert all(job.task(t).parents == ("split",) for t in fanned)


@pytest.mark.parametrize(("task", "runtime_s"), [
    ("A", 90.0),  # the template's expected-duration annotation beats the history (1 s)
    ("C", 300.0),  # diamond.history.json: "slow": "5m"
    ("E", 60.0),  # neither: the settings default
])
def test_runtimes(valid: dict[str, Job], task: str, runtime_s: float) -> None:
    assert valid["diamond/dag-diamond"].task(task).runtime_s == runtime_s


def test_job_fields(valid: dict[str, Job]) -> None:
    diamond = valid["diamond/dag-diamond"]
    assert diamond.priority == 3
    assert diamond.label("argo.kind") == "Workflow"
    assert diamond.task("A").name == "echo"
    assert valid["cron/nightly"].label("argo.schedule") == "0 2 * * *"
    assert valid["templates/caller"].task("lib.x").requests.cpu == 2.0


def test_pod_fields(valid: dict[str, Job]) -> None:
    job = valid["scheduling/scheduling"]
    plain = job.task("defaults")
    assert (plain.requests.cpu, plain.requests.memory, plain.requests.gpus) == (1.0, GIB, 0)
    assert plain.limits is None
    assert plain.priority == 5  # the workflow's podPriority
    assert plain.node_selector == (("pool", "general"),)
    assert plain.tolerations == (Toleration("dedicated", "Equal", "batch",
                                            TaintEffect.NO_SCHEDULE),)

    train = job.task("train")
    assert (train.requests.cpu, train.requests.memory, train.requests.gpus) == (7.5, 30 * GIB, 2)
    assert train.limits is not None
    assert (train.limits.cpu, train.limits.memory, train.limits.gpus) == (8.0, 32 * GIB, 2)
    assert train.task_class is TaskClass.GPU
    assert train.priority == 100
    assert train.node_selector == (("accelerator", "a100"),)  # replaces the workflow's
    assert train.tolerations == (Toleration("nvidia.com/gpu", "Exists"),
                                 Toleration("", "Exists", "", TaintEffect.NO_EXECUTE))
    assert train.affinity == NodeAffinity(
        required=((Requirement("topology.kubernetes.io/zone", "In", ("zone-a", "zone-b")),),
                  (Requirement("kubernetes.io/hostname", "In", ("gpu-node-1",)),)),
        preferred=((20, (Requirement("disk", "Exists"),)),))

    sidecar = job.task("sidecar")
    assert sidecar.requests.cpu == pytest.approx(0.75)
    assert sidecar.requests.memory == 256 * 2**20 + 128 * 10**6


@pytest.mark.parametrize(("name", "record", "field"), [
    ("cycle.yaml", "document 1, template 'main', task 'A'", "depends"),
    ("unknown-dependency.yaml", "document 1, template 'main', task 'B'", "dependencies"),
    ("bad-yaml.yaml", "line 11 column 1", ""),
    ("bad-quantity.yaml", "document 1, template 'work', task 'A'",
     "container.resources.requests.memory"),
    ("unknown-template.yaml", "document 1, template 'main', task 'A'", "template"),
    ("bad-depends.yaml", "document 1, template 'main', task 'B'", "depends"),
])
def test_invalid_fixtures(fixtures: Path, name: str, record: str, field: str) -> None:
    path = fixtures / "argo" / "invalid" / name
    with pytest.raises(InvalidInput) as caught:
        argo.read(str(path), SETTINGS)
    assert located(caught.value) == (str(path), record, field)


def workflow(templates: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
            "metadata": {"name": "w"},
            "spec": {"entrypoint": templates[0]["name"], "templates": templates, **spec}}


def dag(*tasks: dict[str, Any]) -> dict[str, Any]:
    return {"name": "main", "dag": {"tasks": list(tasks)}}


LEAF = {"name": "work", "container": {"image": "alpine"}}


@pytest.mark.parametrize(("document", "record", "field"), [
    (workflow([dag({"name": "A", "template": "main"})]),
     "document 1, template 'main', task 'A'", "template"),  # recursion
    (workflow([dag({"name": "A", "template": "work"},
                   {"name": "B", "template": "work", "depends": "A", "dependencies": ["A"]}),
               LEAF]), "document 1, template 'main', task 'B'", "depends"),
    (workflow([dag({"name": "A", "template": "work"}, {"name": "A", "template": "work"}), LEAF]),
     "document 1, template 'main', task 'A'", "name"),
    (workflow([dag({"name": "A"})]), "document 1, template 'main', task 'A'", "template"),
    (workflow([dag({"name": "A", "templateRef": {"name": "nope", "template": "x"}})]),
     "document 1, template 'main', task 'A'", "templateRef.name"),
    (workflow([{"name": "main", "container": {"image": "a"},
                "tolerations": [{"key": "k", "effect": "Sometimes"}]}]),
     "document 1, template 'main'", "tolerations[0].effect"),
    (workflow([{"name": "main", "container": {"image": "a"}, "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "k", "operator": "Like"}]}]}}}}]),
     "document 1, template 'main'",
     "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     ".nodeSelectorTerms[0].matchExpressions[0].operator"),
    (workflow([{"name": "main", "container": {
        "image": "a", "resources": {"limits": {"nvidia.com/gpu": "0.5"}}}}]),
     "document 1, template 'main'", "resources.requests.nvidia.com/gpu"),
    (workflow([{"name": "main", "container": {"image": "a"},
                "metadata": {"annotations": {"dagpilot.io/expected-duration": "soon"}}}]),
     "document 1, template 'main'", "metadata.annotations.dagpilot.io/expected-duration"),
    (workflow([{"name": "main", "suspend": {}}], entrypoint="absent"), "document 1",
     "spec.entrypoint"),
    (workflow([{"name": "main"}]), "document 1, template 'main'", "template"),
    (workflow([{"name": "main", "container": {}}, {"name": "main", "container": {}}]),
     "document 1, template 'main'", "spec.templates[1].name"),
    (["not", "a", "mapping"], "document 1", ""),
])
def test_malformed_workflows(tmp_path: Path, document: Any, record: str, field: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(json.dumps(document))  # JSON is YAML
    with pytest.raises(InvalidInput) as caught:
        argo.read(str(path), SETTINGS)
    assert located(caught.value) == (str(path), record, field)


def test_bad_history_file(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(json.dumps(workflow([LEAF])))
    history = tmp_path / "w.history.json"
    history.write_text(json.dumps({"work": "a while"}))
    with pytest.raises(InvalidInput) as caught:
        argo.read(str(tmp_path / "w.yaml"), SETTINGS)
    assert (caught.value.file, caught.value.record, caught.value.field) == (str(history),
                                                                             "$.work", "work")


def test_second_document_error_names_it(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(json.dumps(workflow([LEAF])) + "\n---\n"
                    + json.dumps(workflow([dag({"name": "A", "template": "gone"})])))
    with pytest.raises(InvalidInput) as caught:
        argo.read(str(path), SETTINGS)
    assert caught.value.record == "document 2, template 'main', task 'A'"


def test_nothing_to_read(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        argo.read(str(tmp_path), SETTINGS)
    with pytest.raises(InvalidInput):
        argo.read(str(tmp_path / "absent.yaml"), SETTINGS)


# The digest of the Argo examples: 38 manifests, 40 DAG templates.

def stated_items(task: dict[str, Any]) -> int | None:
    """What the digest says of a task's fan-out: withItems is a count; a withParam that is a
    literal JSON list has its length; one computed at run time gets the default of 1."""
    if "withItems" in task:
        return int(task["withItems"])
    if "withParam" in task:
        param = task["withParam"]
        return len(json.loads(param)) if param.startswith("[") else 1
    return None


def stated_ids(task: dict[str, Any]) -> list[str]:
    items = stated_items(task)
    name = str(task["name"])
    return [name] if items is None else [f"{name}({i})" for i in range(items)]


def stated_dependencies(task: dict[str, Any]) -> tuple[str, ...]:
    if "depends" in task:
        return referenced_tasks(task["depends"])
    return tuple(task.get("dependencies", ()))


@pytest.fixture(scope="module")
def digest(traces: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(
        (traces / "argo-examples-dags" / "argo_example_dags.json").read_text())
    return document


@pytest.fixture(scope="module")
def digest_jobs(traces: Path) -> dict[str, Job]:
    return load(traces / "argo-examples-dags" / "argo_example_dags.json")


def test_digest_jobs(digest: dict[str, Any], digest_jobs: dict[str, Job]) -> None:
    assert len(digest["workflows"]) == 38
    assert len(digest_jobs) == 40
    checked = 0
    for entry in digest["workflows"]:
        for template in entry["templates"]:
            if template["type"] != "dag":
                continue
            job = digest_jobs[f"{entry['file'].removesuffix('.yaml')}/{template['name']}"]
            ids = {t["name"]: stated_ids(t) for t in template["tasks"]}
            assert {task.id for task in job.tasks} == {i for group in ids.values() for i in group}
            expected = {(parent, child)
                        for t in template["tasks"] for dep in stated_dependencies(t)
                        for parent in ids[dep] for child in ids[t["name"]]}
            assert edges(job) == expected, job.id
            assert job.label("argo.kind") == entry["kind"]
            checked += 1
    assert checked == 40
    assert sum(len(job.tasks) for job in digest_jobs.values()) == 147
    assert max(len(job.tasks) for job in digest_jobs.values()) == 8


def test_digest_depends_all_parse(digest: dict[str, Any]) -> None:
    expressions = [t["depends"] for entry in digest["workflows"] for template in entry["templates"]
                   for t in template.get("tasks", ()) if "depends" in t]
    assert len(expressions) == 89
    for expression in expressions:
        assert referenced_tasks(expression)


def test_a_digest_template_name_is_unique_in_its_workflow(tmp_path: Path) -> None:
    path = tmp_path / "digest.json"
    dag = {"name": "main", "type": "dag", "tasks": [{"name": "a", "template": "t"}]}
    path.write_text(json.dumps({"workflows": [{"file": "x.yaml", "templates": [dag, dag]}]}))
    with pytest.raises(InvalidInput) as caught:
        argo.read(str(path), SETTINGS)
    assert (caught.value.record, caught.value.field, caught.value.message) == (
        "workflows[0] (x.yaml)", "templates[1].name", "duplicate template name 'main'")


def test_bad_digest(tmp_path: Path) -> None:
    path = tmp_path / "digest.json"
    path.write_text('{"workflows": [\n{"file": "x.yaml", "templates": [}]}')
    with pytest.raises(InvalidInput) as caught:
        argo.read(str(path), SETTINGS)
    assert caught.value.record.startswith("line 2 ")
    tasks = [{"name": "a", "template": "t"}, {"name": "b", "template": "t", "depends": "a ||"}]
    path.write_text(json.dumps({"workflows": [{"file": "x.yaml", "kind": "Workflow", "templates": [
        {"name": "main", "type": "dag", "tasks": tasks}]}]}))
    with pytest.raises(InvalidInput) as caught:
        argo.read(str(path), SETTINGS)
    assert (caught.value.record, caught.value.field) == (
        "workflows[0] (x.yaml), template 'main', task 'b'", "depends")
