"""Task-level dependencies of one Nextflow run, rebuilt from its process DAG and the task tags.

Nextflow records which process feeds which (the process DAG), not which task feeds which. nf-core
pipelines tag a task with the `meta.id` of the sample or group it works on, so tags link tasks:

1. Parent processes: the DAG's parents of a task's process; a parent process with no task in the
   run (skipped by the pipeline's options) is replaced by its own parents, recursively.
2. For a parent process A of a process B, a task of B matches the tasks of A whose tag
   - equals its tag (`sample1` <- `sample1`); else
   - extends its tag at a separator `_ - . : space` (a merge: `WT_REP1` <- `WT_REP1_T1`,
     `WT_REP1_T2`); else
   - is the longest prefix of its tag ending at a separator (a split: `bad9 - level 2` <- `bad9`).
   The untagged tag `-` matches nothing.
3. The relation A -> B is keyed when A has several tasks and at least one task of B matches some
   task of A. In a keyed relation each task of B depends on its matches; a task with no match
   got its input through another branch (a channel `mix`) when another parent process gives it
   an edge (counted as `channel_mixes`), and is unrebuilt otherwise.
   Otherwise (A has one task; or B is untagged or collects A's outputs: `collect`, `first`) every
   task of B depends on every task of A: a broadcast.
4. Only edges consistent with the recorded times are kept: the child was submitted at or after
   the parent completed. Tag edges pass this check on every run of the shared CWS traces;
   broadcasts overshoot where the true relation is one-to-one but untagged, or only the first
   output is used (`versions.first()`), and the check trims them to the parents that had
   completed. A time that is not recorded keeps the edge.
5. A (task, parent process) pair left with no edge is counted in `unrebuilt`.

A broadcast links every task of A to every task of B, so edges grow with the product of two
process sizes: `rebuild` stops with TooManyEdges once it would keep more than the `limit` it
is given (the caller's ceiling), having done work in proportion to that limit only.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

UNTAGGED = "-"
_SEPARATORS = re.compile(r"[_\-.: ]+")


class TooManyEdges(Exception):
    """The rebuild would keep more edges than its limit."""


class Traced(Protocol):
    """What the rebuild needs of a trace row (times in seconds, None when not recorded)."""

    @property
    def id(self) -> str: ...
    @property
    def process(self) -> str: ...
    @property
    def tag(self) -> str: ...
    @property
    def submit_s(self) -> float | None: ...
    @property
    def complete_s(self) -> float | None: ...


@dataclass(frozen=True, slots=True)
class TracedTask:
    """The plain `Traced`; the `cws` loader passes its rows, which have these fields too."""

    id: str
    process: str
    tag: str
    submit_s: float | None = None
    complete_s: float | None = None


@dataclass(frozen=True, slots=True)
class RebuildStats:
    """Counts of candidate and kept edges, and of dependencies that could not be rebuilt."""

    tag_edges: int = 0
    tag_edges_consistent: int = 0
    broadcast_edges: int = 0
    broadcast_edges_consistent: int = 0
    channel_mixes: int = 0
    unrebuilt: int = 0

    @property
    def kept_edges(self) -> int:
        return self.tag_edges_consistent + self.broadcast_edges_consistent

    def as_labels(self) -> dict[str, str]:
        return {"tag_edges": str(self.tag_edges),
                "tag_edges_consistent": str(self.tag_edges_consistent),
                "broadcast_edges": str(self.broadcast_edges),
                "broadcast_edges_consistent": str(self.broadcast_edges_consistent),
                "channel_mixes": str(self.channel_mixes),
                "unrebuilt_edges": str(self.unrebuilt)}


def boundary_prefixes(tag: str) -> list[str]:
    """The prefixes of a tag that end before a run of separators: `a_b - c` -> [`a`, `a_b`]."""
    return [tag[: m.start()] for m in _SEPARATORS.finditer(tag) if m.start() > 0]


def completed_before(parent: Traced, child: Traced) -> bool:
    """Whether the recorded times allow `parent` to feed `child` (True when a time is missing)."""
    if parent.complete_s is None or child.submit_s is None:
        return True
    return child.submit_s >= parent.complete_s


class _ProcessTasks:
    """The tasks of one process in a run, indexed by tag and by completion time."""

    def __init__(self, tasks: list[Traced]) -> None:
        self.tasks = tasks
        self.by_tag: dict[str, list[Traced]] = {}
        for task in tasks:
            self.by_tag.setdefault(task.tag, []).append(task)

    @cached_property
    def by_tag_prefix(self) -> dict[str, list[Traced]]:
        """Tasks by each boundary prefix of their tag; built on the first inexact lookup."""
        index: dict[str, list[Traced]] = {}
        for task in self.tasks:
            for prefix in boundary_prefixes(task.tag):
                index.setdefault(prefix, []).append(task)
        return index

    @cached_property
    def _by_completion(self) -> tuple[list[float], list[str], list[str]]:
        """Completion times in order, the ids of the timed tasks in that order, and the ids of
        the untimed tasks."""
        timed = sorted((t for t in self.tasks if t.complete_s is not None),
                       key=lambda t: t.complete_s or 0.0)
        untimed = [t.id for t in self.tasks if t.complete_s is None]
        return [t.complete_s or 0.0 for t in timed], [t.id for t in timed], untimed

    @cached_property
    def ids(self) -> list[str]:
        return [t.id for t in self.tasks]

    def matching(self, tag: str) -> list[Traced]:
        if tag == UNTAGGED:
            return []
        if tag in self.by_tag:
            return self.by_tag[tag]
        if tag in self.by_tag_prefix:
            return self.by_tag_prefix[tag]
        for prefix in reversed(boundary_prefixes(tag)):
            if prefix in self.by_tag:
                return self.by_tag[prefix]
        return []

    def completed_by(self, child: Traced) -> list[str]:
        """The ids of the tasks that may have fed `child`: completed by its submission, or
        untimed."""
        if child.submit_s is None:
            return self.ids
        completes, timed, untimed = self._by_completion
        return timed[: bisect.bisect_right(completes, child.submit_s)] + untimed


def effective_parents(process_parents: Mapping[str, Sequence[str]],
                      present: Sequence[str]) -> dict[str, list[str]]:
    """The parent processes of each present process, walking through processes with no task.

    A process is never its own parent (a self-loop cannot order tasks of one process).
    """
    members = set(present)
    result: dict[str, list[str]] = {}
    for process in present:
        found: dict[str, None] = {}
        stack, seen = list(process_parents.get(process, ())), {process}
        while stack:
            parent = stack.pop(0)
            if parent in seen:
                continue
            seen.add(parent)
            if parent in members:
                found[parent] = None
            else:
                stack.extend(process_parents.get(parent, ()))
        result[process] = list(found)
    return result


def rebuild(tasks: Sequence[Traced], process_parents: Mapping[str, Sequence[str]],
            limit: int | None = None) -> tuple[dict[str, list[str]], RebuildStats]:
    """The parents of every task (by id) and the counts of the rebuild (see the module doc);
    TooManyEdges once more than `limit` edges would be kept."""
    by_process: dict[str, list[Traced]] = {}
    for task in tasks:
        by_process.setdefault(task.process, []).append(task)
    indexed = {process: _ProcessTasks(members) for process, members in by_process.items()}
    parents: dict[str, list[str]] = {task.id: [] for task in tasks}
    counts = dict.fromkeys(("tag", "tag_ok", "broadcast", "broadcast_ok", "unrebuilt"), 0)
    unmatched: list[str] = []
    for process, ups in effective_parents(process_parents, list(by_process)).items():
        for up in ups:
            unmatched += _link(indexed[up], by_process[process], parents, counts, limit)
    mixes = sum(1 for task_id in unmatched if parents[task_id])
    stats = RebuildStats(counts["tag"], counts["tag_ok"], counts["broadcast"],
                         counts["broadcast_ok"], mixes,
                         counts["unrebuilt"] + len(unmatched) - mixes)
    return parents, stats


def _link(source: _ProcessTasks, children: list[Traced], parents: dict[str, list[str]],
          counts: dict[str, int], limit: int | None) -> list[str]:
    """Add the edges from one parent process to the tasks of one child process.

    Returns the children of a keyed relation that matched no tag (mixes or unrebuilt).
    """
    matches: dict[str, list[Traced]] = {}
    if len(source.tasks) > 1:  # a one-task parent process is never keyed
        matches = {child.id: source.matching(child.tag) for child in children}
    keyed = any(matches.values())
    if not keyed:
        counts["broadcast"] += len(source.tasks) * len(children)
    unmatched: list[str] = []
    for child in children:
        if keyed:
            candidates = matches[child.id]
            if not candidates:
                unmatched.append(child.id)
                continue
            kept = [p.id for p in candidates if completed_before(p, child)]
            counts["tag"] += len(candidates)
            counts["tag_ok"] += len(kept)
        else:
            kept = source.completed_by(child)
            counts["broadcast_ok"] += len(kept)
        if not kept:
            counts["unrebuilt"] += 1
        if limit is not None and counts["tag_ok"] + counts["broadcast_ok"] > limit:
            raise TooManyEdges(f"more than {limit:,} task dependencies")
        parents[child.id] += kept
    return unmatched
