"""Which tasks a candidate's job graph holds, in which order, and what each slot says."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dagpilot.core.types import Job
from dagpilot.state.job_graph import BLOCKED, EMPTY, FINISHED, READY, job_graphs, relevant_tasks
from dagpilot.state.job_statics import JobStatics, progress
from dagpilot.state.schema import GRAPH, POSITION
from tests.sim.helpers import job, task


def wide() -> Job:
    """s -> r1 (b 40), r2 (b 70), r3 (b 25); r1 -> x; r2 -> y -> z; r3 -> z.

    runtimes: s 5, r1 10, r2 20, r3 5, x 30, y 30, z 20.
    """
    return job("w",
               task("s", 5.0),
               task("r1", 10.0, parents=("s",)),
               task("r2", 20.0, parents=("s",), comm_group="g"),
               task("r3", 5.0, parents=("s",)),
               task("x", 30.0, parents=("r1",)),
               task("y", 30.0, parents=("r2",)),
               task("z", 20.0, parents=("y", "r3"), cpu=4.0))


def ids(one: Job, positions: list[int] | np.ndarray) -> list[str]:
    return [one.tasks[p].id for p in list(positions)]


def test_progress_marks_finished_ready_and_blocked() -> None:
    one = wide()
    statics = JobStatics.of(one)
    now = progress(statics, frozenset({"s"}))
    assert ids(one, np.flatnonzero(now.finished)) == ["s"]
    assert ids(one, np.flatnonzero(now.ready)) == ["r1", "r2", "r3"]
    assert ids(one, np.flatnonzero(now.blocked)) == ["x", "y", "z"]
    assert now.remaining_work == pytest.approx(115.0 + 3 * 20.0)  # z has 4 cores
    assert now.group_active_share.tolist() == [1.0]


def test_relevant_order_ready_by_b_level_then_descendants_then_inputs() -> None:
    one = wide()
    statics = JobStatics.of(one)
    now = progress(statics, frozenset({"s"}))
    # b-levels: r1 40, r2 70, r3 25; hop 1: x 30, y 50, z 20; inputs: s
    assert ids(one, relevant_tasks(statics, now, 10)) == [
        "r2", "r1", "r3", "y", "x", "z", "s"]
    assert ids(one, relevant_tasks(statics, now, 4)) == ["r2", "r1", "r3", "y"]
    assert ids(one, relevant_tasks(statics, now, 2)) == ["r2", "r1"]


def test_descendants_come_nearest_first() -> None:
    one = wide()
    statics = JobStatics.of(one)
    now = progress(statics, frozenset({"s", "r2", "r3"}))  # ready: r1, y
    # ready by b-level (y 50, r1 40), their children (x 30, z 20), then the finished inputs
    # of ready tasks (s 75, r2 70); r3 finished but feeds no ready task.
    assert ids(one, relevant_tasks(statics, now, 10)) == ["y", "r1", "x", "z", "s", "r2"]


def test_a_graph_puts_the_candidate_first_and_pads() -> None:
    one = wide()
    statics = JobStatics.of(one)
    now = progress(statics, frozenset({"s"}))
    r3 = statics.index_of["r3"]
    (graph,) = job_graphs(statics, now, [r3], 8)
    assert ids(one, graph.tasks) == ["r3", "r2", "r1", "y", "x", "z", "s"]
    assert graph.valid.tolist() == [True] * 7 + [False]
    assert graph.status.tolist() == [READY, READY, READY, BLOCKED, BLOCKED, BLOCKED,
                                     FINISHED, EMPTY]
    features = graph.features
    assert features[:, GRAPH.index("is_candidate")].tolist() == [1, 0, 0, 0, 0, 0, 0, 0]
    assert features[:, GRAPH.index("status_ready")].tolist() == [1, 1, 1, 0, 0, 0, 0, 0]
    assert features[:, GRAPH.index("status_finished")].tolist() == [0, 0, 0, 0, 0, 0, 1, 0]
    assert features[:, GRAPH.index("comm_group_member")].tolist() == [0, 1, 0, 0, 0, 0, 0, 0]
    assert features[5, GRAPH.index("cpu_request_cores")] == 4.0
    assert features[0, GRAPH.index("runtime_log1p_s")] == pytest.approx(math.log1p(5.0))
    assert (features[7] == 0).all() and (graph.positions[7] == 0).all()


def test_positions_are_the_tasks_place_in_the_dag() -> None:
    one = wide()
    statics = JobStatics.of(one)
    now = progress(statics, frozenset())
    z = statics.index_of["z"]
    (graph,) = job_graphs(statics, now, [z], 3)
    assert ids(one, graph.tasks) == ["z", "s", "r2"]
    position = graph.positions[0]
    assert position[POSITION.index("depth_share")] == pytest.approx(1.0)  # depth 3 of 3
    assert position[POSITION.index("parents_log1p")] == pytest.approx(math.log1p(2))
    assert position[POSITION.index("children_log1p")] == 0.0
    assert position[POSITION.index("b_level_share")] == pytest.approx(20 / 75)
    source = graph.positions[1]
    assert source[POSITION.index("depth_share")] == 0.0
    assert source[POSITION.index("children_log1p")] == pytest.approx(math.log1p(3))
    assert source[POSITION.index("b_level_share")] == 1.0
    assert graph.status.tolist() == [BLOCKED, READY, BLOCKED]


def test_candidates_of_one_job_share_rows_but_not_their_first_slot() -> None:
    one = wide()
    statics = JobStatics.of(one)
    now = progress(statics, frozenset({"s"}))
    r1, r2 = statics.index_of["r1"], statics.index_of["r2"]
    first, second, again = job_graphs(statics, now, [r1, r2, r1], 4)
    assert ids(one, first.tasks) == ["r1", "r2", "r3", "y"]
    assert ids(one, second.tasks) == ["r2", "r1", "r3", "y"]
    assert np.array_equal(first.features, again.features)
    flag = GRAPH.index("is_candidate")
    r2_row = second.features[0].copy()
    r2_row[flag] = 0.0
    assert np.array_equal(first.features[1], r2_row)
    assert first.features[:, flag].tolist() == second.features[:, flag].tolist() == [1, 0, 0, 0]
