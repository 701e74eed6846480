"""Small hand-written API objects for the live view's unit tests (plain dicts, as the API sends)."""

from __future__ import annotations

import copy
from typing import Any

from dagpilot.core.types import NodeSpec
from dagpilot.live.inventory import node_manifest

CREATED = "2026-12-01T10:00:00Z"
CREATED_S = 1_796_119_200.0  # CREATED as Unix seconds


def node(spec: NodeSpec, *, ready: bool = True, version: int = 1,
         heartbeat: str = CREATED) -> dict[str, Any]:
    manifest = node_manifest(spec)
    manifest["metadata"]["resourceVersion"] = str(version)
    manifest["status"]["conditions"] = [
        {"type": "Ready", "status": "True" if ready else "False",
         "lastHeartbeatTime": heartbeat, "lastTransitionTime": CREATED}]
    return manifest


def pod(name: str, *, namespace: str = "ns", node_name: str | None = None,
        cpu: str | None = "500m", memory: str | None = "256Mi", gpus: str | None = None,
        phase: str = "Pending", created: str = CREATED, version: int = 1,
        scheduler: str = "default-scheduler", uid: str | None = None,
        workflow: str | None = None, argo_node: str | None = None,
        annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    requests = {key: value for key, value in (("cpu", cpu), ("memory", memory),
                                              ("nvidia.com/gpu", gpus)) if value is not None}
    metadata: dict[str, Any] = {
        "name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}",
        "creationTimestamp": created, "resourceVersion": str(version),
        "annotations": dict(annotations or {})}
    if workflow is not None:
        metadata["ownerReferences"] = [{"apiVersion": "argoproj.io/v1alpha1",
                                        "kind": "Workflow", "name": workflow,
                                        "uid": f"wf-{workflow}", "controller": True}]
        metadata["annotations"]["workflows.argoproj.io/node-name"] = argo_node or name
    body: dict[str, Any] = {
        "containers": [{"name": "main", "image": "x", "resources": {"requests": requests}}],
        "schedulerName": scheduler, **spec}
    if node_name is not None:
        body["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": body,
            "status": {"phase": phase}}


DIAMOND_SPEC: dict[str, Any] = {
    "entrypoint": "main",
    "templates": [
        {"name": "main", "dag": {"tasks": [
            {"name": "a", "template": "work"},
            {"name": "b", "template": "work", "dependencies": ["a"], "withItems": ["x", "y"]},
            {"name": "c", "template": "work", "dependencies": ["a"]},
            {"name": "d", "template": "work", "dependencies": ["b", "c"]}]}},
        {"name": "work", "container": {"image": "x", "resources": {
            "requests": {"cpu": "500m", "memory": "256Mi"}}}}]}


def workflow(name: str = "diamond", *, namespace: str = "ns", spec: dict[str, Any] | None = None,
             nodes: dict[str, tuple[str, str]] | None = None, version: int = 1
             ) -> dict[str, Any]:
    """A Workflow; `nodes` maps an Argo node name to (type, phase) for status.nodes."""
    status_nodes = {f"{name}-{index}": {"id": f"{name}-{index}", "name": node_name,
                                        "type": kind, "phase": phase}
                    for index, (node_name, (kind, phase)) in enumerate((nodes or {}).items())}
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
            "metadata": {"name": name, "namespace": namespace, "uid": f"wf-{name}",
                         "creationTimestamp": CREATED, "resourceVersion": str(version)},
            "spec": copy.deepcopy(spec if spec is not None else DIAMOND_SPEC),
            "status": {"phase": "Running", "nodes": status_nodes}}
