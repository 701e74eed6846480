"""A submitted body -> the Workflow it holds, checked by the Argo loader.

The body is JSON (Content-Type application/json) or YAML (anything else), one document, a
`argoproj.io/v1alpha1` Workflow. It goes through the same loader as `dagpilot workloads show`
and the live view (read_manifest, expand, job_draft.build): a cycle, a bad `depends`, an
unknown template or quantity is an InvalidInput naming the task and field (HTTP 422). The
Workflow lands in the endpoint's namespace; naming another is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dagpilot.core.config import LoaderSettings
from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import build
from dagpilot.core.reading.json_documents import parse_json
from dagpilot.core.reading.yaml_documents import parse_yaml_documents
from dagpilot.workloads.argo_expand import expand
from dagpilot.workloads.argo_manifest import Library, Where, read_manifest

SOURCE = "submission"
API_VERSION = "argoproj.io/v1alpha1"


class NotParsed(InvalidInput):
    """A body that is not one JSON or YAML document (HTTP 400, not 422)."""


def parse_body(body: bytes, content_type: str | None) -> dict[str, Any]:
    try:
        if (content_type or "").split(";")[0].strip().lower() == "application/json":
            documents = [parse_json(body, SOURCE)]
        else:
            documents = [d for d in parse_yaml_documents(body, SOURCE) if d is not None]
    except InvalidInput as error:
        raise NotParsed(SOURCE, error.record, error.field, error.message) from None
    if len(documents) != 1:
        raise NotParsed(SOURCE, "", "", f"expected one document, found {len(documents)}")
    document = documents[0]
    if not isinstance(document, dict):
        raise NotParsed(SOURCE, "", "", f"expected a Workflow object, got {shown(document)}")
    return document


def checked_workflow(document: dict[str, Any], namespace: str,
                     settings: LoaderSettings) -> dict[str, Any]:
    """`document` with its namespace set, once the loader has read it as a DAG."""
    if document.get("apiVersion") != API_VERSION or document.get("kind") != "Workflow":
        raise InvalidInput(SOURCE, "", "kind", f"expected an {API_VERSION} Workflow, got "
                           f"{shown(document.get('apiVersion'))} {shown(document.get('kind'))}")
    metadata = document.get("metadata")
    if not isinstance(metadata, Mapping):
        raise InvalidInput(SOURCE, "", "metadata", "missing (a name or generateName is needed)")
    if not metadata.get("name") and not metadata.get("generateName"):
        raise InvalidInput(SOURCE, "", "metadata.name", "a Workflow needs a name or generateName")
    given = metadata.get("namespace")
    if given not in (None, "", namespace):
        raise InvalidInput(SOURCE, "", "metadata.namespace", f"this endpoint creates Workflows "
                           f"in namespace {namespace} only, not {shown(given)}")
    label = str(metadata.get("name") or metadata.get("generateName"))
    manifest = read_manifest(document, Where(SOURCE, f"workflow {shown(label)}"))
    if manifest is None:  # kind was checked above; read_manifest keeps its own rule
        raise InvalidInput(SOURCE, "", "kind", "not a Workflow")
    build(expand(manifest, label, Library([]), {}, settings))
    return {**document, "metadata": {**metadata, "namespace": namespace}}
