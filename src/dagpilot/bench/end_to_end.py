"""The end-to-end JCT benchmark's logic (bench/end_to_end_jct.py runs it on the sandbox).

One stream of jobs, drawn as `dagpilot bench` draws Poisson arrivals (harness.arrivals_for's
generator and CPU-equivalent capacity), is run live and predicted here: the simulator runs
the same jobs at the same arrival times on the same cluster with the twin's physics (the
twin has no node faults and no storage drift or collapses: its clock follows the wall, see
sandbox/twin.py), so the prediction and the live run differ only by what the simulator does
not model of the real control plane. A Workflow's live JCT is read from the API server:
creationTimestamp to status.finishedAt, both whole seconds, times the twin's time scale.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dagpilot.bench.harness import ARRIVAL_STREAM
from dagpilot.bench.offered_load import cpu_equivalent_cores
from dagpilot.bench.runner import scheduler_registry
from dagpilot.core.config import SimSettings
from dagpilot.core.errors import SpecError
from dagpilot.core.types import Cluster, Job
from dagpilot.native import simulate
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals

DONE_PHASES = ("Succeeded", "Failed", "Error")


@dataclass(frozen=True, slots=True)
class StreamSpec:
    """Which jobs of the pool, arriving how: `jobs` first arrivals of a Poisson process at
    `load` of the cluster's busiest resource over the pool's jobs that have at most
    `max_pods` pods and a critical path of at most `max_critical_s` (so a run lasts minutes)."""

    jobs: int
    load: float
    seed: int
    max_pods: int
    max_critical_s: float


def pool_of(jobs: Sequence[Job], spec: StreamSpec) -> list[Job]:
    pool = [job for job in jobs if job.critical_path_s <= spec.max_critical_s
            and job.instances <= spec.max_pods]
    if len(pool) < spec.jobs:
        raise SpecError(f"{spec.jobs} jobs", f"only {len(pool)} jobs of the workload have at "
                        f"most {spec.max_pods} pods and a critical path of at most "
                        f"{spec.max_critical_s:g} s")
    return pool


def stream(jobs: Sequence[Job], cluster: Cluster, spec: StreamSpec,
           startup_s: float) -> list[Job]:
    """The pool's jobs with Poisson arrival times, in arrival order, the first `spec.jobs`."""
    pool = pool_of(jobs, spec)
    rng = np.random.default_rng((spec.seed, ARRIVAL_STREAM))
    cores = cpu_equivalent_cores(pool, cluster, startup_s)
    return assign_arrivals(pool, ArrivalSpec("poisson", spec.load), cores, rng)[:spec.jobs]


def twin_settings(base: SimSettings) -> SimSettings:
    """The simulator with the twin's physics: every effect on, but no node faults and a
    storage pool that neither drifts nor collapses (the twin runs neither)."""
    return dataclasses.replace(
        base, physics=dataclasses.replace(base.physics, enabled=True, faults=False),
        storage=dataclasses.replace(base.storage, drift_sigma=0.0, collapse_rate_per_hour=0.0))


@dataclass(frozen=True, slots=True)
class Prediction:
    """The simulator's JCT of each job by id (None: it failed or did not finish), its OOM
    kills (each pod retried up to SimSettings.oom_retry_limit times), and the nodes each
    job's pods ran on (every attempt), to set beside the live placements."""

    jcts: dict[str, float | None]
    oom_kills: int
    nodes: dict[str, dict[str, int]]


def predict(jobs: Sequence[Job], cluster: Cluster, scheduler: str, settings: SimSettings,
            seed: int) -> Prediction:
    record = simulate(jobs, cluster, scheduler_registry()[scheduler](), settings, seed)
    nodes: dict[str, Counter[str]] = {job.id: Counter() for job in jobs}
    for pod in record.pods:
        if pod.node is not None and pod.job_id in nodes:
            nodes[pod.job_id][pod.node] += 1
    return Prediction({job.job_id: (None if job.failed else job.jct_s) for job in record.jobs},
                      record.oom_kills, {k: dict(sorted(v.items())) for k, v in nodes.items()})


def _instant(text: str) -> datetime.datetime:
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)


def workflow_jct_s(workflow: Mapping[str, Any], time_scale: float) -> float | None:
    """creationTimestamp to status.finishedAt in simulated seconds; None unless Succeeded."""
    status = workflow.get("status") or {}
    if status.get("phase") != "Succeeded" or not status.get("finishedAt"):
        return None
    created = _instant(workflow["metadata"]["creationTimestamp"])
    return (_instant(status["finishedAt"]) - created).total_seconds() * time_scale


def summary(jcts: Mapping[str, float | None]) -> dict[str, Any]:
    """Mean JCT over the finished jobs, and how many did not finish."""
    done = [value for value in jcts.values() if value is not None]
    return {"jobs": len(jcts), "finished": len(done),
            "avg_jct_s": round(float(np.mean(done)), 1) if done else None,
            "p95_jct_s": round(float(np.percentile(done, 95)), 1) if done else None}


def paired_ratio(mine: Mapping[str, float | None], theirs: Mapping[str, float | None]
                 ) -> float | None:
    """Mean JCT of `mine` over mean JCT of `theirs`, on the jobs both finished."""
    both = [key for key, value in mine.items()
            if value is not None and theirs.get(key) is not None]
    if not both:
        return None
    top = float(np.mean([mine[key] for key in both]))
    bottom = float(np.mean([theirs[key] for key in both]))
    return round(top / bottom, 3) if bottom > 0 else None
