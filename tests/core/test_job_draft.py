from __future__ import annotations

import math

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.core.job_draft import JobDraft, Severity, build, check
from dagpilot.core.types import Resources, Task


def task(task_id: str, parents: tuple[str, ...] = (), runtime: float = 10.0, cpu: float = 1.0,
         children: tuple[str, ...] = ()) -> Task:
    return Task(task_id, task_id, runtime, Resources(cpu, 2**30), parents, children)


def draft(*tasks: Task) -> JobDraft:
    result = JobDraft("wf.json", "job-1")
    for position, item in enumerate(tasks):
        result.add(item, f"tasks[{position}]")
    return result


def rules(found_draft: JobDraft) -> list[tuple[str, str]]:
    return [(v.rule, v.record) for v in check(found_draft)]


def test_diamond_builds_in_topological_order_with_children() -> None:
    job = build(draft(task("d", ("b", "c")), task("b", ("a",)), task("c", ("a",), 30.0),
                      task("a")))
    assert [t.id for t in job.tasks] == ["a", "b", "c", "d"]
    assert job.task("a").children == ("b", "c")
    assert job.critical_path_s == 50.0  # a 10 + c 30 + d 10
    assert job.b_levels == {"a": 50.0, "b": 20.0, "c": 40.0, "d": 10.0}
    assert job.depths == {"a": 0, "b": 1, "c": 1, "d": 2}
    assert job.total_work_core_s == 60.0
    assert job.source == "wf.json#job-1"


@pytest.mark.parametrize(
    ("tasks", "expected"),
    [
        ((task("a"), task("a")), [("dag.duplicate-id", "tasks[1]")]),
        ((task("a", ("ghost",)),), [("dag.unknown-parent", "tasks[0]")]),
        ((task("a", ("b",)), task("b", ("a",))), [("dag.cycle", "tasks[0]")]),
        ((task("a", ("a",)),), [("dag.cycle", "tasks[0]")]),
        ((task("a", runtime=-1.0),), [("field.runtime", "tasks[0]")]),
        ((task("a", runtime=math.nan),), [("field.runtime", "tasks[0]")]),
        ((task("a", cpu=-2.0),), [("field.requests", "tasks[0]")]),
        ((task("a", cpu=128_000.0),), [("field.units", "tasks[0]")]),
        ((task("a"), task("b")), [("dag.orphan", "tasks[0]"), ("dag.orphan", "tasks[1]")]),
        ((task("a", children=("b",)), task("b")), [("dag.children-mismatch", "tasks[1]")]),
        ((task("a", children=("zz",)),), [("dag.unknown-child", "tasks[0]")]),
        ((task("a"), task("b", ("a",))), []),
    ],
)
def test_rules_table(tasks: tuple[Task, ...], expected: list[tuple[str, str]]) -> None:
    assert rules(draft(*tasks)) == expected


def test_orphans_are_warnings_that_do_not_block_loading() -> None:
    found = check(draft(task("a"), task("b")))
    assert {v.severity for v in found} == {Severity.WARNING}
    assert len(build(draft(task("a"), task("b"))).tasks) == 2


def test_build_refuses_with_file_record_and_field() -> None:
    with pytest.raises(InvalidInput) as caught:
        build(draft(task("a"), task("b", ("ghost",))))
    assert (caught.value.file, caught.value.record, caught.value.field) == (
        "wf.json", "tasks[1]", "parents")
    assert "ghost" in str(caught.value)


def test_empty_job_is_refused() -> None:
    with pytest.raises(InvalidInput, match="no tasks"):
        build(JobDraft("x.csv", "empty"))


def test_duplicate_parent_references_collapse() -> None:
    job = build(draft(task("a"), task("b", ("a", "a"))))
    assert job.task("b").parents == ("a",)
    assert job.task("a").children == ("b",)


def test_a_wide_fan_in_with_recorded_children_is_checked_in_one_pass() -> None:
    """20,000 parents of one task, each listing it as a child: a tuple lookup per edge made the
    edge checks quadratic (the fuzzer's hang on a CWS trace with repeated rows)."""
    width = 20_000
    parents = tuple(f"p{i}" for i in range(width))
    found = draft(*(task(p, children=("sink",)) for p in parents), task("sink", parents))
    assert rules(found) == []


def test_thousands_of_copies_of_a_task_are_one_duplicate_each_not_quadratic() -> None:
    """A trace whose rows repeat: 3,000 copies of one task of 3,000 parents (one shared
    tuple) are reported as duplicates, and the edges are checked once per task id."""
    parents = tuple(f"p{i}" for i in range(3_000))
    copy = task("sink", parents)
    found = draft(*(task(p) for p in parents), *([copy] * 3_000))
    assert {rule for rule, _ in rules(found)} == {"dag.duplicate-id"}
    assert len(rules(found)) == 2_999
