"""Keys under which pods are interchangeable, so masks and scores can be computed once per key."""

from __future__ import annotations

from collections.abc import Hashable

from dagpilot.core.types import Task


def constraint_key(task: Task) -> Hashable:
    """What the static filters and scores read: the GPU model, node selector, tolerations and
    affinity. Two tasks with one key pass the same static filters on every node."""
    model = task.requests.gpu_model if task.requests.gpus else None
    return (model, task.node_selector, task.tolerations, task.affinity)


def placement_key(task: Task) -> Hashable:
    """Everything in the pod spec that a filter or a request-based score reads."""
    return (task.requests, task.limits, task.node_selector, task.tolerations, task.affinity)
