"""Hand-built nodes, jobs and settings for the simulator tests, and a trivial scheduler."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from dagpilot.core.config import PhysicsSwitches, SimSettings
from dagpilot.core.job_draft import JobDraft, build
from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster, Gpu, Job, NodeSpec, Resources, Task
from dagpilot.core.view import ClusterView

GIB = 2**30
NO_PHYSICS = PhysicsSwitches(False, False, False, False, False, False, False)


def node(name: str, cpu: float = 4.0, memory: int = 16 * GIB, **fields: Any) -> NodeSpec:
    gpus = fields.pop("gpus", ())
    model = gpus[0].model if gpus else None
    return NodeSpec(name, Resources(cpu, memory, len(gpus), model), gpus=gpus, **fields)


def gpus(model: str, per_complex: tuple[int, ...]) -> tuple[Gpu, ...]:
    complexes = [c for c, count in enumerate(per_complex) for _ in range(count)]
    return tuple(Gpu(i, model, c) for i, c in enumerate(complexes))


def cluster(*nodes: NodeSpec) -> Cluster:
    return Cluster("test", nodes)


def task(task_id: str, runtime_s: float, cpu: float = 1.0, memory: int = GIB,
         parents: tuple[str, ...] = (), **fields: Any) -> Task:
    requests = Resources(cpu, memory, fields.pop("gpus", 0), fields.pop("gpu_model", None))
    return Task(task_id, task_id, runtime_s, requests, parents=parents, **fields)


def job(job_id: str, *tasks: Task, arrival_s: float = 0.0) -> Job:
    draft = JobDraft("test", job_id, arrival_s=arrival_s)
    for one in tasks:
        draft.add(one, one.id)
    return build(draft)


def settings(switches: PhysicsSwitches = NO_PHYSICS, **changes: Any) -> SimSettings:
    """No overheads, no physics unless asked: times in the tests can be worked out by hand."""
    base = SimSettings(physics=switches, poll_interval_s=0.0, submit_latency_s=0.0,
                       startup_median_s=0.0, retry_backoff_s=10.0)
    return dataclasses.replace(base, **changes)


def only(**on: bool) -> PhysicsSwitches:
    """Physics with just the named effects on."""
    return dataclasses.replace(NO_PHYSICS, enabled=True, **on)


class FirstFit:
    """Oldest pending pod first, on the first ready node where its requests fit."""

    name = "first-fit"

    def reset(self, cluster: Cluster, rng: np.random.Generator) -> None:
        del cluster, rng

    def decide(self, view: ClusterView) -> Placement | None:
        allocatable, allocated = view.resource_arrays()
        for pod in view.pending:
            requests = pod.requests
            for index, state in enumerate(view.nodes):
                free = allocatable[index] - allocated[index]
                model_ok = (not requests.gpus or requests.gpu_model is None
                            or state.spec.allocatable.gpu_model == requests.gpu_model)
                if (state.ready and model_ok and free[0] >= requests.cpu - 1e-9
                        and free[1] >= requests.memory and free[2] >= requests.gpus):
                    return Placement(pod, state.spec.name)
        return None
