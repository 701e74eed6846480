"""One attempt of a pod from binding to its end: where it runs and how far its work has got."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dagpilot.core.view import PodRef

if TYPE_CHECKING:
    from dagpilot.sim.engine import JobRun
    from dagpilot.sim.nodes import SimNode
    from dagpilot.sim.progress import CommGroup


class Phase:
    """Where a bound pod is in its life."""

    STARTING = 0  # bound, pulling its image and starting its container
    RUNNING = 1
    SUCCEEDED = 2
    KILLED = 3  # OOM-killed or lost with its node


class PodRun:
    """A bound pod. `remaining` is work in seconds at nominal speed, as of time `since`.

    Its completion event carries `version`; any change of rate bumps the version, so earlier
    completion events are recognised as stale and skipped (lazy invalidation).
    """

    __slots__ = ("bound_s", "cache", "comm_share", "cpu_m", "cpu_used", "gpus", "group",
                 "io_share", "iops", "job_run", "membw", "membw_share", "node", "pcie", "phase",
                 "rate", "ref", "remaining", "since", "started_s", "version", "working")

    def __init__(self, ref: PodRef, job_run: JobRun, node: SimNode, gpus: tuple[int, ...],
                 *, cpu_m: int, now_s: float) -> None:
        task = ref.task
        self.ref = ref
        self.job_run = job_run
        self.node = node
        self.gpus = gpus
        self.cpu_m = cpu_m
        self.phase = Phase.STARTING
        self.bound_s = now_s
        self.started_s = -1.0
        self.remaining = ref.runtime_s
        self.rate = 0.0
        self.since = now_s
        self.version = 0
        self.cpu_used = task.requests.cpu * task.cpu_intensity
        self.membw_share = task.membw_intensity
        self.io_share = task.io_intensity
        self.comm_share = task.comm_share
        # Filled in when it starts running.
        self.working = 0
        self.cache = 0
        self.membw = 0.0
        self.iops = 0.0
        self.pcie = 1.0
        self.group: CommGroup | None = None
