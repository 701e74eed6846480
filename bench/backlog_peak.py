"""What the peak backlog of the 17x burst is made of, and whether any node could take it.

    .venv/bin/python bench/backlog_peak.py [--seeds 3] [--schedulers kube-default,dagpilot]

The burst case of bench/policy_targets.py (built-in mix on `builtin:default`, Poisson load 0.8,
3 h of arrivals, 17x for 10 minutes in the middle), one run per scheduler and seed. At the
sample where each run's backlog peaks, the pods then pending are rebuilt from the run's pod
records (created, not yet bound), with what every node had free at that instant (its
allocatable minus the requests of the pods bound to it and not yet ended). A pending pod is
*placeable* when some Ready-or-not node has room for its CPU, memory and GPUs of its model:
a scheduler could have started it then. The rest wait for capacity no placement can make.
Writes bench/out/backlog_peak.json.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dagpilot.bench.harness import BenchConfig, Prepared, arrivals_for, prepare, sim_settings
from dagpilot.bench.runner import scheduler_registry
from dagpilot.core.config import Settings
from dagpilot.core.types import Cluster, Job, Resources
from dagpilot.sim import RunRecord, simulate
from dagpilot.workloads.arrivals import ArrivalSpec

OUT = Path("bench/out/backlog_peak.json")
HORIZON_S = 3 * 3600.0
BURST = f"17x@{int(HORIZON_S / 2 - 300)}s+600s"


@dataclass(frozen=True)
class Peak:
    time_s: float
    pending: list[Resources]  # the requests of the pods pending then
    free: np.ndarray  # (nodes, 3) cpu, memory, GPUs free on each node then

    def placeable(self, cluster: Cluster) -> list[bool]:
        models = [node.allocatable.gpu_model for node in cluster.nodes]
        return [any(self.free[i, 0] >= r.cpu and self.free[i, 1] >= r.memory
                    and self.free[i, 2] >= r.gpus and (not r.gpus or r.gpu_model is None
                                                       or r.gpu_model == models[i])
                    for i in range(len(models))) for r in self.pending]


def peak_of(record: RunRecord, jobs: list[Job], cluster: Cluster) -> Peak:
    """The pods pending, and every node's free room, at the sample of the highest backlog."""
    at = max(record.samples, key=lambda sample: sample.pending).time_s
    requests = {(job.id, task.id): task.requests for job in jobs for task in job.tasks}
    index = {node.name: i for i, node in enumerate(cluster.nodes)}
    free = np.array([[n.allocatable.cpu, n.allocatable.memory, n.allocatable.gpus]
                     for n in cluster.nodes], dtype=np.float64)
    pending = []
    for pod in record.pods:
        asked = requests[(pod.job_id, pod.task_id)]
        if pod.created_s <= at and (pod.bound_s is None or pod.bound_s > at):
            pending.append(asked)
        elif pod.bound_s is not None and pod.bound_s <= at and pod.node is not None and (
                pod.ended_s is None or pod.ended_s > at):
            free[index[pod.node]] -= (asked.cpu, asked.memory, asked.gpus)
    return Peak(at, pending, free)


def describe(peak: Peak, cluster: Cluster) -> dict[str, Any]:
    placeable = peak.placeable(cluster)
    kinds = Counter(f"{r.gpus} GPU {r.gpu_model or 'any'}" if r.gpus else "CPU"
                    for r in peak.pending)
    free_gpus: Counter[str] = Counter()
    for node, row in zip(cluster.nodes, peak.free, strict=True):
        if node.allocatable.gpus:
            free_gpus[str(node.allocatable.gpu_model)] += int(row[2])
    return {"time_s": peak.time_s, "pending": len(peak.pending),
            "placeable": int(sum(placeable)), "kinds": dict(kinds),
            "gpus_asked": int(sum(r.gpus for r in peak.pending)),
            "free_gpus_by_model": dict(free_gpus)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--schedulers", default="kube-default,load-aware,dagpilot")
    args = parser.parse_args()
    names = tuple(args.schedulers.split(","))
    config = BenchConfig(("builtin:mix",), "builtin:default", names, tuple(range(args.seeds)),
                         Path("bench/out/backlog_peak"), horizon_s=HORIZON_S,
                         arrival=ArrivalSpec.from_options("poisson", 0.8, [BURST]))
    settings = Settings()
    registry = scheduler_registry()
    prepared: Prepared = prepare(config, settings, registry)
    sim = sim_settings(settings.sim, config, prepared.jobs)
    rows = []
    for seed in config.seeds:
        jobs = arrivals_for(seed, config, prepared)
        for name in names:
            record = simulate(jobs, prepared.cluster, registry[name](), sim, seed)
            row = {"scheduler": name, "seed": seed,
                   **describe(peak_of(record, jobs, prepared.cluster), prepared.cluster)}
            rows.append(row)
            print(json.dumps(row))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(rows, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
