"""The discrete-event cluster simulator (no torch): kernel, physics, cluster state, engine, env.

`simulate(jobs, cluster, scheduler, settings, seed)` runs a workload under a Scheduler and
returns a RunRecord; `SimEnv` is the same simulator as an RL environment.
"""

from dagpilot.sim.cluster_state import InvalidPlacement
from dagpilot.sim.env import SimEnv, StepInfo
from dagpilot.sim.record import JobRecord, PodRecord, RunRecord, Sample
from dagpilot.sim.run import simulate

__all__ = ["InvalidPlacement", "JobRecord", "PodRecord", "RunRecord", "Sample", "SimEnv",
           "StepInfo", "simulate"]
