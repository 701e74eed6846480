"""`dagpilot run`, the main job: the built-in workload on the built-in cluster, every baseline
and the shipped DRL model (`dagpilot`, the current version of the registry in ./models).

The archetype mix arrives as a Poisson process at 0.8 of the cluster's busiest resource (the
GPUs), with a 17x burst in the middle of the arrival horizon. The sizes are chosen so that the
whole job (every baseline and the shipped model, every seed) finishes in under 2 minutes on 2
cores (docs/BENCHMARKS.md has the figures); it needs nothing but the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

from dagpilot.bench.harness import BenchConfig
from dagpilot.workloads.arrivals import ArrivalSpec, Burst

WORKLOAD = "builtin:mix"
CLUSTER = "builtin:default"
OUT_DIR = Path("dagpilot-run")
# DESIGN.md section 5's eight baselines, in the order the table lists them, and the seed's
# physics rules as a scorer (docs/SCHEDULERS.md)
BASELINES = ("kube-default", "fifo", "random", "sjf-cp", "heft", "tetris", "cws-rank-min-rr",
             "load-aware", "physics-rules")
SCHEDULERS = (*BASELINES, "dagpilot")
SEEDS = (0, 1, 2)
LOAD = 0.8
BURST_FACTOR = 17.0
HORIZON_S = 6 * 3600.0  # jobs arrive for six hours
BURST_S = 600.0  # ten minutes of 17x arrivals, centred in the horizon


def burst() -> Burst:
    return Burst(BURST_FACTOR, HORIZON_S / 2 - BURST_S / 2, BURST_S)


def available_cores() -> int:
    """The cores this process may run on (its affinity, where the platform tells)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def main_job(out_dir: Path = OUT_DIR, workers: int | None = None) -> BenchConfig:
    """The benchmark `dagpilot run` runs: its runs spread over every available core."""
    return BenchConfig(
        workloads=(WORKLOAD,),
        cluster=CLUSTER,
        schedulers=SCHEDULERS,
        seeds=SEEDS,
        out_dir=out_dir,
        arrival=ArrivalSpec("poisson", LOAD, (burst(),)),
        physics=True,
        horizon_s=HORIZON_S,
        workers=workers or available_cores(),
    )
