"""Pod objects -> records: requests as NodeResourcesFit counts them, the single-task form, and
bad fields named."""

from __future__ import annotations

from typing import Any

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.core.types import TaintEffect
from dagpilot.live.pods import (
    RUNTIME,
    Amounts,
    PodDecoder,
    decode_pod,
    pod_amounts,
    pod_ref,
    single_job,
)
from dagpilot.live.workflows import WorkflowDecoder
from dagpilot.workloads.argo_manifest import Where
from tests.live.objects import CREATED_S, pod, workflow

WHERE = Where("api", "pod ns/p")


def _container(requests: dict[str, str], limits: dict[str, str] | None = None,
               **extra: str) -> dict[str, object]:
    resources: dict[str, object] = {"requests": requests}
    if limits is not None:
        resources["limits"] = limits
    return {"name": "c", "resources": resources, **extra}


def test_requests_are_summed_over_containers_exactly() -> None:
    spec = {"containers": [_container({"cpu": "100m", "memory": "1.5Gi"}),
                           _container({"cpu": "0.2", "memory": "1e3"})]}
    assert pod_amounts(spec, WHERE) == Amounts(300, 3 * 2**29 + 1000, 0)


def test_a_limit_without_a_request_is_the_request_and_gpus_are_counted() -> None:
    spec = {"containers": [_container({"cpu": "1"}, {"cpu": "2", "nvidia.com/gpu": "2"})]}
    assert pod_amounts(spec, WHERE) == Amounts(1000, 0, 2)


def test_the_largest_init_container_wins_and_sidecars_add_to_the_containers() -> None:
    spec = {"containers": [_container({"cpu": "500m", "memory": "1Gi"})],
            "initContainers": [_container({"cpu": "2", "memory": "100Mi"}),
                               _container({"cpu": "100m", "memory": "64Mi"},
                                          restartPolicy="Always")],
            "overhead": {"cpu": "50m"}}
    # containers 500m + sidecar 100m = 600m < init 2000m; memory 1Gi + 64Mi > 100Mi
    assert pod_amounts(spec, WHERE) == Amounts(2050, 2**30 + 64 * 2**20, 0)


def test_a_pod_that_asks_nothing_asks_nothing() -> None:
    record = decode_pod(pod("p", cpu=None, memory=None))
    assert record.amounts == Amounts()
    assert record.task is not None and record.task.requests.cpu == 0.0


def test_the_record_reads_binding_phase_scheduler_and_creation_time() -> None:
    raw = pod("p", node_name="n1", phase="Running", scheduler="dagpilot")
    raw["status"]["conditions"] = [{"type": "PodScheduled", "status": "True",
                                    "lastTransitionTime": "2026-12-01T10:00:05Z"}]
    record = decode_pod(raw)
    assert (record.node, record.phase, record.scheduler, record.created_s, record.scheduled_s) \
        == ("n1", "Running", "dagpilot", CREATED_S, CREATED_S + 5)
    assert not record.terminal and decode_pod(pod("q", phase="Succeeded")).terminal


def test_a_single_pod_is_a_single_task_job_with_its_placement_rules_and_runtime() -> None:
    raw = pod("p", annotations={"dagpilot.io/runtime": "1m30s"},
              nodeSelector={"disk": "nvme"},
              tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}])
    record = decode_pod(raw)
    job = single_job(record)
    ref = pod_ref(record, 7, None, job)
    assert ref is not None and ref.job.id == "ns/p" and ref.task.id == "p"
    assert ref.runtime_s == 90.0 and ref.uid == 7 and ref.created_s == CREATED_S
    assert dict(ref.task.node_selector) == {"disk": "nvme"}
    assert ref.task.tolerations[0].effect is TaintEffect.NO_SCHEDULE


def test_a_workflow_pod_gets_its_task_from_the_workflow_dag() -> None:
    flow = WorkflowDecoder()(workflow())
    record = decode_pod(pod("diamond-123", workflow="diamond", argo_node="diamond.b(1:y)",
                            cpu="700m"))
    ref = pod_ref(record, 1, flow, None)
    assert ref is not None and ref.job is flow.job and ref.task.id == "b(1)"
    assert ref.requests.cpu == 0.7  # what the pod asks, not what the template said
    assert ref.task.parents == ("a",)
    assert ref.priority == 0


def test_a_workflow_pod_takes_its_own_priority_from_its_spec() -> None:
    # the API server resolved the pod's PriorityClass into spec.priority: that is what
    # kube-scheduler orders by, whatever the template said
    flow = WorkflowDecoder()(workflow())
    record = decode_pod(pod("diamond-123", workflow="diamond", argo_node="diamond.b(1:y)",
                            priority=1000))
    ref = pod_ref(record, 1, flow, None)
    assert ref is not None and ref.task.id == "b(1)" and ref.priority == 1000


@pytest.mark.parametrize(("field", "value", "named"), [
    ("cpu", "two", "spec.containers[0].resources.requests.cpu"),
    ("memory", "1Gb", "spec.containers[0].resources.requests.memory"),
])
def test_a_malformed_quantity_is_a_record_with_its_error(field: str, value: str,
                                                         named: str) -> None:
    raw = pod("p")
    raw["spec"]["containers"][0]["resources"]["requests"][field] = value
    record = decode_pod(raw)
    assert record.task is None and isinstance(record.error, InvalidInput)
    assert record.error.field == named and "pod ns/p" in str(record.error)
    assert pod_ref(record, 1, None, None) is None


def test_a_malformed_runtime_annotation_is_named() -> None:
    record = decode_pod(pod("p", annotations={"dagpilot.io/runtime": "soon"}))
    assert record.error is not None
    assert record.error.field == "metadata.annotations.dagpilot.io/runtime"


def _generation(raw: dict[str, Any], generation: int) -> dict[str, Any]:
    raw["metadata"]["generation"] = generation
    return raw


def test_the_watch_decoder_equals_decode_pod_and_reuses_a_generations_task() -> None:
    decoder = PodDecoder()
    first = decoder(_generation(pod("p", cpu="2"), 1))
    bound = _generation(pod("p", cpu="2", node_name="n1", phase="Running", version=2), 1)
    again = decoder(bound)
    assert again == decode_pod(bound) and again.node == "n1" and again.phase == "Running"
    assert again.task is first.task  # the same spec: decoded once
    resized = decoder(_generation(pod("p", cpu="3", node_name="n1", version=3), 2))
    assert resized.amounts == Amounts(3000, 256 * 2**20, 0)  # a new generation: read again
    noted = decoder(_generation(pod("p", cpu="3", annotations={RUNTIME: "90s"}), 2))
    assert noted.task is not None and noted.task.runtime_s == 90.0  # annotations count too


def test_the_watch_decoder_keeps_errors_and_decodes_pods_without_generation_in_full() -> None:
    decoder = PodDecoder(keep=1)
    bad = _generation(pod("p", cpu="two"), 1)
    assert str(decoder(bad).error) == str(decoder(bad).error) == str(decode_pod(bad).error)
    plain = pod("q", cpu="1")
    assert decoder(plain).task is not decoder(plain).task  # no generation: no reuse
    decoder(_generation(pod("r"), 1))  # keep=1: p is forgotten, r kept
    assert decoder(bad).error is not None
