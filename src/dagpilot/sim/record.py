"""What one simulated run leaves behind: the facts the benchmark harness turns into metrics."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class JobRecord:
    job_id: str
    arrival_s: float
    finish_s: float | None  # None when the run ended first, or the job failed
    critical_path_s: float  # ideal-speed critical path of the job
    work_core_s: float
    failed: bool = False  # a pod was OOM-killed more often than SimSettings.oom_retry_limit

    @property
    def jct_s(self) -> float | None:
        return None if self.finish_s is None else self.finish_s - self.arrival_s

    def effective_jct_s(self, end_s: float) -> float:
        """The JCT that benchmarks and evaluations compare: finish - arrival; a job the run cut
        off counts until `end_s` (censored); a failed job until `end_s` plus its critical path,
        the least a resubmission costs to get its result. Without that term failing a job
        would look cheap whenever it lets the run end sooner."""
        if self.finish_s is not None:
            return self.finish_s - self.arrival_s
        rerun = self.critical_path_s if self.failed else 0.0
        return end_s - self.arrival_s + rerun


@dataclass(frozen=True, slots=True)
class PodRecord:
    pod: str  # PodRef.name
    job_id: str
    task_id: str
    attempt: int
    node: str | None
    created_s: float
    bound_s: float | None
    started_s: float | None
    finished_s: float | None
    outcome: str  # "succeeded" | "oom-killed" | "node-fault" | "unfinished" | "cancelled"
    ended_s: float | None = None  # when the attempt ended, whatever the outcome


@dataclass(frozen=True, slots=True)
class Sample:
    """Cluster-wide figures at one instant (sampled on every change of the backlog and on ticks)."""

    time_s: float
    pending: int  # pods waiting for a node
    running: int
    cpu_allocated: float  # share of allocatable CPU bound by requests, 0..1
    cpu_used: float  # share of allocatable CPU actually busy, 0..1
    gpu_allocated: float  # share of GPUs bound, 0..1


@dataclass
class RunRecord:
    """Everything a run produced; appended to while it runs, read afterwards."""

    scheduler: str
    seed: int
    physics: bool
    jobs: list[JobRecord] = field(default_factory=list)
    pods: list[PodRecord] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    oom_kills: int = 0
    fault_kills: int = 0
    restarts: int = 0
    decisions: int = 0
    decision_seconds: float = 0.0  # wall time spent inside Scheduler.decide
    events: int = 0
    wall_seconds: float = 0.0
    end_s: float = 0.0
    interrupted: bool = False
