"""The curriculum: small workloads first, then larger ones.

Stage s of S draws `jobs_s` jobs per episode, growing geometrically from `min_jobs` to
`max_jobs`, from the smallest `share_s` of the job pool by total work (growing linearly from
1/S to all of it). Early episodes are short and their credit assignment easy: a few jobs, few
decisions, small DAGs; the last stage trains on the full mix at full size. Iterations are split
evenly between the stages.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dagpilot.core.types import Job
from dagpilot.train.config import CurriculumSettings


@dataclass(frozen=True)
class Stage:
    index: int
    jobs: int  # jobs per episode
    pool_share: float  # drawn from this smallest share of the pool (by total work)


@dataclass(frozen=True)
class Curriculum:
    stages: tuple[Stage, ...]
    iterations: int

    @classmethod
    def of(cls, settings: CurriculumSettings, iterations: int) -> Curriculum:
        count = settings.stages
        ratio = settings.max_jobs / settings.min_jobs
        stages = tuple(
            Stage(s, round(settings.min_jobs * ratio ** (s / (count - 1))) if count > 1
                  else settings.max_jobs, (s + 1) / count)
            for s in range(count))
        return cls(stages, max(iterations, 1))

    def stage(self, iteration: int) -> Stage:
        """The stage of a PPO iteration (0-based); iterations beyond the plan stay last."""
        position = min(iteration * len(self.stages) // self.iterations, len(self.stages) - 1)
        return self.stages[max(position, 0)]

    @staticmethod
    def draw(pool: Sequence[Job], stage: Stage, rng: np.random.Generator) -> list[Job]:
        """`stage.jobs` distinct jobs from the smallest `pool_share` of the pool (all of that
        share when it is smaller), in pool order."""
        ordered = sorted(range(len(pool)), key=lambda i: (pool[i].total_work_core_s, i))
        allowed = ordered[:max(1, math.ceil(stage.pool_share * len(pool)))]
        count = min(stage.jobs, len(allowed))
        chosen = rng.choice(len(allowed), size=count, replace=False)
        return [pool[i] for i in sorted(allowed[c] for c in chosen.tolist())]
