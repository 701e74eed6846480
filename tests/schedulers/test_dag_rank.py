"""CWS rank: process hops to a sink of the process DAG."""

from __future__ import annotations

from dagpilot.core.types import Resources, Task
from dagpilot.schedulers.dag_rank import RankTable, process_of, process_ranks, task_ranks
from tests.schedulers.views import diamond, job

ONE = Resources(1, 2**30)


def test_task_level_ranks() -> None:
    assert task_ranks(diamond()) == {"t": 0, "x": 1, "y": 1, "z": 1, "s": 2}


def test_tags_are_stripped_to_the_process() -> None:
    assert process_of(Task("1", "NFCORE:FASTQC (sample_1)", 1, ONE)) == "NFCORE:FASTQC"
    assert process_of(Task("2", "MULTIQC", 1, ONE)) == "MULTIQC"


def test_tasks_of_one_process_share_its_rank() -> None:
    # FASTQC (a) feeds MULTIQC; FASTQC (b) has no children of its own at task level, but its
    # process does: both have rank 1, as in the CWS.
    work = job("J", [
        Task("f1", "FASTQC (a)", 1, ONE),
        Task("f2", "FASTQC (b)", 1, ONE),
        Task("m", "MULTIQC", 1, ONE, parents=("f1",)),
    ])
    assert task_ranks(work)["f2"] == 0
    assert process_ranks(work) == {"f1": 1, "f2": 1, "m": 0}
    assert RankTable().rank(work, "f2") == 1


def test_a_cyclic_process_graph_falls_back_to_tasks() -> None:
    work = job("J", [
        Task("a1", "A", 1, ONE),
        Task("b1", "B", 1, ONE, parents=("a1",)),
        Task("a2", "A", 1, ONE, parents=("b1",)),
    ])
    assert process_ranks(work) == {"a1": 2, "b1": 1, "a2": 0}
