"""The RL environment: gymnasium-style `reset` / `step`, stopping at every decision point.

At a decision point the agent sees the ClusterView and answers with a Placement (bound at once;
the same decision point goes on while pods are pending and some node has room) or None (place
nothing more now: the simulation advances to the next decision point). The reward of a step is
    -(jobs in the system) x (time advanced) - reward_oom_penalty x (OOM kills in the step)
    - (critical path of each job that failed in the step),
so the return of an episode is minus the total time jobs spent in the system (plus penalties),
and maximising it minimises the average job completion time as benchmarks count it (a failed
job: until the end of the run plus its rerun, `JobRecord.effective_jct_s`). `simulate` drives
this same loop with a Scheduler, so benchmarks and training cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from dagpilot.core.config import SimSettings
from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster, Job
from dagpilot.core.view import ClusterView
from dagpilot.sim.record import RunRecord
from dagpilot.sim.simulation import Simulation


class StepInfo(NamedTuple):
    """What happened in one step (a named tuple: one is made per step)."""

    now_s: float
    placed: bool  # the step bound a placement
    oom_kills: int  # OOM kills during the step
    jobs_in_system: int
    jobs_ended: int


class SimEnv:
    """One environment over a fixed workload and cluster; `reset(seed)` starts an episode."""

    def __init__(self, jobs: Sequence[Job], cluster: Cluster, settings: SimSettings | None = None,
                 scheduler_name: str = "agent") -> None:
        self._jobs = tuple(jobs)
        self._cluster = cluster
        self._settings = settings or SimSettings()
        self._scheduler_name = scheduler_name
        self._sim: Simulation | None = None

    def reset(self, seed: int) -> ClusterView:
        """A fresh run of the workload with this seed, advanced to its first decision point."""
        self._sim = Simulation(self._jobs, self._cluster, self._settings, seed,
                               self._scheduler_name)
        self._sim.advance()  # nothing before the first decision point depends on the agent
        return self._sim.state

    def step(self, placement: Placement | None) -> tuple[ClusterView, float, bool, StepInfo]:
        sim = self._running()
        sim.record.decisions += 1
        kills_before, owed_before = sim.record.oom_kills, sim.failure_cost
        if placement is not None:
            sim.bind(placement)
            if sim.more_to_place():
                return sim.state, 0.0, False, self._info(sim, True, 0)
        cost = sim.advance()
        kills = sim.record.oom_kills - kills_before
        reward = (-cost - self._settings.reward_oom_penalty * kills
                  - (sim.failure_cost - owed_before))
        return sim.state, reward, sim.done, self._info(sim, placement is not None, kills)

    @property
    def done(self) -> bool:
        return self._running(allow_done=True).done

    @property
    def record(self) -> RunRecord:
        """The record of the current episode, filled in as it runs (complete after `close`)."""
        return self._running(allow_done=True).record

    @property
    def jobs_ended(self) -> int:
        return self._running(allow_done=True).engine.ended

    def close(self) -> RunRecord:
        """End the episode where it is: unfinished pods and jobs are recorded as such."""
        return self._running(allow_done=True).close()

    def _running(self, allow_done: bool = False) -> Simulation:
        if self._sim is None:
            raise RuntimeError("call reset(seed) first")
        if self._sim.done and not allow_done:
            raise RuntimeError("the episode is over; call reset(seed)")
        return self._sim

    @staticmethod
    def _info(sim: Simulation, placed: bool, kills: int) -> StepInfo:
        return StepInfo(sim.kernel.now_s, placed, kills, sim.engine.in_system, sim.engine.ended)
