"""Every physical effect against numbers worked out by hand, and with its switch off."""

from __future__ import annotations

import pytest

from dagpilot.core.config import PhysicsParameters
from dagpilot.core.types import DiskKind, Resources
from dagpilot.sim import physics
from tests.sim.helpers import GIB, gpus, node, task

P = PhysicsParameters()


@pytest.mark.parametrize(("utilisation", "expected"),
                         [(0.0, 0.0), (0.3, 0.0), (0.65, 0.5), (1.0, 1.0), (1.5, 1.0)])
def test_mbpi(utilisation: float, expected: float) -> None:
    assert physics.mbpi(utilisation) == pytest.approx(expected)


@pytest.mark.parametrize(("utilisation", "expected"), [
    (0.5, 1.0),
    (0.75, 1.0),  # the knee
    (0.8225, 1.0 + 2.2 * 0.25),  # half-way from the knee to u(MBPI = 0.85) = 0.895
    (0.895, 3.2),  # MBPI 0.85: cache misses about 3.2x
    (0.95, 3.2),
    (1.5, 3.2 * 1.5),  # over-subscribed channels are shared
])
def test_membw_multiplier(utilisation: float, expected: float) -> None:
    assert physics.membw_multiplier(utilisation, P) == pytest.approx(expected)


def test_memory_bandwidth_factor_applies_to_the_memory_bound_share_only() -> None:
    assert physics.memory_bandwidth_factor(0.5, 0.895, P, on=True) == pytest.approx(2.1)
    assert physics.memory_bandwidth_factor(0.0, 0.895, P, on=True) == 1.0
    assert physics.memory_bandwidth_factor(0.5, 0.895, P, on=False) == 1.0


def test_pod_membw_demand_is_intensity_times_busy_cores_times_per_core_rate() -> None:
    busy = task("t", 10, cpu=4, cpu_intensity=0.5, membw_intensity=0.5)
    assert physics.pod_membw_demand(busy, P) == pytest.approx(0.5 * 2 * 8e9)


def test_pod_iops_from_bytes_or_from_intensity() -> None:
    recorded = task("t", 10, read_bytes=100 * 256 * 2**10)
    assert physics.pod_iops(recorded, 10.0, P) == pytest.approx(10.0)
    unrecorded = task("u", 10, io_intensity=0.5)
    assert physics.pod_iops(unrecorded, 10.0, P) == pytest.approx(500.0)


@pytest.mark.parametrize(("demand", "iops", "expected"), [
    (0.0, 30_000.0, 2.0),
    (15_000.0, 30_000.0, 4.0),  # rho 0.5: twice the service time
    (27_000.0, 30_000.0, 20.0),  # rho 0.9
    (4_000.0, 2_000.0, 2.0 / 0.01 * 2.0 / 0.99),  # collapsed pool, overloaded twice over
    (10.0, 0.0, 2.0 / 0.01 * float("inf")),
])
def test_io_await_is_mm1_with_an_overload_tail(demand: float, iops: float,
                                               expected: float) -> None:
    assert physics.io_await_ms(demand, iops, 2.0) == pytest.approx(expected)


@pytest.mark.parametrize(("await_ms", "level"),
                         [(2.0, 0), (9.99, 0), (10.0, 1), (49.0, 1), (50.0, 2), (199.0, 2),
                          (200.0, 3), (5_000.0, 3)])
def test_await_levels(await_ms: float, level: int) -> None:
    assert physics.await_level(await_ms, P) == level


def test_storage_io_factor_by_level_and_off() -> None:
    assert [physics.storage_io_factor(0.5, level, P, on=True) for level in range(4)] == [
        pytest.approx(1.0), pytest.approx(1.25), pytest.approx(2.0), pytest.approx(3.5)]
    assert physics.storage_io_factor(0.5, 3, P, on=False) == 1.0


def test_service_times_by_disk_kind() -> None:
    assert physics.service_ms(DiskKind.NETWORK, P) == 2.0
    assert physics.service_ms(DiskKind.NVME, P) == 0.1


def test_distances_and_rtts() -> None:
    a = node("a", zone="z1", rack="r1")
    b = node("b", zone="z1", rack="r1")
    c = node("c", zone="z1", rack="r2")
    d = node("d", zone="z2", rack="r1")
    assert [physics.distance(a, x) for x in (a, b, c, d)] == [
        physics.SAME_NODE, physics.SAME_RACK, physics.CROSS_RACK, physics.CROSS_ZONE]
    assert [physics.rtt_ms(level, P) for level in range(4)] == [0.05, 0.1, 0.8, 2.0]
    assert physics.rtt_ms(physics.CROSS_RACK, P) == 8 * physics.rtt_ms(physics.SAME_RACK, P)


@pytest.mark.parametrize(("nodes", "racks", "zones", "level"), [
    (1, 1, 1, physics.SAME_NODE), (2, 1, 1, physics.SAME_RACK), (3, 2, 1, physics.CROSS_RACK),
    (2, 2, 2, physics.CROSS_ZONE)])
def test_group_distance_is_the_worst_pair(nodes: int, racks: int, zones: int,
                                          level: int) -> None:
    assert physics.group_distance(nodes, racks, zones) == level


def test_network_multiplier_honours_the_41_percent_seed_figure() -> None:
    cross_rack = physics.network_multiplier(0.8, P, on=True)
    assert cross_rack == pytest.approx(1.7)
    assert 1 - 1 / cross_rack == pytest.approx(0.41, abs=0.005)
    assert physics.network_multiplier(0.1, P, on=True) == 1.0
    assert physics.network_multiplier(0.05, P, on=True) == 1.0  # never a speed-up
    assert physics.network_multiplier(2.0, P, on=True) == pytest.approx(2.9)
    assert physics.network_multiplier(2.0, P, on=False) == 1.0


def test_pcie_multiplier_across_root_complexes() -> None:
    gpu_node = node("g", gpus=gpus("A100", (4, 4)))
    assert physics.pcie_multiplier(gpu_node, (0, 1), P, on=True) == 1.0
    assert physics.pcie_multiplier(gpu_node, (3, 4), P, on=True) == 5.0
    assert physics.pcie_multiplier(gpu_node, (5,), P, on=True) == 1.0
    assert physics.pcie_multiplier(gpu_node, (3, 4), P, on=False) == 1.0


def test_communication_factor_honours_the_63_percent_seed_figure() -> None:
    spanning = physics.communication_factor(0.425, 1.0, 5.0)
    assert spanning == pytest.approx((1 - 0.425) + 5 * 0.425)
    assert 1 - 1 / spanning == pytest.approx(0.63, abs=0.005)
    assert physics.communication_factor(0.5, 1.7, 1.0) == pytest.approx(1.35)
    assert physics.communication_factor(0.0, 1.7, 5.0) == 1.0


def test_memory_footprint_splits_page_cache_off_the_working_set() -> None:
    unrecorded = task("t", 10, memory=10 * GIB, io_intensity=0.5)
    assert physics.memory_footprint(unrecorded, P, on=True) == (10 * GIB, 4 * GIB)
    recorded = task("r", 10, memory=4 * GIB, io_intensity=0.5, peak_memory=14 * GIB)
    assert physics.memory_footprint(recorded, P, on=True) == (10 * GIB, 4 * GIB)
    io_bound = task("i", 10, memory=GIB, io_intensity=1.0)
    working, cache = physics.memory_footprint(io_bound, P, on=True)
    assert (working + cache) / working == pytest.approx(1.8)  # the page-cache pollution mark
    assert physics.memory_footprint(recorded, P, on=False) == (4 * GIB, 0)


def test_memory_capacity_and_own_limit() -> None:
    assert physics.memory_capacity(node("n", memory=8 * GIB), P) == 8 * GIB
    limited = task("t", 10, memory=GIB, limits=Resources(1, 2 * GIB))
    assert physics.over_own_limit(limited, 3 * GIB, on=True)
    assert not physics.over_own_limit(limited, 2 * GIB, on=True)
    assert not physics.over_own_limit(limited, 3 * GIB, on=False)
    assert not physics.over_own_limit(task("u", 10), 99 * GIB, on=True)


def test_page_cache_is_reclaimed_before_anything_is_killed() -> None:
    assert physics.cache_held(4 * GIB, 3 * GIB, 8 * GIB) == 3 * GIB  # room for it all
    assert physics.cache_held(6 * GIB, 4 * GIB, 8 * GIB) == 2 * GIB  # half reclaimed
    assert physics.cache_held(9 * GIB, 4 * GIB, 8 * GIB) == 0  # anonymous memory past capacity
    assert physics.page_cache_multiplier(4 * GIB, 3 * GIB, 8 * GIB, P) == 1.0
    assert physics.page_cache_multiplier(6 * GIB, 4 * GIB, 8 * GIB, P) == 1.5
    assert physics.page_cache_multiplier(9 * GIB, 4 * GIB, 8 * GIB, P) == 2.0
    assert physics.page_cache_multiplier(9 * GIB, 0, 8 * GIB, P) == 1.0  # no cache to lose


def test_oom_victim_is_the_pod_most_over_its_request() -> None:
    assert physics.oom_victim([(10, 8), (12, 8), (9, 9)]) == 1
    assert physics.oom_victim([(10, 8), (12, 10), (5, 5)]) == 1  # ties: the latest started
    assert physics.oom_victim([(4, 8)]) == 0


def test_share_factor() -> None:
    assert physics.share_factor(0.25, 3.0) == pytest.approx(1.5)
    assert physics.share_factor(0.0, 100.0) == 1.0
