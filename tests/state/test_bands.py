"""Table tests of the semantic mapping, and its agreement with the simulator's physics."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dagpilot.core.config import PhysicsParameters
from dagpilot.core.types import DiskKind
from dagpilot.sim import physics
from dagpilot.state import bands
from dagpilot.state.calibration import Calibration

NETWORK_MS = Calibration().await_network_ms  # 2 ms
NVME_MS = Calibration().await_nvme_ms  # 0.1 ms
PARAMS = PhysicsParameters()


@pytest.mark.parametrize(("await_ms", "level"), [
    (0.0, 0), (2.0, 0), (9.9, 0), (10.0, 0), (10.01, 1), (22.0, 1), (40.0, 1), (40.01, 2),
    (45.0, 2), (50.0, 2), (100.0, 2), (160.0, 2), (160.01, 3), (400.0, 3), (5000.0, 3),
])
def test_await_levels_on_a_network_disk(await_ms: float, level: int) -> None:
    assert int(bands.await_level(await_ms, NETWORK_MS)) == level


@pytest.mark.parametrize(("await_ms", "level"), [
    (0.1, 0), (0.5, 0), (0.51, 1), (2.0, 1), (2.01, 2), (8.0, 2), (8.01, 3), (50.0, 3),
])
def test_await_levels_on_nvme_are_relative_to_its_nominal_await(await_ms: float,
                                                                level: int) -> None:
    assert int(bands.await_level(await_ms, NVME_MS)) == level


def test_45_ms_and_50_ms_are_both_moderate_congestion() -> None:
    assert bands.await_level([45.0, 50.0], NETWORK_MS).tolist() == [2, 2]
    assert bands.congested([45.0, 50.0], NETWORK_MS).tolist() == [True, True]


def test_two_clouds_with_different_absolute_latencies_map_alike() -> None:
    # Cloud B's network disks are 10 % faster: its 45 ms is cloud A's 50 ms.
    cloud_a = Calibration(await_network_ms=2.0).nominal_await_ms(DiskKind.NETWORK)
    cloud_b = Calibration(await_network_ms=1.8).nominal_await_ms(DiskKind.NETWORK)
    awaits_a = np.geomspace(0.5, 2000.0, 400)
    levels_a = bands.await_level(awaits_a, cloud_a)
    assert (bands.await_level(awaits_a * 0.9, cloud_b) == levels_a).all()
    assert int(bands.await_level(50.0, cloud_a)) == int(bands.await_level(45.0, cloud_b)) == 2
    assert set(levels_a.tolist()) == {0, 1, 2, 3}


def test_await_levels_agree_with_the_simulator_on_its_network_disks() -> None:
    nominal = physics.service_ms(DiskKind.NETWORK, PARAMS)
    # At the geometric centre of each of the simulator's levels the two agree exactly ...
    for await_ms, level in [(4.5, 0), (math.sqrt(10 * 50), 1), (math.sqrt(50 * 200), 2),
                            (800.0, 3)]:
        assert physics.await_level(await_ms, PARAMS) == level
        assert int(bands.await_level(await_ms, nominal)) == level
    # ... and everywhere the encoder is at most one level more cautious, never less.
    for await_ms in np.geomspace(0.5, 5000.0, 2000):
        sim = physics.await_level(float(await_ms), PARAMS)
        assert sim <= int(bands.await_level(await_ms, nominal)) <= sim + 1


def test_nominal_awaits_are_the_simulators_service_times() -> None:
    calibration = Calibration()
    for kind in DiskKind:
        assert calibration.nominal_await_ms(kind) == physics.service_ms(kind, PARAMS)


@pytest.mark.parametrize(("samples", "flag"), [(0, False), (1, False), (2, False), (3, True),
                                               (7, True)])
def test_sustained_congestion_needs_three_samples(samples: int, flag: bool) -> None:
    assert bool(bands.sustained(samples)) is flag


@pytest.mark.parametrize(("utilisation", "mbpi"), [
    (0.0, 0.0), (0.3, 0.0), (0.65, 0.5), (0.86, 0.8), (0.895, 0.85), (1.0, 1.0), (1.4, 1.0),
])
def test_mbpi(utilisation: float, mbpi: float) -> None:
    assert float(bands.mbpi(utilisation)) == pytest.approx(mbpi)


def test_mbpi_is_the_simulators() -> None:
    for u in np.linspace(0.0, 1.5, 151):
        assert float(bands.mbpi(u)) == pytest.approx(physics.mbpi(float(u)), abs=1e-12)


@pytest.mark.parametrize(("mbpi", "band"), [
    (0.0, 0), (0.5, 0), (0.51, 1), (0.8, 1), (0.81, 2), (0.85, 2), (0.851, 3), (1.0, 3),
])
def test_pressure_bands(mbpi: float, band: int) -> None:
    assert int(bands.pressure_band(mbpi)) == band


def test_pressure_bands_agree_with_the_simulators_memory_bandwidth_model() -> None:
    # Saturated is where the simulator reaches its cache-miss factor; below the knee nothing
    # slows, and the knee lies in the moderate band.
    assert bands.MBPI_BAND_EDGES[-1] == PARAMS.membw_saturation_mbpi
    knee_mbpi = float(bands.mbpi(PARAMS.membw_knee))
    assert int(bands.pressure_band(knee_mbpi)) == 1
    saturated_u = 0.3 + 0.7 * 0.86
    assert int(bands.pressure_band(bands.mbpi(saturated_u))) == 3
    assert physics.membw_multiplier(saturated_u, PARAMS) == pytest.approx(
        PARAMS.membw_cache_miss_factor)


@pytest.mark.parametrize(("rtt_ms", "level"), [
    (0.05, 0), (0.075, 0), (0.076, 1), (0.1, 1), (0.2, 1), (0.21, 2), (0.8, 2), (1.2, 2),
    (1.21, 3), (2.0, 3), (50.0, 3),
])
def test_distance_levels(rtt_ms: float, level: int) -> None:
    assert int(bands.distance_level(rtt_ms, 0.1)) == level


def test_distance_levels_of_the_simulators_topology() -> None:
    same_rack = Calibration().same_rack_rtt_ms
    assert same_rack == PARAMS.rtt_same_rack_ms
    for distance in (physics.SAME_NODE, physics.SAME_RACK, physics.CROSS_RACK,
                     physics.CROSS_ZONE):
        assert int(bands.distance_level(physics.rtt_ms(distance, PARAMS), same_rack)) == distance


def test_distance_levels_are_relative_to_the_same_rack_rtt() -> None:
    # A cloud with 10x slower links throughout maps the same way.
    rtts = np.array([0.05, 0.1, 0.8, 2.0])
    assert bands.distance_level(rtts * 10, 1.0).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize(("used", "current", "ratio", "polluted"), [
    (10.0, 10.0, 1.0, False),
    (10.0, 17.0, 1.7, False),
    (10.0, 18.0, 1.8, False),  # the rule is strictly greater than 1.8x
    (10.0, 18.5, 1.85, True),
    (10.0, 40.0, 4.0, True),
    (0.0, 5.0, 1.0, False),  # nothing used: no ratio to speak of
])
def test_page_cache_pollution(used: float, current: float, ratio: float,
                              polluted: bool) -> None:
    assert float(bands.page_cache_ratio(current, used)) == pytest.approx(ratio)
    assert bool(bands.page_cache_polluted(current, used)) is polluted


def test_page_cache_rule_is_the_simulators_most_cache_a_task_can_carry() -> None:
    assert math.isclose(bands.PAGE_CACHE_POLLUTION_RATIO, 1.0 + PARAMS.page_cache_ratio)


@pytest.mark.parametrize(("now_s", "sampled_s", "missed", "is_stale"), [
    (0.0, 0.0, 0, False), (14.9, 0.0, 0, False), (15.0, 0.0, 1, False), (29.9, 0.0, 1, False),
    (30.0, 0.0, 2, True), (61.0, 1.0, 4, True), (5.0, 10.0, 0, False),
])
def test_signal_age_in_whole_scrapes_missed(now_s: float, sampled_s: float, missed: int,
                                            is_stale: bool) -> None:
    value = bands.scrapes_missed(now_s, sampled_s, 15.0)
    assert float(value) == missed
    assert bool(bands.stale(value)) is is_stale


def test_one_hot() -> None:
    assert bands.one_hot([0, 3, 1, -1, 4], 4).tolist() == [
        [1, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
