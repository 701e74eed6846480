"""What the feedback says the world now is: per task class a runtime factor, per zone a storage
slowdown, estimated only from the journal's `feedback` records and the adapter's own pool and
cluster (never from the drift's cause).

    found = recalibrate(records, jobs, cluster, sim.effects, since_t=..., ratio=1.3)

A record's slowdown is its runtime over its prediction (online.drift); where it ran is its
`node` (the node agent's name) or, failing that, the node of the decision with its pod uid.
A task is *I/O-bound* when its class's tasks in the pool spend at least IO_BOUND of their
runtime on storage (Task.io_intensity, the share `f` of the simulator's time factor
1 + f (m - 1), sim/physics.py). For each zone, each I/O-bound record there is compared with the
median slowdown of its class outside the zone (what its class does on other disks) and the
quotient read back through the time factor: m = 1 + (s / baseline - 1) / f, how many times
slower its I/O ran. A zone whose median m reaches SLOW_ZONE is slow. Each disk of a slow zone
is then given the IOPS at which the simulator's storage model (M/M/1 await, await levels)
slows I/O by about m at the demand those tasks met: the summed IOPS of the records on the same
node whose run overlaps theirs (bytes over the predicted runtime in 256 KiB blocks, as
sim/physics.pod_iops counts them);
m and the demand are the node's own when it has MIN_SAMPLES records, else the zone's (disks of
one zone differ: at the same IOPS an NVMe disk's await is a fraction of a network disk's, so
one zone figure set the drift bench's NVMe disks at 54 IOPS and its network disk at 550, where
the truth was 100 for all three), and a node whose own m is below SLOW_ZONE keeps its disk.
A class's runtime factor is its median slowdown over the slowdown the simulator produces for
it by itself (online.reference: interference already slows some classes on an undrifted
cluster), read outside the slow zones for I/O-bound classes (a slow disk explains their records
there) and, for the others, there too when they have too few records elsewhere (a slow disk
moves them by less than a quarter of its multiplier, but it moves them: read there with enough
records elsewhere, the drift bench's `bwa` passed for drifted at 1.33; always left out, its
`train` kept 1 record of 5); classes whose factor passes the trigger's ratio are recalibrated.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dagpilot.core.config import PhysicsParameters
from dagpilot.core.types import Cluster, Disk, Job, NodeSpec
from dagpilot.online.drift import task_family
from dagpilot.sim import physics

IO_BOUND = 0.25  # share of runtime on storage from which a class's slowdown reads its disk
SLOW_ZONE = 1.25  # median I/O multiplier from which a zone's storage counts as degraded
MIN_SAMPLES = 5  # I/O-bound records a zone needs before it is judged
MIN_BASELINE = 2  # records of a class elsewhere needed to compare one with
GRID_POINTS = 400  # IOPS tried when a disk's records are fitted (log-spaced, 1 to nominal)


@dataclass(frozen=True)
class Sample:
    """One finished task as the feedback recorded it."""

    task_class: str
    node: str
    slowdown: float  # runtime / predicted runtime
    io_share: float  # the class's storage share in the pool; 0 when the pool lacks the class
    iops: float  # the I/O operations per second it issued
    start_t: float
    end_t: float


@dataclass(frozen=True)
class DiskEstimate:
    """One node's disk in a slow zone: read from its own records when it has MIN_SAMPLES,
    else from its zone's (their multipliers and demands through this disk's service time)."""

    node: str
    io_multiplier: float  # median of m over the node's I/O-bound records
    demand_iops: float  # median summed IOPS on the node while they ran
    samples: int
    fitted_iops: int  # the IOPS whose await levels best give each record's m


@dataclass(frozen=True)
class SlowZone:
    zone: str
    io_multiplier: float  # median of m over the zone's I/O-bound records
    demand_iops: float  # median summed IOPS on a node of the zone while they ran
    samples: int
    disks: tuple[DiskEstimate, ...] = ()  # every node of the zone

    def on(self, node: str) -> SlowZone | DiskEstimate:
        """The estimate for `node`'s disk (a zone's disks differ: one figure for the zone
        fits its busiest kind of disk); the zone's own for a node it has none for."""
        return next((disk for disk in self.disks if disk.node == node), self)


@dataclass(frozen=True)
class Recalibration:
    class_factors: tuple[tuple[str, float], ...]  # (class, runtime factor), sorted
    slow_zones: tuple[SlowZone, ...]

    def factors(self) -> dict[str, float]:
        return dict(self.class_factors)


def recalibrate(records: Iterable[Mapping[str, Any]], jobs: Sequence[Job], cluster: Cluster,
                params: PhysicsParameters, *, since_t: float = -math.inf, ratio: float = 1.3,
                reference: Mapping[str, float] | None = None) -> Recalibration:
    """`reference`: each class's slowdown in the simulator's own undrifted replay
    (online.reference); a class without one is read against 1."""
    found = samples(records, jobs, cluster, params, since_t)
    zones = slow_zones(found, cluster, params)
    return Recalibration(class_factors(_telling(found, zones, cluster), ratio,
                                       reference or {}), zones)


def _telling(found: Sequence[Sample], zones: Sequence[SlowZone], cluster: Cluster
             ) -> list[Sample]:
    """The records that tell a class's own runtime: those outside the slow zones, and for a
    class that is not I/O-bound with fewer than MIN_SAMPLES of those, its records in the slow
    zones too (a slow disk still moves such a class a little: read there when it has enough
    records elsewhere, the drift bench's `bwa` passed for drifted at 1.33)."""
    slow = {zone.zone for zone in zones}
    zone_of = {node.name: node.zone for node in cluster.nodes}
    elsewhere: dict[str, int] = {}
    for sample in found:
        if zone_of[sample.node] not in slow:
            elsewhere[sample.task_class] = elsewhere.get(sample.task_class, 0) + 1
    return [s for s in found if zone_of[s.node] not in slow or (
        s.io_share < IO_BOUND and elsewhere.get(s.task_class, 0) < MIN_SAMPLES)]


def samples(records: Iterable[Mapping[str, Any]], jobs: Sequence[Job], cluster: Cluster,
            params: PhysicsParameters, since_t: float = -math.inf) -> list[Sample]:
    """Every feedback record after `since_t` with a prediction and a node of `cluster`."""
    shares = io_shares(jobs)
    nodes: dict[str, str] = {}
    found = []
    for record in records:
        if record.get("kind") == "decision" and isinstance(record.get("node"), str):
            nodes[str(record.get("uid"))] = record["node"]
        elif record.get("kind") == "feedback" and _number(record.get("t")) > since_t:
            sample = _sample(record, nodes, shares, cluster, params)
            if sample is not None:
                found.append(sample)
    return found


def io_shares(jobs: Sequence[Job]) -> dict[str, float]:
    """Each task family's mean storage share in the pool."""
    shares: dict[str, list[float]] = {}
    for job in jobs:
        for task in job.tasks:
            shares.setdefault(task_family(task.name), []).append(task.io_intensity)
    return {name: statistics.fmean(values) for name, values in shares.items()}


def _sample(record: Mapping[str, Any], nodes: Mapping[str, str], shares: Mapping[str, float],
            cluster: Cluster, params: PhysicsParameters) -> Sample | None:
    node = record.get("node") or nodes.get(str(record.get("pod_uid")))
    task_class = record.get("task_class")
    predicted = record.get("predicted")
    runtime, end = _number(record.get("runtime_s")), _number(record.get("t"))
    if (not isinstance(node, str) or node not in cluster.index or not isinstance(task_class, str)
            or not task_class or not isinstance(predicted, Mapping)):
        return None
    expected = _number(predicted.get("runtime_s"))
    if not (expected > 0 and runtime > 0 and math.isfinite(end)):
        return None
    share = shares.get(task_family(task_class), 0.0)
    return Sample(task_class, node, runtime / expected, share,
                  _iops(record, expected, share, params), end - runtime, end)


def _iops(record: Mapping[str, Any], expected: float, share: float,
          params: PhysicsParameters) -> float:
    """From the bytes it moved when the record has them, else from its class's share. Over
    its predicted runtime, not the one it ran: the simulator's pod issues its bytes at the
    rate of its nominal runtime however slowly its disk serves them (physics.pod_iops), and
    over the runtime it ran, a pod slowed 2x by its disk read as half the demand, which set
    the replayed disks at about half their IOPS."""
    actual = record.get("actual")
    moved = _number(actual.get("io_bytes")) if isinstance(actual, Mapping) else math.nan
    if moved > 0:
        return moved / expected / params.io_block_bytes
    return share * params.io_pod_iops


def slow_zones(found: Sequence[Sample], cluster: Cluster,
               params: PhysicsParameters) -> tuple[SlowZone, ...]:
    zone_of = {node.name: node.zone for node in cluster.nodes}
    disks = {node.name: node.disk for node in cluster.nodes}
    zones = []
    for zone in sorted(set(zone_of.values())):
        slow = _slow_zone(zone, found, zone_of, disks, params)
        if slow is not None:
            zones.append(slow)
    return tuple(zones)


def _slow_zone(zone: str, found: Sequence[Sample], zone_of: Mapping[str, str],
               disks: Mapping[str, Disk], params: PhysicsParameters) -> SlowZone | None:
    outside: dict[str, list[float]] = {}
    for sample in found:
        if zone_of[sample.node] != zone:
            outside.setdefault(sample.task_class, []).append(sample.slowdown)
    by_node: dict[str, list[tuple[float, float]]] = {}  # node -> (m, demand) per record
    for sample in found:
        baseline = outside.get(sample.task_class, [])
        if (zone_of[sample.node] != zone or sample.io_share < IO_BOUND
                or len(baseline) < MIN_BASELINE):
            continue
        quotient = sample.slowdown / statistics.median(baseline)
        by_node.setdefault(sample.node, []).append(
            (1.0 + (quotient - 1.0) / sample.io_share, _demand(sample, found)))
    readings = [reading for node in sorted(by_node) for reading in by_node[node]]
    if len(readings) < MIN_SAMPLES or statistics.median(m for m, _ in readings) < SLOW_ZONE:
        return None
    estimates = []
    for node in sorted(name for name, where in zone_of.items() if where == zone):
        own = by_node.get(node, [])
        estimates.append(_disk_estimate(node, own if len(own) >= MIN_SAMPLES else readings,
                                        disks[node], params))
    return SlowZone(zone, statistics.median(m for m, _ in readings),
                    statistics.median(d for _, d in readings), len(readings), tuple(estimates))


def _disk_estimate(node: str, readings: Sequence[tuple[float, float]], disk: Disk,
                   params: PhysicsParameters) -> DiskEstimate:
    """A node's disk from its own records, or from its zone's when it has too few: the
    zone's multipliers and demands through this disk's own service time."""
    return DiskEstimate(node, statistics.median(m for m, _ in readings),
                        statistics.median(d for _, d in readings), len(readings),
                        fitted_iops(readings, disk, params))


def fitted_iops(readings: Sequence[tuple[float, float]], disk: Disk,
                params: PhysicsParameters) -> int:
    """The IOPS of `disk` at which the simulator's storage model (physics.io_await_ms and its
    await levels) best gives every record its multiplier m at the demand it met: least squares
    in log m over IOPS from 1 to the disk's nominal, on a log grid; the middle (in log) of the
    best plateau, since the levels are steps. Records met different demands, so the steps'
    places pin the IOPS down, which one median multiplier (an await level, not where in its
    band the await was) cannot."""
    service = physics.service_ms(disk.kind, params)
    grid = np.unique(np.rint(np.geomspace(1.0, max(1.0, disk.iops), GRID_POINTS)))
    wanted = np.log(np.maximum(np.array([m for m, _ in readings]), 1.0))
    demands = [d for _, d in readings]
    errors = []
    for iops in grid.tolist():
        levels = [physics.await_level(physics.io_await_ms(d, iops, service), params)
                  for d in demands]
        got = np.log([physics.io_level_multiplier(level, params) for level in levels])
        errors.append(float(np.sum((got - wanted) ** 2)))
    best = np.flatnonzero(np.asarray(errors) <= min(errors) + 1e-9)
    return round(math.sqrt(float(grid[best[0]]) * float(grid[best[-1]])))


def _demand(sample: Sample, found: Sequence[Sample]) -> float:
    """The IOPS of the records on the sample's node running at the middle of its run."""
    middle = (sample.start_t + sample.end_t) / 2.0
    return sum(other.iops for other in found
               if other.node == sample.node and other.start_t <= middle <= other.end_t)


def class_factors(found: Sequence[Sample], ratio: float, reference: Mapping[str, float]
                  ) -> tuple[tuple[str, float], ...]:
    """Classes whose median slowdown passes `ratio` times the simulator's own for them."""
    by_class: dict[str, list[float]] = {}
    for sample in found:
        by_class.setdefault(sample.task_class, []).append(sample.slowdown)
    factors = ((name, statistics.median(values) / reference.get(task_family(name), 1.0))
               for name, values in by_class.items() if len(values) >= MIN_SAMPLES)
    return tuple(sorted((name, factor) for name, factor in factors if factor > ratio))


def replay_iops(zone: SlowZone, disk: Disk, params: PhysicsParameters) -> int:
    """The IOPS at which `disk` slows I/O by about the zone's multiplier at its demand, for a
    zone without disk estimates (each estimate carries its own fitted IOPS): the await level
    whose multiplier is nearest (in log), the middle of that level's await band, and the
    utilisation of the simulator's M/M/1 await (physics.io_await_ms) that gives it."""
    levels = (params.io_level1_factor, params.io_level2_factor, params.io_level3_factor)
    level = min(range(3), key=lambda i: abs(math.log(levels[i] / zone.io_multiplier)))
    bounds = (params.io_level1_ms, params.io_level2_ms, params.io_level3_ms,
              4.0 * params.io_level3_ms)
    target = math.sqrt(bounds[level] * bounds[level + 1])
    service = physics.service_ms(disk.kind, params)
    saturated = service / (1.0 - physics.RHO_MAX)
    rho = (1.0 - service / target if target <= saturated
           else physics.RHO_MAX * target / saturated)
    return max(1, min(disk.iops, round(zone.demand_iops / max(rho, 1e-6))))


def replayed_cluster(cluster: Cluster, found: Recalibration,
                     params: PhysicsParameters) -> Cluster:
    """`cluster` with the slow zones' disks at their replay IOPS, each its own (a shared pool
    would lend it the pool's first member's IOPS), from the node's own estimate when it has
    one; a node whose own records show no slow disk keeps its disk."""
    by_zone = {zone.zone: zone for zone in found.slow_zones}
    if not by_zone:
        return cluster
    nodes = tuple(_replayed(node, by_zone[node.zone].on(node.name), params)
                  if node.zone in by_zone else node for node in cluster.nodes)
    return dataclasses.replace(cluster, nodes=nodes)


def _replayed(node: NodeSpec, estimate: SlowZone | DiskEstimate,
              params: PhysicsParameters) -> NodeSpec:
    if estimate.io_multiplier < SLOW_ZONE:
        return node
    iops = (estimate.fitted_iops if isinstance(estimate, DiskEstimate)
            else replay_iops(estimate, node.disk, params))
    return dataclasses.replace(node, disk=Disk(node.disk.kind, iops,
                                               node.disk.bandwidth_bytes_s, None))


def _number(value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return math.nan
