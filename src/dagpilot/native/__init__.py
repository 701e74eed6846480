"""The native simulator core: `kube-default` runs in C, equal to the Python simulator's runs.

`simulate` is `dagpilot.sim.run.simulate` that takes the native path when it can: the
scheduler is `kube-default`, the compiled core was built with the package, DAGPILOT_NATIVE is
not "0", and no node has more than 64 GPUs. Every other scheduler (the DRL policy, the other
baselines) runs in the Python simulator, which stays the reference.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Sequence

from dagpilot.core.config import SimSettings
from dagpilot.core.scheduler import Scheduler
from dagpilot.core.types import Cluster, Job
from dagpilot.native import pack
from dagpilot.native.run import simulate_native
from dagpilot.schedulers.kube_default import NAME as SCHEDULER
from dagpilot.schedulers.list_scheduler import ListScheduler
from dagpilot.sim.record import RunRecord
from dagpilot.sim.run import simulate as simulate_python

__all__ = ["available", "simulate", "simulate_native", "supports"]


def available() -> bool:
    """Whether the compiled core is importable (and not switched off with DAGPILOT_NATIVE=0)."""
    if os.environ.get("DAGPILOT_NATIVE", "1") == "0":
        return False
    return importlib.util.find_spec("dagpilot.native._core") is not None


def supports(scheduler: Scheduler) -> bool:
    """The native core runs kube-default as `schedulers.kube_default.build()` makes it."""
    return isinstance(scheduler, ListScheduler) and scheduler.name == SCHEDULER


def simulate(jobs: Sequence[Job], cluster: Cluster, scheduler: Scheduler, settings: SimSettings,
             seed: int, *, progress: Callable[[float], None] | None = None) -> RunRecord:
    """One run, natively when `supports(scheduler)`, `available()` and the core can hold the
    cluster (`pack.supported`); the same RunRecord either way."""
    if supports(scheduler) and available() and pack.supported(cluster):
        return simulate_native(jobs, cluster, settings, seed, progress=progress)
    return simulate_python(jobs, cluster, scheduler, settings, seed, progress=progress)
