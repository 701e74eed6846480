"""The validation gates: before a fine-tune serves, and after.

Before (`validate`): the candidate and the serving model, greedy as in serving, on the same
held-back recalibrated scenarios and simulator seeds (one arrival sequence per validation
seed, each replayed on one or more simulator seeds); a seed's JCT is the mean censored average
JCT (train.evaluation) of its replays, the ratio is paired seed by seed, and the candidate
passes when the upper bound of the ratio's 95 % interval is at most 1.00. Replays cut the
chaos of one run (a changed placement reorders every later event) without adding seeds.

After (`live_verdict`): the journal's decisions of the new model against its predecessor's,
the last `window` of each: the fallback rate, the unschedulable rate (decision `source`) and the
prediction error (mean |slowdown - 1| of the feedback of pods it placed). Any worse: failed.
Fewer than `window` decisions of the new model: no verdict yet.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dagpilot.agent import Agent, DagpilotScheduler
from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster
from dagpilot.native import simulate
from dagpilot.online.drift import slowdowns
from dagpilot.online.interval import RatioInterval, paired_ratio_interval
from dagpilot.train.evaluation import censored_avg_jct
from dagpilot.train.scenarios import EpisodeTask

PASS_AT_MOST = 1.00


@dataclass(frozen=True)
class GateResult:
    interval: RatioInterval
    candidate_jct_s: tuple[float, ...]
    serving_jct_s: tuple[float, ...]

    @property
    def passed(self) -> bool:
        return self.interval.high <= PASS_AT_MOST


def validate(candidate: Agent, serving: Agent, tasks: Sequence[EpisodeTask], cluster: Cluster,
             sim: SimSettings) -> GateResult:
    ours = _per_seed(tasks, [_jct(candidate, task, cluster, sim) for task in tasks])
    theirs = _per_seed(tasks, [_jct(serving, task, cluster, sim) for task in tasks])
    return GateResult(paired_ratio_interval(ours, theirs), ours, theirs)


def _per_seed(tasks: Sequence[EpisodeTask], jcts: Sequence[float]) -> tuple[float, ...]:
    """Each arrival sequence's mean JCT over its replays, in sequence order."""
    by_seed: dict[int, list[float]] = {}
    for task, jct in zip(tasks, jcts, strict=True):
        by_seed.setdefault(task.scenario, []).append(jct)
    return tuple(statistics.fmean(values) for values in by_seed.values())


def _jct(agent: Agent, task: EpisodeTask, cluster: Cluster, sim: SimSettings) -> float:
    return censored_avg_jct(simulate(task.jobs, cluster, DagpilotScheduler(agent), sim,
                                     task.sim_seed))


@dataclass(frozen=True)
class LiveRates:
    decisions: int
    fallback: float
    unschedulable: float
    prediction_error: float  # NaN when no placed pod has feedback yet


def live_rates(records: Sequence[Mapping[str, Any]], version: str, window: int) -> LiveRates:
    """The last `window` decisions of `version` and the feedback of the pods they placed."""
    decisions = [r for r in records if r.get("kind") == "decision" and r.get("model") == version]
    recent = decisions[-window:]
    uids = {r.get("uid") for r in recent}
    own = [r for r in records if r.get("kind") != "feedback" or r.get("pod_uid") in uids]
    errors = [abs(s.ratio - 1.0) for s in slowdowns(own)]
    count = len(recent)
    return LiveRates(count, _share(recent, "fallback"), _share(recent, "unschedulable"),
                     statistics.fmean(errors) if errors else float("nan"))


def live_verdict(records: Sequence[Mapping[str, Any]], new: str, old: str,
                 window: int) -> bool | None:
    """True: the new model is no worse than the old on every rate; False: worse on one; None:
    too few decisions of the new model yet."""
    ours, theirs = live_rates(records, new, window), live_rates(records, old, window)
    if ours.decisions < window:
        return None
    worse = (ours.fallback > theirs.fallback or ours.unschedulable > theirs.unschedulable
             or ours.prediction_error > theirs.prediction_error)  # NaN compares False
    return not worse


def _share(decisions: Iterable[Mapping[str, Any]], source: str) -> float:
    listed = list(decisions)
    return sum(r.get("source") == source for r in listed) / len(listed) if listed else 0.0
