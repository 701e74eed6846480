"""Argo Workflow objects -> their Job (through the Argo loader) and their finished tasks.

- The Job is what `dagpilot workloads show` would read from the same manifest: the loader's
  read_manifest, expand and job_draft.build (one parser for files and live objects), with job
  id `namespace/name` and the creation time as arrival. A Workflow that runs a
  WorkflowTemplate (`spec.workflowTemplateRef`) is read with the merged spec Argo stores in
  `status.storedWorkflowTemplateSpec`; until Argo has stored it, or when the DAG does not
  parse (an unknown template, a cycle, a bad quantity), the record carries the loader's
  InvalidInput naming the workflow and field and no job: the view logs and counts it, and the
  workflow's pods are scheduled as single-task jobs.
- The job is parsed again only when the spec changes: Argo rewrites the status at every step.
- Argo names a pod's node `<workflow>.<task>` in a DAG and `<workflow>[i].<step>` in steps; an
  item of a fan-out is `b(0:value)` where the loader's id is `b(0)`, and a retried task's
  attempts are `a(0)`, `a(1)` under the retry node `a`. `task_of_node` maps a node name to the
  loader's task id and attempt.
- Finished tasks: the Pod and Retry nodes of `status.nodes` whose phase is Succeeded.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from dataclasses import dataclass
from typing import Any

from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import build
from dagpilot.core.types import Job
from dagpilot.live.raw import api_time_s, part
from dagpilot.workloads.argo_expand import expand
from dagpilot.workloads.argo_manifest import Library, Where, read_manifest

log = logging.getLogger(__name__)

SOURCE = "api"
FINISHED_TYPES = frozenset({"Pod", "Retry"})
_RETRY = re.compile(r"(.+)\((\d+)\)", re.ASCII)


@dataclass(frozen=True, slots=True)
class WorkflowRecord:
    uid: str
    namespace: str
    name: str
    job: Job | None  # None when the DAG does not parse (then `error` says why)
    finished: frozenset[str] = frozenset()
    phase: str = ""
    resource_version: str = ""
    error: InvalidInput | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class WorkflowDecoder:
    """Workflow objects -> records, reusing the job of a workflow whose spec did not change.
    Used by one watcher thread at a time."""

    def __init__(self, settings: LoaderSettings | None = None) -> None:
        self.settings = settings or LoaderSettings()
        self._parsed: dict[str, tuple[Any, Job | None, InvalidInput | None]] = {}

    def __call__(self, workflow: dict[str, Any]) -> WorkflowRecord:
        metadata = part(workflow, "metadata")
        namespace, name = str(metadata.get("namespace", "")), str(metadata.get("name", ""))
        uid = str(metadata.get("uid", f"{namespace}/{name}"))
        status = part(workflow, "status")
        spec_key = (workflow.get("spec"), status.get("storedWorkflowTemplateSpec"))
        cached = self._parsed.get(uid)
        if cached is not None and cached[0] == spec_key:
            job, error = cached[1], cached[2]
        else:
            job, error = self._job(workflow, namespace, name, metadata)
            self._parsed[uid] = (spec_key, job, error)
        record = WorkflowRecord(uid, namespace, name, job, phase=str(status.get("phase", "")),
                                resource_version=str(metadata.get("resourceVersion", "")),
                                error=error)
        return dataclasses.replace(record, finished=finished_tasks(record, status))

    def forget(self, uid: str) -> None:
        self._parsed.pop(uid, None)

    def _job(self, workflow: dict[str, Any], namespace: str, name: str,
             metadata: dict[str, Any]) -> tuple[Job | None, InvalidInput | None]:
        where = Where(SOURCE, f"workflow {namespace}/{name}")
        try:
            manifest = read_manifest(_with_stored_template(workflow), where)
            if manifest is None:
                raise where.error("kind", "not a Workflow")
            draft = expand(manifest, f"{namespace}/{name}", Library([]), {}, self.settings)
            draft.arrival_s = api_time_s(metadata.get("creationTimestamp"))
            return build(draft), None
        except InvalidInput as error:
            return None, error


def _with_stored_template(workflow: dict[str, Any]) -> dict[str, Any]:
    """A workflow that runs a WorkflowTemplate, with the merged spec Argo stored for it."""
    spec = workflow.get("spec")
    status = workflow.get("status")
    stored = status.get("storedWorkflowTemplateSpec") if isinstance(status, dict) else None
    if not isinstance(spec, dict) or "workflowTemplateRef" not in spec \
            or not isinstance(stored, dict):
        return workflow
    own = {key: value for key, value in spec.items() if key != "workflowTemplateRef"}
    return {**workflow, "spec": {**stored, **own,
                                 "templates": [*stored.get("templates", []),
                                               *own.get("templates", [])]}}


def finished_tasks(workflow: WorkflowRecord, status: dict[str, Any]) -> frozenset[str]:
    nodes = status.get("nodes")
    if workflow.job is None or not isinstance(nodes, dict):
        return frozenset()
    done = set()
    for node in nodes.values():
        if isinstance(node, dict) and node.get("type") in FINISHED_TYPES \
                and node.get("phase") == "Succeeded":
            task_id, _ = task_of_node(workflow, str(node.get("name", "")))
            if task_id is not None:
                done.add(task_id)
    return frozenset(done)


def task_of_node(workflow: WorkflowRecord, node_name: str) -> tuple[str | None, int]:
    """(the loader's task id, the attempt) of an Argo node name; (None, 0) when the node is
    no task of the parsed DAG (the workflow's own node, an exit handler, a hook)."""
    if workflow.job is None or not node_name.startswith(workflow.name):
        return None, 0
    task_id = _items_numbered(node_name[len(workflow.name):].removeprefix("."))
    index = workflow.job.index
    if task_id in index:
        return task_id, 0
    retry = _RETRY.fullmatch(task_id)
    if retry is not None and retry.group(1) in index:
        return retry.group(1), int(retry.group(2))
    return None, 0


def _items_numbered(name: str) -> str:
    """`b(0:value)` -> `b(0)`: Argo's fan-out item names as the loader numbers them."""
    out: list[str] = []
    position = 0
    while position < len(name):
        match = re.match(r"\((\d+):", name[position:])
        if match is None:
            out.append(name[position])
            position += 1
            continue
        depth, end = 1, position + match.end()
        while end < len(name) and depth:
            depth += {"(": 1, ")": -1}.get(name[end], 0)
            end += 1
        out.append(f"({match.group(1)})")
        position = end
    return "".join(out)
