"""A Task as the Pod a workflow engine would create for it: requests and limits, node selector
(with the GPU model it asks for as `nvidia.com/gpu.product`), tolerations, node affinity, and
its physical profile as annotations (live/task_annotations)."""

from __future__ import annotations

from typing import Any

from dagpilot.clusters.node_conventions import GPU_PRODUCT
from dagpilot.core import quantity
from dagpilot.core.types import NodeAffinity, Requirement, Task, Toleration
from dagpilot.live.inventory import GPU_RESOURCE
from dagpilot.live.task_annotations import annotations_of


def _requirement(requirement: Requirement) -> dict[str, Any]:
    entry: dict[str, Any] = {"key": requirement.key, "operator": requirement.operator}
    if requirement.values:
        entry["values"] = list(requirement.values)
    return entry


def _affinity(affinity: NodeAffinity) -> dict[str, Any]:
    node: dict[str, Any] = {}
    if affinity.required:
        node["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
            {"matchExpressions": [_requirement(r) for r in term]} for term in affinity.required]}
    if affinity.preferred:
        node["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": weight, "preference": {"matchExpressions": [_requirement(r) for r in term]}}
            for weight, term in affinity.preferred]
    return {"nodeAffinity": node}


def _toleration(toleration: Toleration) -> dict[str, Any]:
    entry: dict[str, Any] = {"operator": toleration.operator}
    if toleration.key:
        entry["key"] = toleration.key
    if toleration.operator == "Equal":
        entry["value"] = toleration.value
    if toleration.effect is not None:
        entry["effect"] = toleration.effect.value
    return entry


def pod_manifest(task: Task, name: str, *, scheduler: str = "default-scheduler",
                 runtime_s: float | None = None, labels: dict[str, str] | None = None,
                 image: str = "busybox") -> dict[str, Any]:
    """The Pod for one instance of `task`, requests equal to limits (Guaranteed QoS)."""
    requests = {"cpu": quantity.format_milli(round(task.requests.cpu * 1000)),
                "memory": str(task.requests.memory)}
    if task.requests.gpus:
        requests[GPU_RESOURCE] = str(task.requests.gpus)
    spec: dict[str, Any] = {
        "schedulerName": scheduler, "restartPolicy": "Never",
        "containers": [{"name": "main", "image": image,
                        "resources": {"requests": requests, "limits": dict(requests)}}]}
    selector = dict(task.node_selector)
    if task.requests.gpu_model:  # a Kubernetes pod asks for a GPU model by its node's label
        selector.setdefault(GPU_PRODUCT, task.requests.gpu_model)
    if selector:
        spec["nodeSelector"] = selector
    if task.tolerations:
        spec["tolerations"] = [_toleration(t) for t in task.tolerations]
    if task.affinity is not None and (task.affinity.required or task.affinity.preferred):
        spec["affinity"] = _affinity(task.affinity)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": labels or {},
                         "annotations": annotations_of(task, runtime_s)},
            "spec": spec}
