"""What the fine-tune and the gate run on: the serving model, and the recalibrated world.

`serving_model` loads one registry version exactly as serving does (checksums, weights_only,
the feature schema) into a network and its normaliser; `world` loads the configured workload
and cluster and recalibrates them: with an estimate from the feedback (online.recalibration),
each slow class's runtimes and each slow zone's disks; without one, the drifting class's
runtimes by the drift's slowdown (online.scenarios).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dagpilot.agent import agent_from_files
from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster, Job
from dagpilot.online.drift import Drift
from dagpilot.online.recalibration import Recalibration, replayed_cluster
from dagpilot.online.scenarios import recalibrated, scaled
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


def world(workload: str, cluster: str, drift: Drift | None, sim: SimSettings | None = None,
          recalibration: Recalibration | None = None) -> World:
    jobs, nodes, settings = tuple(load(workload)), load_cluster(cluster), sim or SimSettings()
    if recalibration is not None:
        return World(scaled(jobs, recalibration.factors()),
                     replayed_cluster(nodes, recalibration, settings.effects), settings)
    return World(recalibrated(jobs, drift) if drift is not None else jobs, nodes, settings)

