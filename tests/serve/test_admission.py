"""The mutating webhook: AdmissionReview v1 in, a JSONPatch out that sets the scheduler and
each pod template's expected duration from the run history; never a refusal."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.core.units import duration_s
from dagpilot.serve import admission
from dagpilot.serve.run_history import EMPTY, RunHistory
from dagpilot.workloads.argo_pod import EXPECTED_DURATION

HISTORY = RunHistory({"work": (90.0,), "etl/load": (12.25,), "load": (1.0,), "step": (30.0,)})


def workflow() -> dict[str, Any]:
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
            "metadata": {"generateName": "etl-", "namespace": "team"},
            "spec": {"entrypoint": "main", "templates": [
                {"name": "main", "dag": {"tasks": [{"name": "a", "template": "work"}]}},
                {"name": "work", "container": {"image": "busybox"}},
                {"name": "load", "script": {"image": "python", "source": "1"},
                 "metadata": {"labels": {"x": "y"}}},
                {"name": "step", "container": {"image": "busybox"},
                 "metadata": {"annotations": {"other": "1"}}, "schedulerName": "volcano"},
                {"name": "pinned", "container": {"image": "busybox"},
                 "metadata": {"annotations": {EXPECTED_DURATION: "5s"}}},
                {"name": "unknown", "container": {"image": "busybox"}}]}}


def review_of(obj: Any, operation: str = "CREATE", kind: str = "Workflow") -> bytes:
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": "u-1", "kind": {"group": "argoproj.io",
                                                          "version": "v1alpha1", "kind": kind},
                                   "operation": operation, "namespace": "team",
                                   "object": obj}}).encode()


def apply(document: Any, patch: list[dict[str, Any]]) -> Any:
    """RFC 6902 add and replace on objects and list indices: enough for these patches."""
    result = copy.deepcopy(document)
    for op in patch:
        *parents, last = [p.replace("~1", "/").replace("~0", "~")
                          for p in op["path"].split("/")[1:]]
        target = result
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if op["op"] == "replace":
            assert last in target, op
        target[last] = op["value"]
    return result


def test_a_workflow_gets_the_scheduler_and_its_expected_durations() -> None:
    response = json.loads(admission.review(review_of(workflow()), HISTORY))
    assert response["apiVersion"] == "admission.k8s.io/v1"
    assert response["kind"] == "AdmissionReview"
    answer = response["response"]
    assert (answer["uid"], answer["allowed"], answer["patchType"]) == ("u-1", True, "JSONPatch")
    mutated = apply(workflow(), json.loads(base64.b64decode(answer["patch"])))
    assert mutated["spec"]["schedulerName"] == "dagpilot"
    templates = {t["name"]: t for t in mutated["spec"]["templates"]}
    durations = {name: t.get("metadata", {}).get("annotations", {}).get(EXPECTED_DURATION)
                 for name, t in templates.items()}
    assert durations == {"main": None, "work": "90s", "load": "12.25s", "step": "30s",
                         "pinned": "5s", "unknown": None}
    assert templates["load"]["metadata"]["labels"] == {"x": "y"}
    assert templates["step"]["metadata"]["annotations"]["other"] == "1"
    assert templates["step"]["schedulerName"] == "dagpilot"


def test_without_history_only_the_scheduler_is_set() -> None:
    assert admission.mutation(workflow(), EMPTY) == [
        {"op": "add", "path": "/spec/schedulerName", "value": "dagpilot"},
        {"op": "replace", "path": "/spec/templates/3/schedulerName", "value": "dagpilot"}]


def test_a_workflow_already_dagpilots_is_left_alone() -> None:
    done = apply(workflow(), admission.mutation(workflow(), HISTORY))
    assert admission.mutation(done, HISTORY) == []
    answer = json.loads(admission.review(review_of(done), HISTORY))["response"]
    assert answer == {"uid": "u-1", "allowed": True}


@pytest.mark.parametrize(("obj", "operation", "kind"), [
    (workflow(), "UPDATE", "Workflow"),
    (workflow(), "CREATE", "CronWorkflow"),
    ({"spec": "odd"}, "CREATE", "Workflow"),
    ({"spec": {"templates": "odd", "schedulerName": "dagpilot"}}, "CREATE", "Workflow"),
    ("odd", "CREATE", "Workflow"),
])
def test_anything_else_is_allowed_unchanged(obj: Any, operation: str, kind: str) -> None:
    answer = json.loads(admission.review(review_of(obj, operation, kind), HISTORY))["response"]
    assert answer == {"uid": "u-1", "allowed": True}


@pytest.mark.parametrize(("body", "field"), [
    (b"[]", ""),
    (b'{"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview"}', "apiVersion"),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}', "request"),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {}}', "uid"),
    (b"{", ""),
])
def test_a_body_that_is_no_admission_review_is_invalid(body: bytes, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        admission.review(body, HISTORY)
    assert caught.value.field == field


@pytest.mark.parametrize(("seconds", "text"), [(90.0, "90s"), (0.5, "0.5s"), (12.3456, "12.346s"),
                                                (86_400.0, "86400s")])
def test_durations_are_written_as_the_loader_reads_them(seconds: float, text: str) -> None:
    assert admission.go_duration(seconds) == text
    assert duration_s(text) == pytest.approx(seconds, abs=5e-4)
