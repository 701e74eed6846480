"""The scheduler registry: every name builds a Scheduler that places a small DAG soundly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dagpilot.core.errors import SpecError
from dagpilot.core.types import Job, NodeSpec, Task
from dagpilot.schedulers import SCHEDULERS, build
from tests.schedulers.views import TinyRun, diamond, job, node, task, two_nodes

BASELINES = ["kube-default", "fifo", "random", "sjf-cp", "heft", "tetris", "load-aware",
             "physics-rules"]


def test_every_baseline_is_registered() -> None:
    assert set(BASELINES) <= set(SCHEDULERS)
    assert len(SCHEDULERS) == len(BASELINES) + 21


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_each_scheduler_runs_two_jobs_to_the_end(name: str) -> None:
    # TinyRun refuses any placement that does not fit; every pod must be placed exactly once.
    jobs = [diamond(), job("K", [task("p", 2, 15), task("q", 1, 5, ["p"])], arrival_s=3)]
    scheduler = build(name)
    assert scheduler.name == name
    placements = TinyRun(jobs, [*two_nodes(), node("c", 1)], scheduler, seed=1).run()
    assert sorted(p for _, p, _ in placements) == ["J/s", "J/t", "J/x", "J/y", "J/z", "K/p", "K/q"]


def test_unknown_scheduler_names_the_known_ones() -> None:
    with pytest.raises(SpecError, match="kube-default"):
        build("kube-defualt")


@st.composite
def small_workloads(draw: st.DrawFn) -> tuple[list[Job], list[NodeSpec]]:
    jobs = []
    for j in range(draw(st.integers(1, 3))):
        tasks: list[Task] = []
        for i in range(draw(st.integers(1, 6))):
            parents = draw(st.lists(st.sampled_from([t.id for t in tasks]), max_size=2,
                                    unique=True)) if tasks else []
            tasks.append(task(f"t{i}", draw(st.sampled_from([0.5, 1, 2, 3])),
                              draw(st.integers(1, 30)), parents,
                              memory_gib=draw(st.sampled_from([0.5, 1, 4]))))
        jobs.append(job(f"j{j}", tasks, arrival_s=draw(st.integers(0, 20))))
    nodes = [node(f"n{i}", draw(st.sampled_from([3, 4, 8])), cpu_speed=draw(
        st.sampled_from([1.0, 2.0]))) for i in range(draw(st.integers(1, 3)))]
    return jobs, nodes


@settings(max_examples=12, deadline=None)
@given(small_workloads())
def test_every_scheduler_places_every_pod_once_where_it_fits(
        workload: tuple[list[Job], list[NodeSpec]]) -> None:
    jobs, nodes = workload
    expected = sorted(f"{j.id}/{t.id}" for j in jobs for t in j.tasks)
    for name in SCHEDULERS:
        placements = TinyRun(jobs, nodes, build(name), seed=0).run()  # refuses misfits
        assert sorted(p for _, p, _ in placements) == expected, name
