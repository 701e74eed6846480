"""Figures that describe a set of jobs: counts, critical paths and total work."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dagpilot.core.types import Job


def spread(values: Sequence[float]) -> dict[str, float]:
    """min, mean, percentiles and max of some values (zeros when there are none)."""
    if not values:
        return {"min": 0.0, "mean": 0.0, "p50": 0.0, "p95": 0.0, "max": 0.0}
    array = np.asarray(values, dtype=float)
    return {"min": float(array.min()), "mean": float(array.mean()),
            "p50": float(np.percentile(array, 50)), "p95": float(np.percentile(array, 95)),
            "max": float(array.max())}


def summarize(jobs: Sequence[Job]) -> dict[str, Any]:
    """The `workloads show --json` document of DESIGN.md section 7, plus pod counts."""
    return {
        "jobs": len(jobs),
        "tasks": sum(len(job.tasks) for job in jobs),
        "pods": sum(job.instances for job in jobs),
        "critical_path_s": spread([job.critical_path_s for job in jobs]),
        "total_work_core_s": float(sum(job.total_work_core_s for job in jobs)),
        "arrival_span_s": (max(j.arrival_s for j in jobs) - min(j.arrival_s for j in jobs))
        if jobs else 0.0,
    }
