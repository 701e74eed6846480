"""A pod's effective requests as kube-scheduler computes them (NodeResourcesFit's podRequests):
the sum over its containers, at least the largest init container, plus the pod overhead."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dagpilot.clusters.node_conventions import GPU_PRODUCT
from dagpilot.core import quantity
from dagpilot.core.errors import InvalidInput
from dagpilot.core.types import Resources

GPU_RESOURCE = "nvidia.com/gpu"


def _amounts(container: Mapping[str, Any], source: str, field: str) -> tuple[int, int, int]:
    """(millicores, bytes, GPUs) a container requests (limits stand in for missing requests,
    as the API server's defaulting does)."""
    resources = container.get("resources") or {}
    requests = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    try:
        return (quantity.milli_value(str(requests.get("cpu", "0"))),
                quantity.value(str(requests.get("memory", "0"))),
                quantity.value(str(requests.get(GPU_RESOURCE, "0"))))
    except ValueError as error:
        raise InvalidInput(source, "", f"{field}.resources", str(error)) from None


def pod_requests(pod: Mapping[str, Any], source: str) -> Resources:
    spec = pod.get("spec") or {}
    total = [0, 0, 0]
    for index, container in enumerate(spec.get("containers") or []):
        for i, amount in enumerate(_amounts(container, source, f"spec.containers[{index}]")):
            total[i] += amount
    for index, container in enumerate(spec.get("initContainers") or []):
        amounts = _amounts(container, source, f"spec.initContainers[{index}]")
        total = [max(t, a) for t, a in zip(total, amounts, strict=True)]
    overhead = {"resources": {"requests": spec.get("overhead") or {}}}
    for i, amount in enumerate(_amounts(overhead, source, "spec.overhead")):
        total[i] += amount
    model = (spec.get("nodeSelector") or {}).get(GPU_PRODUCT) if total[2] else None
    return Resources(total[0] / 1000, total[1], total[2], model)
