"""A task's profile as pod annotations, both ways; bad annotations are named; a rendered pod."""

from __future__ import annotations

import dataclasses

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.core.types import Resources, Task, TaskClass
from dagpilot.live.pods import decode_pod
from dagpilot.live.task_annotations import RUNTIME, annotations_of, task_of


def test_a_profile_survives_the_round_trip() -> None:
    task = Task("t", "t", 90.0, Resources(2, 2**30), cpu_intensity=0.5, membw_intensity=0.7,
                io_intensity=0.2, comm_group="shuffle", comm_share=0.3,
                task_class=TaskClass.MEMORY, peak_memory=3 * 2**30, read_bytes=10,
                written_bytes=20)
    notes = annotations_of(task)
    assert notes[RUNTIME] == "90s"
    assert task_of("t", notes, task.requests, "ns/p") == task


@pytest.mark.parametrize(("key", "value"), [
    (RUNTIME, "soon"), (RUNTIME, "-5s"), ("dagpilot.io/membw-intensity", "nan"),
    ("dagpilot.io/io-intensity", "1.5"), ("dagpilot.io/peak-memory", "1e400"),
    ("dagpilot.io/task-class", "quantum"),
])
def test_a_bad_annotation_is_named(key: str, value: str) -> None:
    notes = {RUNTIME: "10s", key: value}
    with pytest.raises(InvalidInput, match=rf"ns/p: field 'metadata.annotations.{key}'"):
        task_of("t", notes, Resources(1, 1), "ns/p")


def test_a_missing_runtime_is_named() -> None:
    with pytest.raises(InvalidInput, match="missing"):
        task_of("t", {}, Resources(1, 1), "ns/p")


def test_a_rendered_pod_carries_the_tasks_requests_constraints_and_profile() -> None:
    from dagpilot.core.types import NodeAffinity, Requirement, TaintEffect, Toleration
    from dagpilot.live.pod_manifest import pod_manifest

    task = Task("train", "train", 60.0, Resources(8, 64 * 2**30, 2, "A100"),
                membw_intensity=0.4, node_selector=(("disk", "nvme"),),
                tolerations=(Toleration("nvidia.com/gpu", "Exists", "",
                                        TaintEffect.NO_SCHEDULE),),
                affinity=NodeAffinity(preferred=((3, (Requirement("zone", "In", ("a",)),)),)))
    pod = pod_manifest(task, "p", scheduler="dagpilot")
    assert pod["spec"]["schedulerName"] == "dagpilot"
    assert pod["spec"]["nodeSelector"] == {"disk": "nvme", "nvidia.com/gpu.product": "A100"}
    record = decode_pod({**pod, "metadata": {**pod["metadata"], "namespace": "ns"}})
    # The GPU model travels as the node selector, as in every Argo pod; not in the requests.
    assert record.task is not None
    assert record.task.requests == dataclasses.replace(task.requests, gpu_model=None)
    assert pod["spec"]["tolerations"] == [{"operator": "Exists", "key": "nvidia.com/gpu",
                                          "effect": "NoSchedule"}]
    preferred = pod["spec"]["affinity"]["nodeAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"]
    assert preferred == [{"weight": 3, "preference": {"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a"]}]}}]
    back = task_of("train", pod["metadata"]["annotations"], task.requests, "p")
    assert (back.runtime_s, back.membw_intensity) == (60.0, 0.4)
