"""Argo manifests as read: where each came from, its workflow spec and its templates by name.

Kinds: Workflow, WorkflowTemplate, ClusterWorkflowTemplate and CronWorkflow (whose workflow spec
is `spec.workflowSpec`). Documents of other kinds (a ConfigMap beside a workflow) are skipped.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput

log = logging.getLogger(__name__)

WORKFLOW_KINDS = ("Workflow", "CronWorkflow")
TEMPLATE_KINDS = ("WorkflowTemplate", "ClusterWorkflowTemplate")
Raw = Mapping[str, Any]
NAME_LIMIT = 120  # template and task names as records show them


@dataclass(frozen=True, slots=True)
class Where:
    """A place in the input, for error messages: file, document, template, task."""

    file: str
    document: str = ""  # "document 2" in a YAML stream, "workflows[4]" in the digest
    template: str = ""
    task: str = ""

    def record(self) -> str:
        parts = [self.document] if self.document else []
        if self.template:
            parts.append(f"template {shown(self.template, NAME_LIMIT)}")
        if self.task:
            parts.append(f"task {shown(self.task, NAME_LIMIT)}")
        return ", ".join(parts)

    def inside(self, template: str | None = None, task: str | None = None) -> Where:
        return dataclasses.replace(self, template=self.template if template is None else template,
                                   task=self.task if task is None else task)

    def error(self, field: str, message: str) -> InvalidInput:
        return InvalidInput(self.file, self.record(), field, message)


@dataclass(frozen=True)
class Manifest:
    where: Where
    kind: str
    name: str
    spec: Raw
    templates: Mapping[str, Raw]
    annotations: Mapping[str, str] = field(default_factory=dict)
    schedule: str | None = None  # a CronWorkflow's

    @property
    def entrypoint(self) -> str | None:
        value = self.spec.get("entrypoint")
        return value if isinstance(value, str) and value else None

    @property
    def cluster_scoped(self) -> bool:
        return self.kind == "ClusterWorkflowTemplate"

    @property
    def is_job(self) -> bool:
        """Workflows run; a template is a job of its own only when it names an entrypoint."""
        return self.kind in WORKFLOW_KINDS or self.entrypoint is not None


def mapping(parent: Raw, key: str, where: Where, path: str = "") -> Raw:
    """`parent[key]` as a mapping ({} when absent); anything else is an InvalidInput."""
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise where.error(path or key, f"expected a mapping, got {shown(value)}")
    return value


def sequence(parent: Raw, key: str, where: Where, path: str = "") -> list[Any]:
    """`parent[key]` as a list ([] when absent); anything else is an InvalidInput."""
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise where.error(path or key, f"expected a list, got {shown(value)}")
    return value


def text(parent: Raw, key: str, where: Where, path: str = "", default: str = "") -> str:
    value = parent.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise where.error(path or key, f"expected a string, got {shown(value)}")
    return value


def read_manifest(document: Any, where: Where) -> Manifest | None:
    """The manifest in one document; None for an empty document or another kind of object."""
    if document is None:
        return None
    if not isinstance(document, Mapping):
        raise where.error("", f"expected a Kubernetes object (a mapping), got {shown(document)}")
    kind = document.get("kind")
    if kind is not None and not isinstance(kind, str):
        raise where.error("kind", f"expected the kind's name, got {shown(kind)}")
    if kind not in WORKFLOW_KINDS + TEMPLATE_KINDS or not isinstance(kind, str):
        log.debug("%s: %s: skipping kind %s", where.file, where.document, shown(kind))
        return None
    metadata = mapping(document, "metadata", where)
    name = (text(metadata, "name", where, "metadata.name")
            or text(metadata, "generateName", where, "metadata.generateName").rstrip("-")
            or where.document.replace(" ", "-"))
    spec = mapping(document, "spec", where)
    schedule = None
    if kind == "CronWorkflow":
        schedule = text(spec, "schedule", where, "spec.schedule") or None
        spec = mapping(spec, "workflowSpec", where, "spec.workflowSpec")
    annotations = _annotations(mapping(metadata, "annotations", where, "metadata.annotations"),
                               where)
    return Manifest(where, kind, name, spec, _templates(spec, where), annotations, schedule)


def _annotations(raw: Raw, where: Where) -> dict[str, str]:
    """Annotations are strings; YAML's unquoted numbers and booleans keep their text, and
    anything else (a list, a mapping) is refused rather than turned into text."""
    found: dict[str, str] = {}
    for key, value in raw.items():
        if isinstance(value, bool):
            found[str(key)] = "true" if value else "false"
        elif isinstance(value, int | float | str):
            found[str(key)] = str(value)
        else:
            raise where.error(f"metadata.annotations.{shown(key)}",
                              f"expected a string, got {shown(value)}")
    return found


def _templates(spec: Raw, where: Where) -> dict[str, Raw]:
    templates: dict[str, Raw] = {}
    for index, template in enumerate(sequence(spec, "templates", where, "spec.templates")):
        path = f"spec.templates[{index}]"
        if not isinstance(template, Mapping):
            raise where.error(path, f"expected a mapping, got {shown(template)}")
        name = text(template, "name", where, f"{path}.name")
        if not name:
            raise where.error(f"{path}.name", "a template needs a name")
        if name in templates:
            raise where.inside(template=name).error(f"{path}.name", "duplicate template name")
        templates[name] = template
    return templates


def with_workflow_template(manifest: Manifest, library: Library) -> Manifest:
    """A workflow that runs a (Cluster)WorkflowTemplate via `spec.workflowTemplateRef`, with the
    referenced spec underneath its own (its own fields and templates win)."""
    reference = mapping(manifest.spec, "workflowTemplateRef", manifest.where,
                        "spec.workflowTemplateRef")
    if not reference:
        return manifest
    name = text(reference, "name", manifest.where, "spec.workflowTemplateRef.name")
    cluster = bool(reference.get("clusterScope"))
    base = library.find(name, cluster)
    if base is None:
        raise manifest.where.error("spec.workflowTemplateRef.name",
                                   f"unknown {library.kind_name(cluster)} {shown(name)}")
    return dataclasses.replace(manifest, spec={**base.spec, **manifest.spec},
                               templates={**base.templates, **manifest.templates})


class Library:
    """The (Cluster)WorkflowTemplates read together, for `templateRef` and `workflowTemplateRef`."""

    def __init__(self, manifests: list[Manifest]) -> None:
        self._by_name: dict[tuple[bool, str], Manifest] = {}
        for manifest in manifests:
            if manifest.kind in TEMPLATE_KINDS:
                self._by_name.setdefault((manifest.cluster_scoped, manifest.name), manifest)

    def find(self, name: str, cluster_scoped: bool) -> Manifest | None:
        return self._by_name.get((cluster_scoped, name))

    @staticmethod
    def kind_name(cluster_scoped: bool) -> str:
        return "ClusterWorkflowTemplate" if cluster_scoped else "WorkflowTemplate"
