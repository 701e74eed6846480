"""A Job as an Argo Workflow: one DAG task per Task (`depends` on its parents), one container
template each with the task's requests, constraints and profile (the pod's annotations), and a
task of several instances fanned out with `withSequence`, one pod per instance."""

from __future__ import annotations

import json
import re
from typing import Any

from dagpilot.core.types import Job, Task
from dagpilot.live.pod_manifest import pod_manifest
from dagpilot.live.task_annotations import go_duration
from dagpilot.workloads.argo_pod import EXPECTED_DURATION

ENTRYPOINT = "dag"
_NOT_DNS = re.compile(r"[^a-z0-9-]+")


def argo_name(text: str) -> str:
    """A DNS-1123 label for Argo task and template names ("Join_1" -> "join-1")."""
    name = _NOT_DNS.sub("-", text.lower()).strip("-")[:63].strip("-")
    return name or "task"


def _template(task: Task, name: str, time_scale: float,
              pod_spec_patch: dict[str, Any] | None) -> dict[str, Any]:
    runtime_s = task.runtime_s / time_scale
    pod = pod_manifest(task, name, runtime_s=runtime_s)
    spec = pod["spec"]
    # The twin's nominal work and the loader's prediction: the same figure for a known task.
    notes = {**pod["metadata"]["annotations"], EXPECTED_DURATION: go_duration(runtime_s)}
    template: dict[str, Any] = {"name": name, "metadata": {"annotations": notes},
                                "container": {**spec["containers"][0], "name": "main",
                                              "command": ["true"]}}
    for key in ("nodeSelector", "tolerations", "affinity"):
        if key in spec:
            template[key] = spec[key]
    if pod_spec_patch:
        template["podSpecPatch"] = json.dumps(pod_spec_patch)
    return template


def workflow_manifest(job: Job, *, name: str | None = None, scheduler: str | None = None,
                      time_scale: float = 1.0,
                      pod_spec_patch: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Workflow of `job`. Runtimes are divided by `time_scale` (the sandbox's twin runs
    them that much faster), `pod_spec_patch` goes on every template (e.g. scheduling gates)."""
    names = {task.id: argo_name(task.id) for task in job.tasks}
    if len({*names.values(), ENTRYPOINT}) != len(names) + 1:  # ids alike once spelled as DNS
        names = {task.id: f"t{i}-{argo_name(task.id)}"[:63] for i, task in enumerate(job.tasks)}
    tasks = []
    for task in job.tasks:
        entry: dict[str, Any] = {"name": names[task.id], "template": names[task.id]}
        if task.parents:
            entry["depends"] = " && ".join(names[p] for p in task.parents)
        if task.instances > 1:
            entry["withSequence"] = {"count": str(task.instances)}
        tasks.append(entry)
    spec: dict[str, Any] = {
        "entrypoint": ENTRYPOINT,
        "templates": [{"name": ENTRYPOINT, "dag": {"tasks": tasks}},
                      *(_template(t, names[t.id], time_scale, pod_spec_patch)
                        for t in job.tasks)]}
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
            "metadata": {"name": name or argo_name(job.id)}, "spec": spec}
