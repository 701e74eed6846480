"""`dagpilot place WORKFLOW.yaml --cluster SPEC`: the Workflow with dagpilot's planned node for
each task, as YAML the API server accepts.

The plan is the simulator's run of this one Workflow on the cluster under dagpilot's model (the
same Agent.act that serves), so each task is placed where the model would place it when it
becomes ready, its parents having run. With a live state the cluster is the live view's, each
node's CPU and memory reduced by what its pods hold now. Each top-level DAG task's template
gets a required nodeAffinity on the planned node(s) (`matchFields metadata.name In [...]`: a
fanned-out task's instances may be planned on several) and a `dagpilot.io/decision`
annotation; a template that several tasks call is copied per task (`<template>-<task>`) so
each keeps its own plan. Tasks of nested DAG or steps templates are left as they are and
listed under `unplanned` in the Workflow's annotation.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from dagpilot.agent import load_scheduler
from dagpilot.core.config import SimSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.yaml_documents import read_yaml_documents
from dagpilot.core.types import Cluster, NodeSpec, Resources
from dagpilot.live.workflows import WorkflowDecoder
from dagpilot.registry import read_current
from dagpilot.serve.explanation import DECISION_ANNOTATION
from dagpilot.sim.run import simulate

MAX_WORKFLOW_BYTES = 4 << 20


def read_workflow(path: Path) -> dict[str, Any]:
    documents = [d for d in read_yaml_documents(path, MAX_WORKFLOW_BYTES) if d is not None]
    if len(documents) != 1 or not isinstance(documents[0], dict) \
            or documents[0].get("kind") != "Workflow":
        raise InvalidInput(str(path), "", "kind", "expected one Argo Workflow document")
    return documents[0]


def plan(workflow: Mapping[str, Any], cluster: Cluster, models: Path,
         file: str) -> dict[str, list[str]]:
    """Task id -> the planned node of each of its instances (pods), from the simulator."""
    parsed = WorkflowDecoder()(_named(workflow))
    if parsed.job is None:
        raise InvalidInput(file, "", "spec", str(parsed.error))
    job = dataclasses.replace(parsed.job, arrival_s=0.0)
    record = simulate([job], cluster, load_scheduler(models), SimSettings(), 0)
    planned: dict[str, list[str]] = {}
    for pod in record.pods:
        if pod.node is not None and pod.outcome == "succeeded":
            planned.setdefault(pod.task_id, []).append(pod.node)
    return planned


def placed_workflow(workflow: Mapping[str, Any], planned: Mapping[str, list[str]],
                    version: str) -> dict[str, Any]:
    """The Workflow with each top-level DAG task's template pinned to its planned nodes."""
    document = copy.deepcopy(dict(workflow))
    spec = document.setdefault("spec", {})
    templates = {t.get("name"): t for t in spec.get("templates", []) if isinstance(t, dict)}
    entry = templates.get(spec.get("entrypoint"))
    tasks = ((entry or {}).get("dag") or {}).get("tasks") or []
    calls = Counter(str(task.get("template")) for task in tasks if isinstance(task, dict))
    done: dict[str, list[str]] = {}
    for task in tasks:
        name = str(task.get("name"))
        nodes = [node for key, value in planned.items() if _task_of(key) == name
                 for node in value]
        template = templates.get(task.get("template"))
        if not nodes or template is None or not _runs_a_pod(template):
            continue
        if calls[str(task.get("template"))] > 1:  # shared: a copy of its own
            template = copy.deepcopy(template)
            template["name"] = f"{template['name']}-{name}"[:63]
            spec["templates"].append(template)
            task["template"] = template["name"]
        _pin(template, sorted(set(nodes)), version, name)
        done[name] = sorted(set(nodes))
    metadata = document.setdefault("metadata", {})
    unplanned = sorted(key for key in planned if _task_of(key) not in done)
    metadata.setdefault("annotations", {})[DECISION_ANNOTATION] = json.dumps(
        {"model": version, "plan": done, "unplanned": unplanned}, separators=(",", ":"))
    return document


def _task_of(task_id: str) -> str:
    """The DAG task of a loader task id: `B(3)` (an item of a fan-out) -> `B`."""
    return task_id.split("(", 1)[0] if task_id.endswith(")") else task_id


def _runs_a_pod(template: Mapping[str, Any]) -> bool:
    return "container" in template or "script" in template


def _pin(template: dict[str, Any], nodes: list[str], version: str, task: str) -> None:
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": nodes}]}
    affinity = template.setdefault("affinity", {})
    required = affinity.setdefault("nodeAffinity", {}).setdefault(
        "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []})
    terms = required.setdefault("nodeSelectorTerms", [])
    if terms:  # terms are ORed: the planned nodes must hold within each one
        for existing in terms:
            existing.setdefault("matchFields", []).extend(term["matchFields"])
    else:
        terms.append(term)
    template.setdefault("metadata", {}).setdefault("annotations", {})[DECISION_ANNOTATION] = \
        json.dumps({"model": version, "task": task, "nodes": nodes}, separators=(",", ":"))


def with_free_capacity(cluster: Cluster, allocated: Mapping[str, Resources]) -> Cluster:
    """The cluster as free now: each node's CPU and memory less what its pods hold."""
    def free(spec: NodeSpec) -> NodeSpec:
        held = allocated.get(spec.name)
        if held is None:
            return spec
        room = dataclasses.replace(spec.allocatable,
                                   cpu=max(0.0, spec.allocatable.cpu - held.cpu),
                                   memory=max(0, spec.allocatable.memory - held.memory))
        return dataclasses.replace(spec, allocatable=room)
    return Cluster(cluster.name, tuple(free(spec) for spec in cluster.nodes))


def live_cluster(kubeconfig: Path, timeout_s: float = 30.0) -> Cluster:
    """The live cluster's inventory with what is free on each node now."""
    from dagpilot.live.view import LiveView  # noqa: PLC0415 (the Kubernetes client)
    from dagpilot.serve.scheduler_process import topology_rtt_ms  # noqa: PLC0415

    with LiveView.connect(kubeconfig, topology_rtt_ms()) as view:
        view.start(timeout_s)
        allocated = {node.spec.name: node.allocated for node in view.nodes}
        return with_free_capacity(view.cluster, allocated)


def place(path: Path, cluster: Cluster, models: Path) -> str:
    workflow = read_workflow(path)
    planned = plan(workflow, cluster, models, str(path))  # a missing model: IntegrityError
    version = read_current(models) or "unknown"
    return yaml.safe_dump(placed_workflow(workflow, planned, version), sort_keys=False)


def _named(workflow: Mapping[str, Any]) -> dict[str, Any]:
    """The decoder wants a name; a generateName Workflow is planned under its prefix."""
    metadata = dict(workflow.get("metadata") or {})
    metadata.setdefault("name", str(metadata.get("generateName", "workflow")).rstrip("-"))
    return {**workflow, "metadata": metadata}
