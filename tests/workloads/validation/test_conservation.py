"""Resource conservation: the sweep over one node's usages, table-tested."""

from __future__ import annotations

import math

import pytest

from dagpilot.core.types import Resources
from dagpilot.workloads.validation.conservation import Usage, overloads

GIB = 2**30
NODE_64 = Resources(cpu=64.0, memory=256 * GIB, gpus=8)


def cpus(start: float, end: float, cpu: float, task: str = "t") -> Usage:
    return Usage(start, end, Resources(cpu=cpu), task, f"record {task}")


@pytest.mark.parametrize(("usages", "expected"), [
    # (start, end, resource, peak) of each episode
    ([cpus(0, 10, 128)], [(0, 10, "cpu", 128)]),  # 128 CPUs on a 64-CPU node
    ([cpus(0, 10, 32), cpus(0, 10, 32)], []),  # exactly at capacity
    ([cpus(0, 10, 64), cpus(10, 20, 64)], []),  # back to back: end == start is no overlap
    ([cpus(0, 10, 40), cpus(5, 20, 40)], [(5, 10, "cpu", 80)]),  # overlap 5..10
    ([cpus(0, 10, 40), cpus(5, 20, 40), cpus(8, 30, 40)], [(5, 20, "cpu", 120)]),  # one episode
    ([cpus(0, 10, 40), cpus(5, 10, 40), cpus(20, 30, 40), cpus(25, 30, 40)],
     [(5, 10, "cpu", 80), (25, 30, "cpu", 80)]),  # two separate episodes
    ([cpus(0, 0, 128)], []),  # zero length: never held
    ([cpus(10, 5, 128)], []),  # end before start: a broken record, reported elsewhere
    ([cpus(math.nan, 5, 128)], []),
    ([Usage(0, 10, Resources(cpu=1, memory=200 * GIB)),
      Usage(5, 10, Resources(cpu=1, memory=100 * GIB))], [(5, 10, "memory", 300 * GIB)]),
    ([Usage(0, 10, Resources(cpu=1, gpus=8)), Usage(2, 4, Resources(cpu=1, gpus=1))],
     [(2, 4, "gpus", 9)]),
    ([], []),
])
def test_overload_episodes(usages: list[Usage],
                           expected: list[tuple[float, float, str, float]]) -> None:
    found = overloads("node8", NODE_64, usages)
    assert [(o.start_s, o.end_s, o.resource, o.peak) for o in found] == expected
    assert all(o.node == "node8" for o in found)


def test_fractional_requests_summing_to_capacity_are_not_an_overload() -> None:
    node = Resources(cpu=31.9, memory=125 * GIB)
    usages = [cpus(0, 10, 0.1, f"t{i}") for i in range(319)]
    assert overloads("cpu05", node, usages) == []
    assert len(overloads("cpu05", node, [*usages, cpus(0, 10, 0.1, "one-more")])) == 1


def test_an_episode_names_the_task_that_opened_it_and_the_values() -> None:
    usages = [cpus(0, 100, 24, "a"), cpus(50, 60, 16, "b"), cpus(55, 58, 1, "c")]
    [episode] = overloads("node8", Resources(cpu=31.9, memory=125 * GIB), usages)
    assert (episode.start_s, episode.end_s, episode.peak) == (50, 60, 41)
    assert episode.opened_by.task == "b"
    assert episode.opened_by.record == "record b"
    assert episode.describe() == ("node8 at t=50 s for 10 s: 41.0 CPUs requested > 31.9 "
                                  "allocatable (peak; opened by task 'b')")


def test_memory_is_described_in_gib() -> None:
    usages = [Usage(0, 10, Resources(cpu=1, memory=300 * GIB), "big")]
    [episode] = overloads("n", NODE_64, usages)
    assert "300.0 GiB memory requested > 256.0 GiB allocatable" in episode.describe()
