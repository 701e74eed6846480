"""Node objects -> the live view's node records: the spec (live/inventory.py), readiness, taints.

A Node whose spec does not parse (a malformed quantity, annotation or label value) becomes a
record with its error and no spec: the view leaves it out of the cluster, logs and counts it,
and takes it back as soon as a corrected version arrives. Nothing is guessed for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dagpilot.core.errors import InvalidInput
from dagpilot.core.types import NodeSpec
from dagpilot.live.inventory import node_spec
from dagpilot.live.raw import part

SOURCE = "api"


@dataclass(frozen=True, slots=True)
class NodeRecord:
    name: str
    spec: NodeSpec | None  # None when the Node does not parse (then `error` says why)
    ready: bool  # the Ready condition is True
    labels: dict[str, str]  # as the API server has them (for `live show`)
    taints: tuple[dict[str, Any], ...]  # spec.taints exactly as the API server has them
    resource_version: str = ""
    error: InvalidInput | None = None


def decode_node(node: dict[str, Any]) -> NodeRecord:
    metadata = part(node, "metadata")
    name = str(metadata.get("name", ""))
    version = str(metadata.get("resourceVersion", ""))
    taints = part(node, "spec").get("taints")
    raw_labels = metadata.get("labels")
    try:
        spec = node_spec(node, SOURCE)
    except InvalidInput as error:
        return NodeRecord(name or "?", None, False, {}, (), version, error)
    return NodeRecord(spec.name, spec, _ready(node),
                      dict(raw_labels) if isinstance(raw_labels, dict) else {},
                      tuple(taints) if isinstance(taints, list) else (), version)


def _ready(node: dict[str, Any]) -> bool:
    conditions = part(node, "status").get("conditions")
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False
