"""The mutating admission webhook for Argo Workflows (AdmissionReview v1, a JSONPatch).

The API server sends only Workflows created in namespaces labelled for dagpilot (the shipped
MutatingWebhookConfiguration's namespaceSelector). The patch sets `spec.schedulerName:
dagpilot` (and any template's own schedulerName, which Argo would prefer), and gives each pod
template without a `dagpilot.io/expected-duration` annotation the one the run history
expects, the annotation the Argo loader reads. A template that already names its duration
keeps it. The webhook never refuses: a Workflow it cannot improve is allowed unchanged, so a
missing history or an odd object never blocks a submission. A review that is not an
AdmissionReview v1 is an InvalidInput (HTTP 400).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.json_documents import parse_json
from dagpilot.serve.run_history import RunHistory, family_of
from dagpilot.workloads.argo_pod import EXPECTED_DURATION

SOURCE = "AdmissionReview"
API_VERSION = "admission.k8s.io/v1"
SCHEDULER_NAME = "dagpilot"
POD_TEMPLATE_KINDS = ("container", "script", "containerSet")
MAX_UID_CHARS = 128
Patch = list[dict[str, Any]]


def review(body: bytes, history: RunHistory, scheduler_name: str = SCHEDULER_NAME) -> bytes:
    """The AdmissionReview response (JSON) to the AdmissionReview request in `body`."""
    document = parse_json(body, SOURCE)
    request = _request(document)
    uid = request["uid"]
    response: dict[str, Any] = {"uid": uid, "allowed": True}
    workflow = request.get("object")
    if _is_workflow_create(request) and isinstance(workflow, Mapping):
        patch = mutation(workflow, history, scheduler_name)
        if patch:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
    return json.dumps({"apiVersion": API_VERSION, "kind": "AdmissionReview",
                       "response": response}).encode()


def _request(document: Any) -> Mapping[str, Any]:
    if not isinstance(document, Mapping):
        raise InvalidInput(SOURCE, "", "", f"expected an object, got {shown(document)}")
    if document.get("apiVersion") != API_VERSION or document.get("kind") != "AdmissionReview":
        raise InvalidInput(SOURCE, "", "apiVersion", f"expected {API_VERSION} AdmissionReview, "
                           f"got {shown(document.get('apiVersion'))} {shown(document.get('kind'))}")
    request = document.get("request")
    if not isinstance(request, Mapping):
        raise InvalidInput(SOURCE, "", "request", "missing (a review carries one request)")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid or len(uid) > MAX_UID_CHARS:
        raise InvalidInput(SOURCE, "request", "uid",
                           f"expected the request's uid, got {shown(uid)}")
    return request


def _is_workflow_create(request: Mapping[str, Any]) -> bool:
    kind = request.get("kind")
    return (isinstance(kind, Mapping) and kind.get("group") == "argoproj.io"
            and kind.get("kind") == "Workflow" and request.get("operation") == "CREATE")


def mutation(workflow: Mapping[str, Any], history: RunHistory,
             scheduler_name: str = SCHEDULER_NAME) -> Patch:
    """The JSONPatch (RFC 6902) that makes `workflow` dagpilot's; [] when there is nothing to
    do or no spec to patch."""
    spec = workflow.get("spec")
    if not isinstance(spec, Mapping):
        return []
    patch: Patch = []
    if spec.get("schedulerName") != scheduler_name:
        patch.append({"op": "add", "path": "/spec/schedulerName", "value": scheduler_name})
    templates = spec.get("templates")
    if isinstance(templates, list):
        family = family_of(workflow)
        for index, template in enumerate(templates):
            if isinstance(template, Mapping):
                patch += _template_patch(template, f"/spec/templates/{index}", family, history,
                                         scheduler_name)
    return patch


def _template_patch(template: Mapping[str, Any], path: str, family: str, history: RunHistory,
                    scheduler_name: str) -> Patch:
    patch: Patch = []
    if "schedulerName" in template and template["schedulerName"] != scheduler_name:
        patch.append({"op": "replace", "path": f"{path}/schedulerName", "value": scheduler_name})
    name = template.get("name")
    if not isinstance(name, str) or not any(kind in template for kind in POD_TEMPLATE_KINDS):
        return patch
    metadata = template.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    if isinstance(annotations, Mapping) and EXPECTED_DURATION in annotations:
        return patch  # the author's figure wins, as it does in the loader
    expected = history.expected_s(family, name)
    if expected is None:
        return patch
    value = go_duration(expected)
    if not isinstance(metadata, Mapping):
        patch.append({"op": "add", "path": f"{path}/metadata",
                      "value": {"annotations": {EXPECTED_DURATION: value}}})
    elif not isinstance(annotations, Mapping):
        patch.append({"op": "add", "path": f"{path}/metadata/annotations",
                      "value": {EXPECTED_DURATION: value}})
    else:
        key = EXPECTED_DURATION.replace("~", "~0").replace("/", "~1")  # RFC 6901
        patch.append({"op": "add", "path": f"{path}/metadata/annotations/{key}", "value": value})
    return patch


def go_duration(seconds: float) -> str:
    """Seconds as a duration the loader reads ("90s", "12.5s"), to the millisecond."""
    text = f"{seconds:.3f}".rstrip("0").rstrip(".")
    return f"{text}s"
