"""`simulate_native`: one run of `kube-default` in the native core (csrc/), as a RunRecord equal
to the one `dagpilot.sim.run.simulate` gives for the same inputs and seed.

The core is a C port of the simulator and of kube-default's decisions; every random draw still
comes from the run's numpy streams (sim.streams), through small callbacks, so the two agree bit
for bit (tests/native/test_native_equals_python.py holds them to it).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster, Job
from dagpilot.native import pack
from dagpilot.native.kube_statics import kube_statics
from dagpilot.sim.faults import next_iops_change, next_outage
from dagpilot.sim.record import JobRecord, PodRecord, RunRecord, Sample
from dagpilot.sim.simulation import check_inputs
from dagpilot.sim.streams import stream

log = logging.getLogger(__name__)

SCHEDULER = "kube-default"
OUTCOMES = ("succeeded", "oom-killed", "node-fault", "unfinished", "cancelled")  # csrc/sim.h


def simulate_native(jobs: Sequence[Job], cluster: Cluster, settings: SimSettings, seed: int, *,
                    progress: Callable[[float], None] | None = None) -> RunRecord:
    """`simulate(jobs, cluster, kube-default, settings, seed)`, natively."""
    from dagpilot.native import _core  # noqa: PLC0415  (built with the package; see available())

    started = time.perf_counter()
    check_inputs(jobs, cluster)
    classes, statics = kube_statics(jobs, cluster)
    tables = pack.tables(jobs, cluster, settings, classes, _phases(settings, len(jobs), seed))
    out: dict[str, Any] = _core.run(pack.params(settings), tables, statics,
                                    *_callbacks(settings, seed), progress)
    record = _record(out, jobs, cluster, settings, seed)
    record.wall_seconds = time.perf_counter() - started
    return record


def _phases(settings: SimSettings, jobs: int, seed: int) -> np.ndarray:
    """Each job's polling phase, drawn as Engine.add draws them."""
    interval = settings.poll_interval_s
    if interval <= 0:
        return np.zeros(jobs)
    return stream(seed, "engine").uniform(0.0, interval, jobs)


def _callbacks(settings: SimSettings, seed: int) -> tuple[Callable[..., Any], ...]:
    """The draws the core asks for, from the same streams as the Python simulator's."""
    startup, faults = stream(seed, "startup"), stream(seed, "faults")
    storage, scheduler = stream(seed, "storage"), stream(seed, "scheduler")

    def normals() -> list[float]:
        block: list[float] = startup.standard_normal(pack.NORMAL_BLOCK).tolist()
        return block

    def outage(after_s: float) -> tuple[float, float] | None:
        drawn = next_outage(faults, after_s, settings.faults)
        return None if drawn is None else (drawn.start_s, drawn.end_s)

    def iops(now_s: float, nominal: float, collapsed: int) -> tuple[float, float, bool] | None:
        change = next_iops_change(storage, now_s, nominal, bool(collapsed), settings.storage)
        return None if change is None else (change.time_s, change.iops, change.collapsed)

    def draw(n: int) -> int:
        return int(scheduler.integers(n))

    return normals, outage, iops, draw


def _optional(value: float) -> float | None:
    return None if math.isnan(value) else value


def _record(out: dict[str, Any], jobs: Sequence[Job], cluster: Cluster, settings: SimSettings,
            seed: int) -> RunRecord:
    record = RunRecord(SCHEDULER, seed, settings.physics.enabled)
    record.pods = _pods(out, jobs, cluster)
    record.samples = _samples(out)
    finish = np.frombuffer(out["job_finish_s"], dtype=np.float64).tolist()
    failed = np.frombuffer(out["job_failed"], dtype=np.uint8).tolist()
    for job, finish_s, job_failed in zip(jobs, finish, failed, strict=True):
        record.jobs.append(JobRecord(job.id, job.arrival_s, _optional(finish_s),
                                     job.critical_path_s, job.total_work_core_s,
                                     failed=bool(job_failed)))
        if job_failed:
            log.info("job %s failed: a pod was OOM-killed more than %d times", job.id,
                     settings.oom_retry_limit)
    for name in ("oom_kills", "fault_kills", "restarts", "decisions", "events"):
        setattr(record, name, out[name])
    record.decision_seconds = out["decision_seconds"]
    record.end_s = out["end_s"]
    record.interrupted = bool(out["interrupted"])
    if out["stalled"]:
        log.warning("run stalled at %.0f s: %d pods pending that the scheduler does not place",
                    out["stalled_at_s"], out["stalled_pending"])
    return record


def _pods(out: dict[str, Any], jobs: Sequence[Job], cluster: Cluster) -> list[PodRecord]:
    tasks = [(job, task) for job in jobs for task in job.tasks]
    pod_task = np.frombuffer(out["pod_task"], dtype=np.int32).tolist()
    pod_instance = np.frombuffer(out["pod_instance"], dtype=np.int32).tolist()
    pod_attempt = np.frombuffer(out["pod_attempt"], dtype=np.int32).tolist()
    pod_created = np.frombuffer(out["pod_created_s"], dtype=np.float64).tolist()
    names = [node.name for node in cluster.nodes]
    columns = [np.frombuffer(out[f"record_{name}"], dtype=dtype).tolist() for name, dtype in (
        ("uid", np.int64), ("node", np.int32), ("outcome", np.int32), ("bound_s", np.float64),
        ("started_s", np.float64), ("finished_s", np.float64), ("ended_s", np.float64))]
    pods = []
    for uid, node, outcome, bound_s, started_s, finished_s, ended_s in zip(*columns, strict=True):
        job, task = tasks[pod_task[uid]]
        instance = pod_instance[uid]
        suffix = f"-{instance}" if task.instances > 1 else ""
        pods.append(PodRecord(f"{job.id}/{task.id}{suffix}", job.id, task.id, pod_attempt[uid],
                              names[node] if node >= 0 else None, pod_created[uid],
                              _optional(bound_s), _optional(started_s), _optional(finished_s),
                              OUTCOMES[outcome], _optional(ended_s)))
    return pods


def _samples(out: dict[str, Any]) -> list[Sample]:
    columns = [np.frombuffer(out[f"sample_{name}"], dtype=dtype).tolist() for name, dtype in (
        ("time_s", np.float64), ("pending", np.int64), ("running", np.int64),
        ("cpu_allocated", np.float64), ("cpu_used", np.float64), ("gpu_allocated", np.float64))]
    return [Sample(*row) for row in zip(*columns, strict=True)]
