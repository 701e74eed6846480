"""Training: behaviour-cloning warm start, then PPO with GAE, an entropy bonus and the
input-driven baseline, over a curriculum from small to large workloads. Rollouts (no
gradients) run locally or as Ray actors; `ppo` is the only place with gradients; `export`
writes model folders the registry publishes. docs/TRAINING.md has the details.
"""

from dagpilot.train.config import (
    BCSettings,
    CurriculumSettings,
    PPOSettings,
    TrainConfig,
)
from dagpilot.train.export import check_publishable, export_model, publish_model
from dagpilot.train.loop import BackendFactory, TrainData, TrainResult, train
from dagpilot.train.ray_backend import RayRollouts, RayUnavailable, ray_backend
from dagpilot.train.rollout import LocalRollouts, RolloutBackend

__all__ = ["BCSettings", "BackendFactory", "CurriculumSettings", "LocalRollouts", "PPOSettings",
           "RayRollouts", "RayUnavailable", "RolloutBackend", "TrainConfig", "TrainData",
           "TrainResult", "check_publishable", "export_model", "publish_model", "ray_backend",
           "train"]
