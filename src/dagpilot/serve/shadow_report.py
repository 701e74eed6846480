"""`dagpilot shadow report`: how far dagpilot agreed with the scheduler it shadowed, and what
its choices would have changed, estimated by the simulator on the recorded stream.

Agreement counts the shadowed pods whose outcome is known (the other scheduler bound them):
the share where dagpilot would have chosen the same node, overall and by who decided (model or
fallback). The estimate replays the recorded jobs (each "shadow_job": the job as an Argo
Workflow, at its arrival time, relative to the first) on the recorded cluster (the last
"shadow_cluster", or `cluster` when given) twice in the simulator, under kube-default (the
default profile, standing for the shadowed scheduler) and under dagpilot's model, and gives
both mean JCTs and their difference. It is a model's estimate, not a measurement: the
simulator's physics and overheads, not the cluster's.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dagpilot.agent import load_scheduler
from dagpilot.core.config import SimSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.scheduler import Scheduler
from dagpilot.core.types import Cluster, Job
from dagpilot.journal import read
from dagpilot.live.inventory import cluster_of
from dagpilot.live.workflows import WorkflowDecoder
from dagpilot.schedulers import kube_default
from dagpilot.sim.run import simulate


def agreement(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    shadows = {r["uid"]: r for r in records if r["kind"] == "shadow"}
    outcomes = [r for r in records if r["kind"] == "shadow_outcome" and r["uid"] in shadows]
    agreed: Counter[str] = Counter()
    known: Counter[str] = Counter()
    for outcome in outcomes:
        source = str(shadows[outcome["uid"]].get("source"))
        known[source] += 1
        agreed[source] += bool(outcome.get("agree"))
    total, same = sum(known.values()), sum(agreed.values())
    return {"shadowed": len(shadows), "with_outcome": total, "agreed": same,
            "agreement": same / total if total else None,
            "by_source": {source: {"with_outcome": known[source], "agreed": agreed[source]}
                          for source in sorted(known)}}


def recorded_jobs(records: Sequence[dict[str, Any]], journal: Path) -> list[Job]:
    decoder = WorkflowDecoder()
    jobs: list[Job] = []
    for record in records:
        if record["kind"] != "shadow_job":
            continue
        parsed = decoder(record["workflow"])
        if parsed.job is None:
            raise InvalidInput(str(journal), f"shadow_job {record.get('job')}", "workflow",
                               str(parsed.error))
        jobs.append(parsed.job)
    if not jobs:
        return []
    start = min(job.arrival_s for job in jobs)
    return sorted((dataclasses.replace(job, arrival_s=job.arrival_s - start) for job in jobs),
                  key=lambda job: job.arrival_s)


def recorded_cluster(records: Sequence[dict[str, Any]], journal: Path) -> Cluster:
    inventories = [r for r in records if r["kind"] == "shadow_cluster"]
    if not inventories:
        raise InvalidInput(str(journal), "", "shadow_cluster",
                           "no cluster recorded: give --cluster")
    return cluster_of(inventories[-1]["nodes"], "shadowed", str(journal))


def mean_jct_s(jobs: Sequence[Job], cluster: Cluster, scheduler: Scheduler,
               seed: int) -> float:
    record = simulate(jobs, cluster, scheduler, SimSettings(), seed)
    values = [job.effective_jct_s(record.end_s) for job in record.jobs]
    return sum(values) / len(values) if values else 0.0


def report(journal: Path, models: Path, cluster: Cluster | None = None,
           seed: int = 0) -> dict[str, Any]:
    reading = read(journal)
    records = reading.records
    document: dict[str, Any] = {"journal": str(journal), "skipped_lines": reading.skipped,
                                **agreement(records)}
    jobs = recorded_jobs(records, journal)
    document["jobs"] = len(jobs)
    if not jobs:
        document["estimate"] = None
        return document
    where = cluster or recorded_cluster(records, journal)
    baseline = mean_jct_s(jobs, where, kube_default.build(), seed)
    ours = mean_jct_s(jobs, where, load_scheduler(models), seed)
    document["estimate"] = {
        "cluster": where.name, "nodes": len(where.nodes), "seed": seed,
        "kube_default_mean_jct_s": baseline, "dagpilot_mean_jct_s": ours,
        "difference_s": ours - baseline,
        "relative": (ours - baseline) / baseline if baseline else None}
    return document
