"""Training settings: frozen values, written into the model's metadata."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from dagpilot.core.errors import SpecError
from dagpilot.policy import PolicyConfig
from dagpilot.schedulers import SCHEDULERS

DEFAULT_TEACHERS = ("sjf-cp", "heft", "tetris", "cws-rank-min-rr", "kube-default", "load-aware",
                    "physics-rules")


@dataclass(frozen=True)
class PPOSettings:
    learning_rate: float = 3e-4
    clip: float = 0.2
    value_coef: float = 0.5
    entropy_coef: float = 0.01
    epochs: int = 4
    minibatch: int = 64
    gamma: float = 1.0  # the return is then minus the total job-time: what avg JCT measures
    lam: float = 0.95
    max_grad_norm: float = 0.5
    # Rewards are job-seconds; dividing by one job-hour keeps values near unit scale.
    reward_scale: float = 3600.0
    normalise_advantages: bool = True


@dataclass(frozen=True)
class BCSettings:
    """Behaviour cloning: imitate the teacher's placements (cross-entropy), and fit the critic
    to the teacher's returns so that PPO starts with a sensible value."""

    learning_rate: float = 1e-3
    epochs: int = 4
    minibatch: int = 64
    teacher: str = "auto"  # a scheduler name, or the best of `teachers` on trial episodes
    teachers: tuple[str, ...] = DEFAULT_TEACHERS
    trials: int = 3  # full-size trial episodes the automatic choice is made on

    def __post_init__(self) -> None:
        names = self.teachers if self.teacher == "auto" else (self.teacher,)
        unknown = [name for name in names if name not in SCHEDULERS]
        if self.trials < 1:
            raise SpecError(str(self.trials), "the teacher's choice needs at least one trial")
        if unknown or not names:
            raise SpecError(",".join(unknown), "unknown teacher; known: auto, "
                            f"{', '.join(sorted(SCHEDULERS))}")


@dataclass(frozen=True)
class CurriculumSettings:
    """Jobs per episode grow geometrically from `min_jobs` to `max_jobs` over `stages`."""

    min_jobs: int = 2
    max_jobs: int = 8
    stages: int = 3


@dataclass(frozen=True)
class TrainConfig:
    iterations: int = 50
    episodes_per_iteration: int = 8
    replays: int = 4  # episodes sharing one arrival sequence (the input-driven baseline)
    seed: int = 0
    bc_iterations: int = 2
    load: float = 0.8  # Poisson arrivals ask for this share of the cluster's busiest resource
    physics: bool = True
    checkpoint_every: int = 10
    # fixed episodes the greedy policy is measured on against the heuristics after behaviour
    # cloning and at every checkpoint (the learning curve); 0 turns the evaluation off
    eval_episodes: int = 4
    # hours of Poisson arrivals of the whole pool (cycled) at `load` in each evaluation episode,
    # which loads the cluster as serving does; 0: episodes of the curriculum's full-size stage
    eval_horizon_h: float = 1.0
    # hours of the same loaded arrivals in each PPO episode instead of the curriculum's few
    # jobs (what PPO is rewarded for should be what load rewards); 0: the curriculum
    ppo_horizon_h: float = 0.0
    # torch's intra-op threads in the training process (a process-wide setting): one is the
    # fastest for this network's small matrices, and leaves the other cores to rollouts
    torch_threads: int = 1
    # PPO episodes advanced together, their decisions batched into one network call per round
    # (train.lockstep; each run of this many consecutive tasks is a group): 1 runs them one by
    # one; the same value gives the same episodes on every backend
    rollout_lanes: int = 8
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    ppo: PPOSettings = field(default_factory=PPOSettings)
    bc: BCSettings = field(default_factory=BCSettings)
    curriculum: CurriculumSettings = field(default_factory=CurriculumSettings)

    def __post_init__(self) -> None:
        if self.iterations < 0 or self.bc_iterations < 0:
            raise SpecError(f"{self.iterations}/{self.bc_iterations}",
                            "iterations and bc-iterations cannot be negative")
        if self.rollout_lanes < 1:
            raise SpecError(str(self.rollout_lanes), "rollouts need at least one lane")
        if self.replays < 1 or self.episodes_per_iteration < 1:
            raise SpecError(str(self.replays), "episodes and replays must be at least 1")
        if self.episodes_per_iteration % self.replays:
            raise SpecError(f"{self.episodes_per_iteration}/{self.replays}",
                            "episodes per iteration must be a multiple of the replays (each "
                            "arrival sequence is replayed that many times)")
        if not self.load > 0:
            raise SpecError(str(self.load), "the load must be above 0")
        if not 1 <= self.curriculum.min_jobs <= self.curriculum.max_jobs:
            raise SpecError(f"{self.curriculum.min_jobs}..{self.curriculum.max_jobs}",
                            "the curriculum needs 1 <= min jobs <= max jobs")
        if self.eval_episodes < 0:
            raise SpecError(str(self.eval_episodes), "eval episodes cannot be negative")
        if not (math.isfinite(self.eval_horizon_h) and self.eval_horizon_h >= 0):
            raise SpecError(str(self.eval_horizon_h), "eval-horizon-h must be 0 (episodes of the "
                            "full-size stage) or a finite number of hours above 0")
        if not (math.isfinite(self.ppo_horizon_h) and self.ppo_horizon_h >= 0):
            raise SpecError(str(self.ppo_horizon_h), "ppo-horizon-h must be 0 (the curriculum's "
                            "episodes) or a finite number of hours above 0")
        if self.curriculum.stages < 1 or self.checkpoint_every < 1 or self.torch_threads < 1:
            raise SpecError(str(self.curriculum.stages),
                            "stages, checkpoint interval and threads must be at least 1")

    @property
    def scenarios_per_iteration(self) -> int:
        return self.episodes_per_iteration // self.replays

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
