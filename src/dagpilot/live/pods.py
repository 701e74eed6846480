"""Pod objects -> the live view's pod records, and a record with its Workflow -> PodRef.

- Requests are what kube-scheduler's NodeResourcesFit counts (`resource.PodRequests`): the sum
  over the containers, or the largest init container if that is more (with the sidecar init
  containers, `restartPolicy: Always`, started before it, and added to the containers' sum),
  plus `spec.overhead`; a resource a container does not request but limits is requested at its
  limit (as the API's defaulting does). Quantities are exact (core.quantity); a pod that asks
  nothing asks nothing: no default is added.
- A pod belongs to a Workflow when an owner reference of kind Workflow (argoproj.io) names it;
  its task is the Argo node named by its `workflows.argoproj.io/node-name` annotation
  (live/workflows.py maps node names to the loader's task ids). Its PodRef then has the Job
  parsed from the Workflow (the Argo loader: one parser for files and live objects) and that
  job's task, with the requests the pod really has (a podSpecPatch or Argo's executor
  containers may change them; the scheduler must fit what the API server will count).
- Any other pod, or one whose Workflow is unknown or unparsed, or whose node is not a task of
  the parsed DAG (an exit handler), is a single-task job `namespace/name`: its task has the
  pod's requests, node selector, tolerations, node affinity and priority (read by the Argo
  loader's pod-field parser), and the runtime of its `dagpilot.io/runtime` or
  `dagpilot.io/expected-duration` annotation, else the loader's default.
- `bound_s`: when the pod was bound, as closely as the API says: its PodScheduled condition's
  lastTransitionTime is whole seconds, so the binding happened before that second ended.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from dagpilot.core import quantity
from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.types import Job, Resources, Task, TaskClass
from dagpilot.core.units import duration_s
from dagpilot.core.view import PodRef
from dagpilot.live.inventory import GPU_RESOURCE
from dagpilot.live.raw import api_time_s, part
from dagpilot.live.unsupported import unsupported_rule
from dagpilot.live.workflows import WorkflowRecord, task_of_node
from dagpilot.workloads.argo_manifest import Where
from dagpilot.workloads.argo_pod import pod as pod_fields

SOURCE = "api"
RUNTIME = "dagpilot.io/runtime"
EXPECTED_DURATION = "dagpilot.io/expected-duration"
ARGO_NODE_NAME = "workflows.argoproj.io/node-name"
TERMINAL = frozenset({"Succeeded", "Failed"})
NO_DEFAULTS = LoaderSettings(default_cpu=0.0, default_memory=0)
SPECS_KEPT = 65_536  # pods whose decoded spec a watch keeps (PodDecoder)


@dataclass(frozen=True, slots=True)
class Amounts:
    """Requests in whole units, so that sums over thousands of pods stay exact."""

    millicpu: int = 0
    memory: int = 0
    gpus: int = 0

    def resources(self) -> Resources:
        return Resources(self.millicpu / 1000, self.memory, self.gpus)


@dataclass(frozen=True, slots=True)
class PodRecord:
    uid: str
    namespace: str
    name: str
    node: str | None  # spec.nodeName
    phase: str
    scheduler: str
    created_s: float
    amounts: Amounts
    task: Task | None  # the pod as a single task (None when the pod does not parse)
    workflow: str | None = None  # the owning Workflow's name (same namespace)
    argo_node: str | None = None  # the Argo node name of the pod
    scheduled_s: float | None = None  # PodScheduled lastTransitionTime, whole seconds
    resource_version: str = ""
    deleting: bool = False
    gated: bool = False  # spec.schedulingGates: not to be scheduled yet
    error: InvalidInput | None = None
    unsupported: str | None = None  # a required rule dagpilot cannot honour (live/unsupported)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def terminal(self) -> bool:
        return self.phase in TERMINAL

    @property
    def requests(self) -> Resources:
        return self.amounts.resources()


def decode_pod(pod: dict[str, Any]) -> PodRecord:
    record, spec, annotations = _record(pod)
    return _with_task(record, _task(record, spec, annotations))


class PodDecoder:
    """`decode_pod` for a watch, which sees each pod several times (created, bound, running,
    ended) with the same spec: the task and requests of a pod are kept by (uid, generation,
    runtime annotations) and reused, so a later event costs only the record's own fields. The
    API server bumps a pod's `metadata.generation` on every change of its spec (a resize, a
    toleration added; Kubernetes 1.35, PodObservedGenerationTracking); a pod without one is
    decoded in full every time. The newest `keep` pods are kept."""

    def __init__(self, keep: int = SPECS_KEPT) -> None:
        self._keep = keep
        self._known: dict[tuple[str, int, str | None, str | None], _Decoded] = {}

    def __call__(self, pod: dict[str, Any]) -> PodRecord:
        record, spec, annotations = _record(pod)
        key = _spec_key(record, part(pod, "metadata"), annotations)
        decoded = self._known.get(key) if key is not None else None
        if decoded is None:
            decoded = _task(record, spec, annotations)
            if key is not None:
                if len(self._known) >= self._keep:
                    del self._known[next(iter(self._known))]
                self._known[key] = decoded
        return _with_task(record, decoded)


_Decoded = tuple[Amounts, Task] | InvalidInput


def _record(pod: dict[str, Any]) -> tuple[PodRecord, dict[str, Any], Any]:
    """The record's own fields (no requests, no task yet), the spec and the annotations."""
    metadata = part(pod, "metadata")
    namespace, name = str(metadata.get("namespace", "")), str(metadata.get("name", ""))
    spec = part(pod, "spec")
    status = part(pod, "status")
    annotations = metadata.get("annotations") or {}
    workflow = _workflow_owner(metadata.get("ownerReferences"))
    record = PodRecord(
        uid=str(metadata.get("uid", f"{namespace}/{name}")), namespace=namespace, name=name,
        node=spec.get("nodeName") or None, phase=str(status.get("phase", "Pending")),
        scheduler=str(spec.get("schedulerName", "default-scheduler")),
        created_s=api_time_s(metadata.get("creationTimestamp")), amounts=Amounts(), task=None,
        workflow=workflow,
        argo_node=str(annotations.get(ARGO_NODE_NAME)) if workflow and isinstance(
            annotations, dict) and ARGO_NODE_NAME in annotations else None,
        scheduled_s=_scheduled_s(status.get("conditions")),
        resource_version=str(metadata.get("resourceVersion", "")),
        deleting=metadata.get("deletionTimestamp") is not None,
        gated=bool(spec.get("schedulingGates")), unsupported=unsupported_rule(spec))
    return record, spec, annotations


def _task(record: PodRecord, spec: dict[str, Any], annotations: Any) -> _Decoded:
    where = Where(SOURCE, f"pod {record.key}")
    try:
        amounts = pod_amounts(spec, where)
        return amounts, _single_task(record, spec, annotations, amounts, where)
    except InvalidInput as error:
        return error


def _with_task(record: PodRecord, decoded: _Decoded) -> PodRecord:
    if isinstance(decoded, InvalidInput):
        return dataclasses.replace(record, error=decoded)
    amounts, task = decoded
    return dataclasses.replace(record, amounts=amounts, task=task)


def _spec_key(record: PodRecord, metadata: dict[str, Any], annotations: Any
              ) -> tuple[str, int, str | None, str | None] | None:
    """What the task of a pod depends on besides its uid's spec; None: not to be cached."""
    generation = metadata.get("generation")
    if type(generation) is not int or generation < 1 or "uid" not in metadata:
        return None
    notes = annotations if isinstance(annotations, dict) else {}
    runtime, expected = notes.get(RUNTIME), notes.get(EXPECTED_DURATION)
    if not all(value is None or type(value) is str for value in (runtime, expected)):
        return None
    return record.uid, generation, runtime, expected


def pod_amounts(spec: dict[str, Any], where: Where) -> Amounts:
    """What NodeResourcesFit counts for a pod spec (see the module docstring)."""
    containers = _sum(_requests(c, where, f"spec.containers[{i}]")
                      for i, c in enumerate(_list(spec.get("containers"))))
    sidecars, init_peak = Amounts(), Amounts()
    for index, container in enumerate(_list(spec.get("initContainers"))):
        asked = _requests(container, where, f"spec.initContainers[{index}]")
        if isinstance(container, dict) and container.get("restartPolicy") == "Always":
            sidecars = _sum((sidecars, asked))
            init_peak = _max(init_peak, sidecars)
        else:
            init_peak = _max(init_peak, _sum((sidecars, asked)))
    overhead = _amounts(spec.get("overhead"), where, "spec.overhead")
    return _sum((_max(_sum((containers, sidecars)), init_peak), overhead))


def pod_ref(record: PodRecord, uid: int, workflow: WorkflowRecord | None,
            single: Job | None) -> PodRef | None:
    """The PodRef of a record: its Workflow's job and task when it has them, else the single-
    task job `single` (built by `single_job`); None for a record that does not parse."""
    if record.task is None:
        return None
    if workflow is not None and workflow.job is not None and record.argo_node is not None:
        task_id, attempt = task_of_node(workflow, record.argo_node)
        task = workflow.job.index.get(task_id) if task_id is not None else None
        if task is not None:
            # the pod's own requests and spec.priority (the API server resolved its
            # PriorityClass), not the template's: what kube-scheduler reads
            asked, priority = record.task.requests, record.task.priority
            if task.requests != asked or task.priority != priority:
                task = dataclasses.replace(task, requests=asked, priority=priority)
            return PodRef(uid, workflow.job, task, 0, record.created_s, attempt)
    job = single if single is not None else single_job(record)
    return PodRef(uid, job, record.task, 0, record.created_s)


def single_job(record: PodRecord) -> Job:
    assert record.task is not None
    return Job(record.key, (record.task,), record.created_s, source=f"{SOURCE}#pod")


def _single_task(record: PodRecord, spec: dict[str, Any], annotations: Any, amounts: Amounts,
                 where: Where) -> Task:
    fields = pod_fields({key: spec[key] for key in ("nodeSelector", "tolerations", "affinity",
                                                   "priority") if key in spec},
                        {}, where, NO_DEFAULTS)
    requests = amounts.resources()
    return Task(id=record.name, name=record.name, runtime_s=_runtime_s(annotations, where),
                requests=requests, task_class=TaskClass.GPU if requests.gpus else TaskClass.CPU,
                priority=fields.priority, node_selector=fields.node_selector,
                tolerations=fields.tolerations, affinity=fields.affinity)


def _runtime_s(annotations: Any, where: Where) -> float:
    notes = annotations if isinstance(annotations, dict) else {}
    for key in (RUNTIME, EXPECTED_DURATION):
        if key in notes:
            try:
                return duration_s(notes[key])
            except (ValueError, TypeError) as error:
                raise where.error(f"metadata.annotations.{key}", str(error)) from None
    return LoaderSettings().default_runtime_s


def _requests(container: Any, where: Where, path: str) -> Amounts:
    if not isinstance(container, dict):
        raise where.error(path, "not an object")
    resources = container.get("resources") or {}
    if not isinstance(resources, dict):
        raise where.error(f"{path}.resources", "not an object")
    limits = resources.get("limits") or {}
    requests = resources.get("requests") or {}
    if not isinstance(requests, dict):  # an extender's request is not validated by the API
        raise where.error(f"{path}.resources.requests", "not an object")
    asked = {**(limits if isinstance(limits, dict) else {}), **requests}
    return _amounts(asked, where, f"{path}.resources.requests")


def _amounts(values: Any, where: Where, path: str) -> Amounts:
    if not values:
        return Amounts()
    if not isinstance(values, dict):
        raise where.error(path, "not an object")
    try:
        return Amounts(quantity.milli_value(values.get("cpu", "0")),
                       quantity.value(values.get("memory", "0")),
                       quantity.value(values.get(GPU_RESOURCE, "0")))
    except ValueError as error:
        bad = next((key for key in ("cpu", "memory", GPU_RESOURCE) if key in values
                    and not _parses(values[key])), "")
        raise where.error(f"{path}.{bad}" if bad else path, str(error)) from None


def _parses(text: Any) -> bool:
    try:
        quantity.parse(text)
    except ValueError:
        return False
    return True


def _sum(parts: Any) -> Amounts:
    millicpu = memory = gpus = 0
    for amounts in parts:
        millicpu += amounts.millicpu
        memory += amounts.memory
        gpus += amounts.gpus
    return Amounts(millicpu, memory, gpus)


def _max(a: Amounts, b: Amounts) -> Amounts:
    return Amounts(max(a.millicpu, b.millicpu), max(a.memory, b.memory), max(a.gpus, b.gpus))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _workflow_owner(owners: Any) -> str | None:
    for owner in _list(owners):
        if isinstance(owner, dict) and owner.get("kind") == "Workflow" and str(
                owner.get("apiVersion", "")).startswith("argoproj.io/"):
            return str(owner.get("name", "")) or None
    return None


def _scheduled_s(conditions: Any) -> float | None:
    for condition in _list(conditions):
        if isinstance(condition, dict) and condition.get("type") == "PodScheduled" \
                and condition.get("status") == "True":
            return api_time_s(condition.get("lastTransitionTime")) or None
    return None
