"""`load-aware`: kube-scheduler with Trimaran's TargetLoadPacking as its only score.

Same queue and filters as kube-default; nodes are scored on their *sampled* CPU use plus the
pods bound since the sample, packing towards a target utilisation (40 % by default) and
spreading past it. See decide/scores/target_load_packing.py and docs/SCHEDULERS.md.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from dagpilot.core.types import Cluster
from dagpilot.decide.scores.target_load_packing import TargetLoadPacking
from dagpilot.decide.scoring import Scoring
from dagpilot.schedulers.framework_choice import FrameworkChoice
from dagpilot.schedulers.list_scheduler import ListScheduler
from dagpilot.schedulers.ordering import PrioritySort

NAME = "load-aware"
DEFAULT_TARGET_PERCENT = 40.0


def _choice(target_percent: float, cluster: Cluster,
            rng: np.random.Generator) -> FrameworkChoice:
    del cluster
    return FrameworkChoice(Scoring([(TargetLoadPacking(target_percent), 1)]), rng)


def build(target_percent: float = DEFAULT_TARGET_PERCENT) -> ListScheduler:
    return ListScheduler(NAME, PrioritySort, partial(_choice, target_percent))
