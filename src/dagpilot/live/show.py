"""The live view as the policy sees it, as one JSON-ready document (`dagpilot live show`).

`{"nodes": [...], "pending": [...], "jobs": {...}, "refused": [...]}`: each node with its
readiness, allocatable and allocated amounts (cpu in cores, memory in bytes, GPUs), its free
GPUs per PCIe root
complex (a count, or null when the API cannot tell which complex the free ones are on), its
labels and taints exactly as the API server has them, and its signals: every measured value
(null when there is no reading), what was placed since the sample, and `age_s`, the age of its
oldest reading (null when some signal was never measured: the policy counts missed scrapes
then). Pending pods oldest first with their requests; each job's nodes, finished tasks and
pending pods; the pods that wait but will not be placed, with why (LiveView.refused).
"""

from __future__ import annotations

from typing import Any

from dagpilot.core.types import Resources
from dagpilot.live.node_table import NEVER, LiveNode
from dagpilot.live.prometheus import MEASURED
from dagpilot.live.view import LiveView


def amounts(resources: Resources) -> dict[str, Any]:
    return {"cpu": resources.cpu, "memory": resources.memory, "gpus": resources.gpus}


def free_gpus(node: LiveNode) -> dict[str, int | None]:
    free = set(node.free_gpus)
    return {str(complex_): sum(gpu.index in free for gpu in members) if node.gpus_exact
            else None for complex_, members in node.spec.root_complexes.items()}


def signals(view: LiveView, node: LiveNode) -> dict[str, Any]:
    readings = view.readings(node.spec.name)
    values: dict[str, Any] = {column: readings[column].value if column in readings else None
                              for column in MEASURED}
    sampled_s = node.signals.sampled_s
    values["placed_since_sample"] = amounts(node.signals.placed_since_sample)
    values["age_s"] = round(view.now_s - sampled_s, 3) if sampled_s != NEVER else None
    return values


def document(view: LiveView) -> dict[str, Any]:
    pending_keys = {ref.uid: view.pod_key(ref) or "" for ref in view.pending}
    jobs: dict[str, dict[str, Any]] = {}
    for job_id in view.job_ids():
        jobs[job_id] = {"nodes": sorted(view.job_nodes(job_id)),
                        "finished_tasks": sorted(view.finished_tasks(job_id)), "pending": []}
    for ref in view.pending:
        jobs.setdefault(ref.job.id, {"nodes": [], "finished_tasks": [], "pending": []})[
            "pending"].append(pending_keys[ref.uid])
    return {
        "nodes": [{"name": node.spec.name, "ready": node.ready,
                   "allocatable": amounts(node.spec.allocatable),
                   "allocated": amounts(node.allocated), "free_gpus": free_gpus(node),
                   "labels": dict(node.labels), "taints": [dict(t) for t in node.taints],
                   "signals": signals(view, node)} for node in view.nodes],
        "pending": [{"namespace": key.partition("/")[0], "name": key.partition("/")[2],
                     "requests": amounts(ref.requests)}
                    for ref in view.pending for key in (pending_keys[ref.uid],)],
        "jobs": dict(sorted(jobs.items())),
        "refused": [{"namespace": key.partition("/")[0], "name": key.partition("/")[2],
                     "reason": why} for key, why in sorted(view.refused.values())],
    }
