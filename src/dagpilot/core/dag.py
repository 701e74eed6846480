"""Graph algorithms over a job's tasks: topological order, cycles, depth and b-level."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dagpilot.core.types import Task


def topological_order(parents: Mapping[str, Sequence[str]]) -> tuple[list[str], list[str]]:
    """Kahn's algorithm, stable in the given order. Returns (order, ids left on a cycle)."""
    children: dict[str, list[str]] = {node: [] for node in parents}
    missing = dict.fromkeys(parents, 0)
    for node, ups in parents.items():
        for up in set(ups):
            if up in children:
                children[up].append(node)
                missing[node] += 1
    ready = [node for node in parents if missing[node] == 0]
    order: list[str] = []
    while ready:
        batch, ready = ready, []
        for node in batch:
            order.append(node)
            for child in children[node]:
                missing[child] -= 1
                if missing[child] == 0:
                    ready.append(child)
    placed = set(order)
    return order, [node for node in parents if node not in placed]


def depths(tasks: Iterable[Task]) -> dict[str, int]:
    """Length of the longest chain of ancestors; sources have depth 0."""
    depth: dict[str, int] = {}
    for task in tasks:  # tasks come in topological order
        depth[task.id] = 1 + max((depth[p] for p in task.parents), default=-1)
    return depth


def b_levels(tasks: Sequence[Task]) -> dict[str, float]:
    """Longest runtime path from the start of each task to the end of its job."""
    level: dict[str, float] = {}
    for task in reversed(tasks):
        tail = max((level[c] for c in task.children), default=0.0)
        level[task.id] = task.longest_runtime_s + tail
    return level
