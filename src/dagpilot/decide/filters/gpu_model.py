"""GpuModel: a pod asking for GPUs of a model goes only where that many GPUs of that model are.

Kubernetes expresses this with a node selector on the GPU product label; here the model is
part of the request, so it is a filter of its own. Free GPU counts are NodeResourcesFit's job.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import ClassVar

from dagpilot.core.types import NodeSpec, Task
from dagpilot.decide.filters.base import SpecFilter


def gpus_of_model(spec: NodeSpec, model: str) -> int:
    if spec.gpus:
        return sum(1 for gpu in spec.gpus if gpu.model == model)
    # A node listed without per-GPU detail holds allocatable.gpus of one model.
    return spec.allocatable.gpus if spec.allocatable.gpu_model == model else 0


class GpuModel(SpecFilter):
    name: ClassVar[str] = "GpuModel"

    def key(self, task: Task) -> Hashable:
        return (task.requests.gpus, task.requests.gpu_model)

    def reasons(self, task: Task, spec: NodeSpec) -> tuple[str, ...]:
        wanted = task.requests
        if not wanted.gpus or wanted.gpu_model is None:
            return ()
        if gpus_of_model(spec, wanted.gpu_model) >= wanted.gpus:
            return ()
        return (f"node(s) didn't have {wanted.gpus} GPU(s) of model {wanted.gpu_model}",)
