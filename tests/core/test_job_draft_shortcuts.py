"""The shortcuts of `core.job_draft` find what the full rules find, and recorded children spare
`build` a copy of every task."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from dagpilot.core.job_draft import (
    JobDraft,
    Severity,
    _add_edge_violations,
    _add_orphans,
    _edges_consistent,
    _field_violations,
    _plainly_valid,
    build,
    check,
    children_of,
)
from dagpilot.core.types import Resources, Task

IDS = "abcde"
UNKNOWN = "z"  # never a task: an unknown parent or child


def test_children_come_in_task_order_once_each_and_skip_unknown_parents() -> None:
    parents = {"c": ("a", "b", "a"), "a": (), "b": ("a", "ghost"), "d": ("a",)}
    assert children_of(parents) == {"c": (), "a": ("c", "b", "d"), "b": ("c",), "d": ()}


def _draft(tasks: list[Task]) -> JobDraft:
    return JobDraft("f.json", "job", tasks, [f"tasks[{i}]" for i in range(len(tasks))])


def _task(task_id: str, parents: tuple[str, ...], children: tuple[str, ...] = ()) -> Task:
    return Task(task_id, task_id, 1.0, Resources(1.0, 1), parents, children)


@st.composite
def drafts(draw: st.DrawFn, *, unique: bool = False) -> JobDraft:
    """Small drafts: repeated or unknown ids, and children absent, recorded as `build` fills
    them in, or drawn at random."""
    ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=5, unique=unique))
    names = st.sampled_from([*ids, UNKNOWN]) if draw(st.booleans()) else st.sampled_from(ids)
    parents = [tuple(draw(st.lists(names, max_size=3))) for _ in ids]
    kind = draw(st.sampled_from(["none", "as build fills them", "drawn"]))
    if kind == "none":
        children = [() for _ in ids]
    elif kind == "drawn":
        children = [tuple(draw(st.lists(names, max_size=3))) for _ in ids]
    else:
        filled = children_of(dict(zip(ids, parents, strict=True)))
        children = [filled[task_id] for task_id in ids]
    return _draft([_task(*edges) for edges in zip(ids, parents, children, strict=True)])


@given(drafts())
def test_consistent_edges_mean_only_orphans(draft: JobDraft) -> None:
    index = {t.id: t for t in draft.tasks}
    records: dict[str, str] = {}
    for task, record in zip(draft.tasks, draft.records, strict=True):
        records.setdefault(task.id, record)
    named = {parent for task in draft.tasks for parent in task.parents}
    children = children_of({t.id: t.parents for t in draft.tasks})
    full: list[tuple[object, ...]] = []
    short: list[tuple[object, ...]] = []
    _add_edge_violations(draft, index, records, lambda *found: full.append(found))
    _add_orphans(draft, index, named, lambda *found: short.append(found))
    if _edges_consistent(draft, index, children, named):
        assert short == full


@given(drafts(unique=True))
def test_recorded_children_change_neither_the_rules_nor_the_job(draft: JobDraft) -> None:
    bare = _draft([_task(t.id, t.parents) for t in draft.tasks])
    filled = children_of({t.id: t.parents for t in bare.tasks})
    recorded = _draft([_task(t.id, t.parents, filled[t.id]) for t in bare.tasks])
    assert check(recorded) == check(bare)
    if not any(v.severity is Severity.ERROR for v in check(bare)):
        job = build(recorded)
        assert job == build(bare)
        loaded = {t.id: t for t in recorded.tasks}
        for task in job.tasks:  # copied only to drop a repeated parent
            repeats = len(set(loaded[task.id].parents)) < len(loaded[task.id].parents)
            assert (task is loaded[task.id]) != repeats


NUMBERS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [0.0, -0.0, 365 * 86_400.0, 4096.0, math.nan])


def _numbered(runtime: float, cpu: float, memory: int, gpus: int, *, runtimes: list[float],
              instances: int) -> Task:
    return Task("t", "t", runtime, Resources(cpu, memory, gpus), instances=instances,
                instance_runtimes_s=tuple(runtimes))


@given(st.builds(_numbered, NUMBERS, NUMBERS, st.integers(-1, 2**49), st.integers(-1, 70),
                 runtimes=st.lists(NUMBERS, max_size=2), instances=st.integers(-1, 2)))
def test_plainly_valid_tasks_break_no_field_rule(task: Task) -> None:
    found = _field_violations(_draft([task]), task, "tasks[0]")
    if _plainly_valid(task):
        assert not found
    if not task.instance_runtimes_s:  # with per-instance runtimes the full rules always run
        assert _plainly_valid(task) == (not found)
