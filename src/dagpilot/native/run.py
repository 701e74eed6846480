"""`simulate_native`: one run of `kube-default` in the native core (csrc/), as a RunRecord equal
to the one `dagpilot.sim.run.simulate` gives for the same inputs and seed.

The core is a C port of the simulator and of kube-default's decisions; every random draw still
comes from the run's numpy streams (sim.streams), through small callbacks, so the two agree bit
for bit (tests/native/test_native_equals_python.py holds them to it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster, Job
from dagpilot.native import pack
from dagpilot.native.kube_statics import kube_statics
from dagpilot.schedulers.kube_default import NAME as SCHEDULER
from dagpilot.sim.engine import poll_phases
from dagpilot.sim.faults import next_iops_change, next_outage
from dagpilot.sim.input_checks import check_inputs
from dagpilot.sim.record import JobRecord, PodRecord, RunRecord, Sample
from dagpilot.sim.sampling import MAX_SAMPLES
from dagpilot.sim.streams import NORMAL_BLOCK, stream

log = logging.getLogger(__name__)

OUTCOMES = ("succeeded", "oom-killed", "node-fault", "unfinished", "cancelled")  # csrc/sim.h


def simulate_native(jobs: Sequence[Job], cluster: Cluster, settings: SimSettings, seed: int, *,
                    progress: Callable[[float], None] | None = None) -> RunRecord:
    """`simulate(jobs, cluster, kube-default, settings, seed)`, natively."""
    from dagpilot.native import _core  # noqa: PLC0415  (built with the package; see available())

    started = time.perf_counter()
    check_inputs(jobs, cluster, settings)
    classes, statics = kube_statics(jobs, cluster)
    phases = poll_phases(stream(seed, "engine"), settings.poll_interval_s, len(jobs))
    tables = pack.tables(jobs, cluster, settings, classes, phases)
    draws = _draws(settings, seed)
    out = _core.run(pack.params(settings), tables, statics, draws.normals, draws.outage,
                    draws.iops, draws.scheduler, progress)
    record = _record(out, jobs, cluster, settings, seed)
    record.wall_seconds = time.perf_counter() - started
    return record


class Draws(NamedTuple):
    """Where the core's random draws come from."""

    normals: Callable[[], list[float]]
    outage: Callable[[float], tuple[float, float] | None]
    iops: Callable[[float, float, int], tuple[float, float, bool] | None]
    scheduler: np.random.Generator


def _draws(settings: SimSettings, seed: int) -> Draws:
    """The draws the core asks for, from the same streams as the Python simulator's: callbacks
    for the rare ones, and the scheduler's Generator, whose bits the core draws itself."""
    startup, faults = stream(seed, "startup"), stream(seed, "faults")
    storage, scheduler = stream(seed, "storage"), stream(seed, "scheduler")

    def normals() -> list[float]:
        block: list[float] = startup.standard_normal(NORMAL_BLOCK).tolist()
        return block

    def outage(after_s: float) -> tuple[float, float] | None:
        drawn = next_outage(faults, after_s, settings.faults)
        return None if drawn is None else (drawn.start_s, drawn.end_s)

    def iops(now_s: float, nominal: float, collapsed: int) -> tuple[float, float, bool] | None:
        change = next_iops_change(storage, now_s, nominal, bool(collapsed), settings.storage)
        return None if change is None else (change.time_s, change.iops, change.collapsed)

    return Draws(normals, outage, iops, scheduler)


def _optionals(values: np.ndarray) -> list[float | None]:
    """The floats of a column, NaN (the core's None) as None."""
    objects = values.astype(object)
    objects[np.isnan(values)] = None
    listed: list[float | None] = objects.tolist()
    return listed


def _record(out: dict[str, Any], jobs: Sequence[Job], cluster: Cluster, settings: SimSettings,
            seed: int) -> RunRecord:
    record = RunRecord(SCHEDULER, seed, settings.physics.enabled)
    record.pods = _pods(out, jobs, cluster)
    record.samples = _samples(out)
    finish = _optionals(np.frombuffer(out["job_finish_s"], dtype=np.float64))
    failed = np.frombuffer(out["job_failed"], dtype=np.uint8).tolist()
    for job, finish_s, job_failed in zip(jobs, finish, failed, strict=True):
        record.jobs.append(JobRecord(job.id, job.arrival_s, finish_s,
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
    if out["sample_limit"]:
        log.warning("run ended at %.0f s: it took the most samples a run records (%d, one every "
                    "%g s while busy); a longer [sim] sample_interval_s lets it run longer",
                    out["end_s"], MAX_SAMPLES, settings.sample_interval_s)
    if out["stalled"]:
        log.warning("run stalled at %.0f s: %d pods pending that the scheduler does not place",
                    out["stalled_at_s"], out["stalled_pending"])
    return record


def _pods(out: dict[str, Any], jobs: Sequence[Job], cluster: Cluster) -> list[PodRecord]:
    """The PodRecords, in the order the core wrote them; NaN stands for None."""
    names = [f"{job.id}/{task.id}" for job in jobs for task in job.tasks]
    ids = [(job.id, task.id, task.instances > 1) for job in jobs for task in job.tasks]
    of_pod = [np.frombuffer(out[f"pod_{name}"], dtype=dtype).tolist() for name, dtype in (
        ("task", np.int32), ("instance", np.int32), ("attempt", np.int32),
        ("created_s", np.float64))]
    pod_task, pod_instance, pod_attempt, pod_created = of_pod
    nodes = [node.name for node in cluster.nodes]
    columns = [np.frombuffer(out[f"record_{name}"], dtype=dtype).tolist() for name, dtype in (
        ("uid", np.int64), ("node", np.int32), ("outcome", np.int32))]
    columns += [_optionals(np.frombuffer(out[f"record_{name}"], dtype=np.float64))
                for name in ("bound_s", "started_s", "finished_s", "ended_s")]
    pods = []
    for uid, node, outcome, bound_s, started_s, finished_s, ended_s in zip(*columns, strict=True):
        task = pod_task[uid]
        job_id, task_id, several = ids[task]
        name = f"{names[task]}-{pod_instance[uid]}" if several else names[task]
        pods.append(PodRecord(
            name, job_id, task_id, pod_attempt[uid], nodes[node] if node >= 0 else None,
            pod_created[uid], bound_s, started_s, finished_s, OUTCOMES[outcome], ended_s))
    return pods


def _samples(out: dict[str, Any]) -> list[Sample]:
    columns = [np.frombuffer(out[f"sample_{name}"], dtype=dtype).tolist() for name, dtype in (
        ("time_s", np.float64), ("pending", np.int64), ("running", np.int64),
        ("cpu_allocated", np.float64), ("cpu_used", np.float64), ("gpu_allocated", np.float64))]
    return [Sample(*row) for row in zip(*columns, strict=True)]
