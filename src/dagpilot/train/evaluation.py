"""The learning curve's measure: the greedy policy against the best heuristic on fixed episodes.

Training episodes change from iteration to iteration (new arrival sequences, curriculum stages),
so their JCTs do not show progress. `Evaluator` takes fixed episodes (the loop's: the whole
training pool arriving at the training load for `eval_horizon_h` hours, or the curriculum's
full-size stage; phase "eval", never a training episode), runs every candidate heuristic on them
once, and at each evaluation runs the current policy, greedy as in serving, on exactly the same
sequences and simulator seeds. The figure of merit is
the mean over episodes of policy JCT / best heuristic's JCT, where the best heuristic is the one
with the lowest mean JCT over these episodes. A job still unfinished at the end of an episode
counts with its time so far (censored), a failed job with its rerun on top, so a policy that
stalls or fails jobs cannot look good.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dagpilot.agent import Agent, DagpilotScheduler
from dagpilot.core.config import SimSettings
from dagpilot.core.scheduler import Scheduler
from dagpilot.core.types import Cluster
from dagpilot.native import simulate
from dagpilot.policy import PolicyNet
from dagpilot.schedulers import build
from dagpilot.sim import RunRecord
from dagpilot.state import Normaliser
from dagpilot.train.scenarios import EpisodeTask

RIVALS = ("load-aware",)
"""Measured against besides the candidate teachers (it is one by default, but `--teacher` or a
settings file may name others): the best heuristic under load in the benchmark
(docs/BENCHMARKS.md)."""


@dataclass(frozen=True)
class EvaluationRow:
    policy_jct_s: float  # mean over episodes of the policy's average JCT
    best_heuristic: str
    best_heuristic_jct_s: float
    ratio: float  # mean over episodes of policy JCT / best heuristic's JCT


class Evaluator:
    """Fixed evaluation episodes and the heuristics' results on them, computed once."""

    def __init__(self, tasks: Sequence[EpisodeTask], heuristics: Sequence[str],
                 cluster: Cluster, sim: SimSettings) -> None:
        if not tasks or not heuristics:
            raise ValueError("an evaluation needs episodes and heuristics")
        self.tasks = tuple(tasks)
        self.cluster = cluster
        self.sim = sim
        self.heuristic_jct_s = {name: self._run(build(name)) for name in heuristics}
        self.best = min(heuristics, key=lambda name: float(np.mean(self.heuristic_jct_s[name])))

    def evaluate(self, model: PolicyNet, normaliser: Normaliser) -> EvaluationRow:
        """The greedy policy on the evaluation episodes (`model` is left in the mode it had)."""
        training = model.training
        model.eval()
        try:
            jct = self._run(DagpilotScheduler(Agent(model, normaliser, explain=False)))
        finally:
            model.train(training)
        best = self.heuristic_jct_s[self.best]
        return EvaluationRow(float(np.mean(jct)), self.best, float(np.mean(best)),
                             float(np.mean(jct / best)))

    def _run(self, scheduler: Scheduler) -> np.ndarray:
        """Average JCT (censored) of each evaluation episode under `scheduler`."""
        return np.array([censored_avg_jct(simulate(task.jobs, self.cluster, scheduler,
                                                   self.sim, task.sim_seed))
                         for task in self.tasks])


def censored_avg_jct(record: RunRecord) -> float:
    """Average JCT as benchmarks count it: an unfinished job until the end of the run, a
    failed one plus its rerun (`JobRecord.effective_jct_s`)."""
    if not record.jobs:
        return 0.0
    return float(np.mean([job.effective_jct_s(record.end_s) for job in record.jobs]))
