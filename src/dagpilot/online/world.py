"""What the fine-tune and the gate run on: the serving model, and the recalibrated world.

`serving_model` loads one registry version exactly as serving does (checksums, weights_only,
the feature schema) into a network and its normaliser; `world` loads the configured workload
and cluster and recalibrates the drifting class's runtimes (online.scenarios).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dagpilot.agent import agent_from_files
from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster, Job
from dagpilot.online.drift import Drift
from dagpilot.online.scenarios import recalibrated
from dagpilot.policy import PolicyNet
from dagpilot.registry import load_version
from dagpilot.state import FEATURE_SCHEMA_VERSION, Normaliser
from dagpilot.workloads import load


@dataclass(frozen=True)
class World:
    jobs: tuple[Job, ...]
    cluster: Cluster
    sim: SimSettings = field(default_factory=SimSettings)


def serving_model(models: Path, version: str) -> tuple[PolicyNet, Normaliser]:
    loaded = load_version(models, version, FEATURE_SCHEMA_VERSION)
    agent = agent_from_files(loaded.state_dict, loaded.normaliser, loaded.config,
                             explain=False)
    return agent.model, agent.normaliser


def world(workload: str, cluster: str, drift: Drift | None,
          sim: SimSettings | None = None) -> World:
    jobs = tuple(load(workload))
    return World(recalibrated(jobs, drift) if drift is not None else jobs,
                 load_cluster(cluster), sim or SimSettings())

