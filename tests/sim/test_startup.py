"""Start-up slots: pods bound to one node start one after another (worked out by hand)."""

from __future__ import annotations

import numpy as np
import pytest

from dagpilot.sim import simulate
from dagpilot.sim.engine import StartupDelays
from dagpilot.sim.startup import StartupSlots
from tests.sim.helpers import FirstFit, cluster, job, node, settings, task


def slots(count: int, nodes: int = 1, delay_s: float = 3.0) -> StartupSlots:
    return StartupSlots(StartupDelays(np.random.default_rng(0), delay_s, 0.0), nodes, count)


def test_without_slots_start_ups_never_wait() -> None:
    line = slots(0)
    assert [line.start_time(0, 0.0) for _ in range(3)] == [3.0, 3.0, 3.0]


def test_one_slot_starts_pods_in_sequence() -> None:
    line = slots(1, nodes=2)
    assert [line.start_time(0, 0.0) for _ in range(3)] == [3.0, 6.0, 9.0]
    assert line.start_time(1, 1.0) == 4.0  # another node has its own slot
    assert line.start_time(0, 20.0) == 23.0  # the slot was free again by then
    assert line.start_time(0, 21.0) == 26.0


def test_two_slots_start_two_at_a_time() -> None:
    line = slots(2)
    assert [line.start_time(0, 0.0) for _ in range(5)] == [3.0, 3.0, 6.0, 6.0, 9.0]


def test_clear_frees_every_slot_of_a_node() -> None:
    line = slots(1, nodes=2)
    line.start_time(0, 0.0)
    line.start_time(1, 0.0)
    line.clear(0)
    assert line.start_time(0, 1.0) == 4.0
    assert line.start_time(1, 1.0) == 6.0


def test_slots_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="slots"):
        slots(-1)


def test_a_node_starts_its_pods_one_by_one_in_a_run() -> None:
    burst = job("j", *(task(name, 10) for name in "abc"))
    overheads = settings(startup_median_s=3.0, startup_sigma=0.0, startup_slots_per_node=1)
    record = simulate([burst], cluster(node("n")), FirstFit(), overheads, seed=0)
    assert [(p.task_id, p.bound_s, p.started_s, p.finished_s) for p in record.pods] == [
        ("a", 0.0, 3.0, 13.0), ("b", 0.0, 6.0, 16.0), ("c", 0.0, 9.0, 19.0)]
    parallel = simulate([burst], cluster(node("n")), FirstFit(),
                        settings(startup_median_s=3.0, startup_sigma=0.0), seed=0)
    assert {p.started_s for p in parallel.pods} == {3.0}
