"""The recalibration estimated from feedback: slow zones' storage and slow classes' runtimes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dagpilot.clusters import load_cluster
from dagpilot.core.config import PhysicsParameters
from dagpilot.core.types import Job, Resources, Task
from dagpilot.online.recalibration import (
    DiskEstimate,
    Recalibration,
    SlowZone,
    fitted_iops,
    recalibrate,
    replay_iops,
    replayed_cluster,
    samples,
)
from dagpilot.sim import physics

CLUSTER = load_cluster("builtin:small")  # zone-a: node-0000..0002, zone-b: node-0003..0005
PARAMS = PhysicsParameters()
POOL = (Job("etl", (Task("scan-0", "scan-0", 100.0, Resources(1.0), io_intensity=0.5),
                    Task("train-1", "train-1", 100.0, Resources(1.0), io_intensity=0.0))),)


def feedback(t: float, node: str | None, task_class: str, slowdown: float, *,
             uid: str = "", io_bytes: int = 0) -> dict[str, Any]:
    record = {"kind": "feedback", "t": t, "pod_uid": uid, "task_class": task_class,
              "runtime_s": 100.0 * slowdown, "actual": {"io_bytes": io_bytes},
              "predicted": {"runtime_s": 100.0}}
    if node is not None:
        record["node"] = node
    return record


def scans(zone_a: float, zone_b: float, count: int = 6) -> list[dict[str, Any]]:
    """`count` scans on each zone, one after another, at the given slowdowns."""
    records = []
    for index in range(count):
        records.append(feedback(1000.0 * index, "node-0001", "scan", zone_a))
        records.append(feedback(1000.0 * index + 500, "node-0004", "scan", zone_b))
    return records


def test_a_zone_whose_io_bound_tasks_run_slow_is_read_through_the_time_factor() -> None:
    found = recalibrate(scans(1.0, 2.0), POOL, CLUSTER, PARAMS)
    assert [zone.zone for zone in found.slow_zones] == ["zone-b"]
    zone = found.slow_zones[0]
    # s / baseline = 2 with half the runtime on storage: its I/O ran 1 + (2 - 1) / 0.5 = 3x.
    assert zone.io_multiplier == pytest.approx(3.0)
    assert zone.samples == 6
    assert found.class_factors == ()  # scan is as fast as ever outside zone-b


def test_the_baseline_is_the_class_elsewhere_not_the_prediction() -> None:
    # Every scan runs 1.2x its prediction everywhere (interference): no zone is slow.
    assert recalibrate(scans(1.2, 1.2), POOL, CLUSTER, PARAMS).slow_zones == ()
    # And a zone-b at 1.2 x 1.2 over a baseline of 1.2 is a 1 + 0.2 / 0.5 = 1.4x disk.
    found = recalibrate(scans(1.2, 1.44), POOL, CLUSTER, PARAMS)
    assert found.slow_zones[0].io_multiplier == pytest.approx(1.4)


def test_too_few_records_or_cpu_bound_classes_judge_no_zone() -> None:
    assert recalibrate(scans(1.0, 3.0, count=4), POOL, CLUSTER, PARAMS).slow_zones == ()
    cpu = [feedback(float(i), node, "train", 3.0 if node == "node-0004" else 1.0)
           for i in range(8) for node in ("node-0001", "node-0004")]
    assert recalibrate(cpu, POOL, CLUSTER, PARAMS).slow_zones == ()


def test_the_node_comes_from_the_decision_when_the_feedback_has_none() -> None:
    records: list[dict[str, Any]] = []
    for index, record in enumerate(scans(1.0, 2.0)):
        uid = f"u{index}"
        records.append({"kind": "decision", "t": record["t"] - 1, "uid": uid,
                        "node": record.pop("node"), "task": "scan-0"})
        records.append({**record, "pod_uid": uid})
    assert [z.zone for z in recalibrate(records, POOL, CLUSTER, PARAMS).slow_zones] == ["zone-b"]


def test_records_before_since_and_unknown_nodes_are_ignored() -> None:
    records = scans(1.0, 2.0)
    assert recalibrate(records, POOL, CLUSTER, PARAMS, since_t=1e9).slow_zones == ()
    elsewhere = [{**r, "node": "node-9999"} for r in records]
    assert recalibrate(elsewhere, POOL, CLUSTER, PARAMS) == Recalibration((), ())


def test_class_factors_are_read_against_the_simulators_own_slowdown() -> None:
    records = [feedback(float(i), "node-0001", "train", 1.5) for i in range(5)]
    records += [feedback(10.0 + i, "node-0001", "join", 1.74) for i in range(5)]
    found = recalibrate(records, POOL, CLUSTER, PARAMS, reference={"join": 1.74})
    assert found.class_factors == (("train", 1.5),)  # join's 1.74 is the simulator's own
    both = recalibrate(records + scans(1.0, 2.0), POOL, CLUSTER, PARAMS,
                       reference={"join": 1.74})
    assert both.class_factors == (("train", 1.5),)  # zone-b's slow scans are its disks' doing


def test_a_cpu_bound_class_is_read_in_the_slow_zone_too() -> None:
    # The drift bench's window: 5 slow trains, 4 of them on zone-b's slow disks. train spends
    # no time on storage, so those 4 say as much about it as the one on zone-a.
    trains = [feedback(20.0 + i, "node-0001" if i == 0 else "node-0004", "train", 1.5)
              for i in range(5)]
    found = recalibrate(trains + scans(1.0, 2.0), POOL, CLUSTER, PARAMS)
    assert [zone.zone for zone in found.slow_zones] == ["zone-b"]
    assert found.class_factors == (("train", 1.5),)


@pytest.mark.parametrize("multiplier, level", [(1.5, 1), (3.0, 2), (6.0, 3), (10.0, 3)])
def test_replay_iops_put_the_demand_at_the_level_of_the_multiplier(multiplier: float,
                                                                   level: int) -> None:
    for node in CLUSTER.nodes:
        zone = SlowZone("zone-b", multiplier, demand_iops=500.0, samples=9)
        iops = replay_iops(zone, node.disk, PARAMS)
        service = physics.service_ms(node.disk.kind, PARAMS)
        await_ms = physics.io_await_ms(zone.demand_iops, iops, service)
        assert physics.await_level(await_ms, PARAMS) == level, node.name


def test_the_replayed_cluster_throttles_only_the_slow_zone_each_disk_its_own() -> None:
    found = Recalibration((), (SlowZone("zone-b", 3.0, 500.0, 9),))
    replayed = replayed_cluster(CLUSTER, found, PARAMS)
    for before, after in zip(CLUSTER.nodes, replayed.nodes, strict=True):
        if before.zone == "zone-b":
            assert after.disk.iops < before.disk.iops and after.disk.shared_pool is None
            assert after.disk.kind is before.disk.kind
        else:
            assert after == before
    assert replayed_cluster(CLUSTER, Recalibration((), ()), PARAMS) is CLUSTER


def test_iops_come_from_the_bytes_moved_when_recorded() -> None:
    [sample] = samples([feedback(0.0, "node-0001", "scan", 2.0, io_bytes=200 * 2**20)],
                       POOL, CLUSTER, PARAMS)
    # 800 blocks of 256 KiB over its predicted 100 s (as the simulator's pod issues them),
    # though its slow disk made it run 200 s
    assert sample.iops == pytest.approx(200 * 4 / 100.0)
    assert (sample.start_t, sample.end_t, sample.io_share) == (-200.0, 0.0, 0.5)


def test_each_disk_of_a_slow_zone_is_read_from_its_own_records() -> None:
    # node-0004's scans run 2x (a 3x disk), node-0005's 1.5x (2x), node-0003's as elsewhere
    records = []
    for index in range(6):
        records.append(feedback(1000.0 * index, "node-0001", "scan", 1.0))
        records.append(feedback(1000.0 * index + 100, "node-0004", "scan", 2.0))
        records.append(feedback(1000.0 * index + 200, "node-0005", "scan", 1.5))
        records.append(feedback(1000.0 * index + 300, "node-0003", "scan", 1.0))
    [zone] = recalibrate(records, POOL, CLUSTER, PARAMS).slow_zones
    assert {disk.node: disk.io_multiplier for disk in zone.disks} == pytest.approx(
        {"node-0003": 1.0, "node-0004": 3.0, "node-0005": 2.0})
    assert zone.on("node-0004").io_multiplier == pytest.approx(3.0)
    replayed = replayed_cluster(CLUSTER, Recalibration((), (zone,)), PARAMS)
    before = {node.name: node for node in CLUSTER.nodes}
    after = {node.name: node for node in replayed.nodes}
    assert after["node-0003"] == before["node-0003"]  # its own records show no slow disk
    for name in ("node-0004", "node-0005"):
        estimate = zone.on(name)
        assert isinstance(estimate, DiskEstimate)
        assert after[name].disk.iops == estimate.fitted_iops
        assert physics.await_level(physics.io_await_ms(
            estimate.demand_iops, estimate.fitted_iops,
            physics.service_ms(before[name].disk.kind, PARAMS)), PARAMS) == \
            (2 if name == "node-0004" else 1)  # 3x and 2x disks: levels 2 and (nearest) 1
    assert after["node-0004"].disk.iops < after["node-0005"].disk.iops  # the slower disk


@pytest.mark.parametrize("truth", [30, 100, 400])
def test_a_disks_iops_are_fitted_from_records_at_different_demands(truth: int) -> None:
    # Records on one disk at demands from 20 to 2,000 IOPS, each slowed as the simulator's
    # storage model says at the true IOPS: the fit finds the truth within the grid's steps.
    disk = CLUSTER.nodes[4].disk
    service = physics.service_ms(disk.kind, PARAMS)
    readings = []
    for demand in np.geomspace(20.0, 2000.0, 40).tolist():
        level = physics.await_level(physics.io_await_ms(demand, truth, service), PARAMS)
        readings.append((physics.io_level_multiplier(level, PARAMS), demand))
    fitted = fitted_iops(readings, disk, PARAMS)
    assert truth / 1.25 <= fitted <= truth * 1.25, fitted


def test_a_node_with_few_records_takes_the_zones_estimate() -> None:
    zone = SlowZone("zone-b", 3.0, 500.0, 9)
    assert zone.on("node-0003") is zone


def test_a_class_with_enough_records_elsewhere_is_read_there_only() -> None:
    # bwa runs 1.33x on zone-b's slow disks and 1.0x on zone-a: not a drift of its own
    bwas = [feedback(30.0 + i, node, "bwa", 1.33 if node == "node-0004" else 1.0)
            for i in range(5) for node in ("node-0001", "node-0004")]
    found = recalibrate(bwas + scans(1.0, 2.0), POOL, CLUSTER, PARAMS)
    assert [zone.zone for zone in found.slow_zones] == ["zone-b"]
    assert found.class_factors == ()


def test_a_node_without_records_of_its_own_is_fitted_from_its_zones_through_its_disk() -> None:
    [zone] = recalibrate(scans(1.0, 2.0), POOL, CLUSTER, PARAMS).slow_zones  # node-0004 only
    by_node = {disk.node: disk for disk in zone.disks}
    assert sorted(by_node) == ["node-0003", "node-0004", "node-0005"]
    assert by_node["node-0003"].samples == by_node["node-0005"].samples == 6  # the zone's
    disks = {node.name: node.disk for node in CLUSTER.nodes}
    for name in ("node-0003", "node-0005"):
        estimate = by_node[name]
        assert physics.await_level(physics.io_await_ms(
            estimate.demand_iops, estimate.fitted_iops,
            physics.service_ms(disks[name].kind, PARAMS)), PARAMS) == 2  # the zone's 3x
