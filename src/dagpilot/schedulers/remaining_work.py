"""RemainingWork: a job's work not yet finished (core-seconds of its unfinished tasks), from the
view's finished tasks; recomputed only when that set grows."""

from __future__ import annotations

from dagpilot.core.types import Job
from dagpilot.core.view import ClusterView


class RemainingWork:
    def __init__(self) -> None:
        self._cache: dict[str, tuple[int, float]] = {}

    def of(self, job: Job, view: ClusterView) -> float:
        finished = view.finished_tasks(job.id)
        cached = self._cache.get(job.id)
        if cached is not None and cached[0] == len(finished):
            return cached[1]
        remaining = sum(task.work_core_s for task in job.tasks if task.id not in finished)
        self._cache[job.id] = (len(finished), remaining)
        return remaining
