"""The adapter's cycle: journal -> drift -> fine-tune -> gate -> publish -> live check -> breaker.

    adapter = Adapter(config, journal=path, models=root, state=folder, cpus={1})
    report = adapter.cycle()          # one pass; `dagpilot online run` repeats it

One cycle: (1) a published model awaiting its live check gets its verdict (worse: a failure,
rolled back to its predecessor when `rollback_on_failure`; no worse: a success); (2) during the
breaker's cooldown, nothing more; (3) the drift trigger reads the feedback since the last
fine-tune; (4) on a drift, the fine-tune runs in its own pinned process (online.worker); (5)
the gate replays held-back scenarios; (6) a pass is published through the registry (atomic;
the scheduler follows `current` by itself), a refusal counts against the breaker. Weights
change only by a publish or a rollback of the registry, never in a running process.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Set
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from torch import Tensor

from dagpilot import journal
from dagpilot.agent import Agent
from dagpilot.core.config import SimSettings
from dagpilot.core.errors import DagpilotError
from dagpilot.online.alert import alert, write_metrics
from dagpilot.online.breaker import Breaker, Opened
from dagpilot.online.config import OnlineConfig
from dagpilot.online.drift import Drift, detect, slowdowns
from dagpilot.online.finetune import FineTuneResult
from dagpilot.online.gate import GateResult, live_verdict, validate
from dagpilot.online.recalibration import Recalibration, recalibrate, samples
from dagpilot.online.reference import reference_slowdowns
from dagpilot.online.scenarios import held_back_tasks
from dagpilot.online.worker import FineTuneFailed, FineTuneJob, run_isolated
from dagpilot.online.world import serving_model, world
from dagpilot.policy import PolicyNet
from dagpilot.registry import publish, read_current, rollback
from dagpilot.train.export import export_model

log = logging.getLogger(__name__)

BREAKER_FILE = "breaker.json"
REFERENCE_SEED = 77_003  # the undrifted replay that feedback slowdowns are read against
FineTuner = Callable[[FineTuneJob, Set[int]], FineTuneResult]


@dataclass(frozen=True)
class CycleReport:
    """What one cycle did, for the CLI's line and the tests."""

    action: str  # disabled, cooling, live-passed, live-failed, no-drift, failed, published
    detail: str = ""
    drift: Drift | None = None
    gate: GateResult | None = None
    version: str | None = None
    opened: Opened | None = None


class Adapter:
    def __init__(self, config: OnlineConfig, *, journal_path: Path, models: Path, state: Path,
                 cpus: Set[int], kubeconfig: Path | None = None, namespace: str = "default",
                 sim: SimSettings | None = None, fine_tuner: FineTuner = run_isolated,
                 clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self.journal_path = journal_path
        self.models = models
        self.state = state
        self.cpus = cpus
        self.kubeconfig = kubeconfig
        self.namespace = namespace
        self.sim = sim
        self.fine_tuner = fine_tuner
        self.clock = clock
        self.breaker = Breaker(state / BREAKER_FILE, models,
                               max_retries=config.max_retries,
                               rollback_on_failure=config.rollback_on_failure,
                               cooldown_minutes=config.cooldown_minutes)
        self.counts: Counter[str] = Counter()
        self.recalibration: Recalibration | None = None  # the last estimate, for reports
        self.fine_tuned: FineTuneResult | None = None  # the last fine-tune's, for reports

    def cycle(self) -> CycleReport:
        report = self._cycle()
        self.counts[report.action] += 1
        write_metrics(self.state, self.breaker.state, self.counts, self.clock())
        log.info("online: %s %s", report.action, report.detail)
        return report

    def _cycle(self) -> CycleReport:
        if not self.config.enable:
            return CycleReport("disabled", "online_learning.enable is false")
        records = journal.read(self.journal_path).records
        if self.breaker.state.pending is not None:
            settled = self._live_check(records)
            if settled is not None:
                return settled
        now = self.clock()
        if self.breaker.cooling(now):
            return CycleReport("cooling", f"{self.breaker.state.cooldown_until - now:.0f} s left")
        since = self._acted_until_t()
        drift = detect(slowdowns(records, since), self.config.trigger)
        if drift is None:
            return CycleReport("no-drift")
        self.breaker.acted_on(drift.last_t)  # saved first: a restart never fires on it again
        try:
            recalibration = self._recalibration(records, since)
        except DagpilotError as error:  # e.g. a reference episode with no arrival
            return self._failure(f"recalibration could not run: {error}",
                                 read_current(self.models), drift, None)
        return self._adapt(drift, recalibration)

    def _recalibration(self, records: list[dict[str, Any]], since: float
                       ) -> Recalibration | None:
        """The feedback's estimate of the world since the last drift acted on; None when it
        finds nothing (the drift's own class and median then recalibrate alone)."""
        settings, serving = self.config.adapter, read_current(self.models)
        scene = world(settings.workload, settings.cluster, None, self.sim)
        if serving is None or not samples(records, scene.jobs, scene.cluster,
                                          scene.sim.effects, since):
            return None  # no feedback names a node of the cluster: nothing to estimate
        reference = reference_slowdowns(Agent(*serving_model(self.models, serving),
                                              explain=False), scene.jobs, scene.cluster,
                                        scene.sim, seed=REFERENCE_SEED,
                                        horizon_h=settings.horizon_h, load=settings.load)
        found = recalibrate(records, scene.jobs, scene.cluster, scene.sim.effects,
                            since_t=since, ratio=self.config.trigger.ratio,
                            reference=reference)
        self.recalibration = found
        return found if found.class_factors or found.slow_zones else None

    def _acted_until_t(self) -> float:
        acted = self.breaker.state.acted_until_t
        return float("-inf") if acted is None else acted

    def _live_check(self, records: list[dict[str, Any]]) -> CycleReport | None:
        state = self.breaker.state
        new, old = state.pending, state.predecessor
        assert new is not None
        if old is None:  # nothing to compare with: the first model of the registry
            self.breaker.settled()
            return None
        verdict = live_verdict(records, new, old, self.config.adapter.live_window)
        if verdict is None:
            return None
        self.breaker.settled()
        if verdict:
            self.breaker.succeeded()
            return CycleReport("live-passed", f"{new} no worse than {old}", version=new)
        if self.config.rollback_on_failure and read_current(self.models) == new:
            rollback(self.models, old)
        return self._failure(f"{new} worse than {old} in live rates", old, None, None)

    def _adapt(self, drift: Drift, recalibration: Recalibration | None) -> CycleReport:
        serving = read_current(self.models)
        if serving is None:
            return CycleReport("failed", "no model is current: nothing to adapt")
        job = FineTuneJob(self.models, serving, drift, self.config.adapter,
                          seed=int(drift.last_t) % (2**31), sim=self.sim,
                          recalibration=recalibration)
        try:
            result = self.fine_tuner(job, self.cpus)
        except FineTuneFailed as error:
            return self._failure(str(error), serving, drift, None)
        self.fine_tuned = result
        broken = [name for name, tensor in result.state.items() if not tensor.isfinite().all()]
        if broken:  # NaN or infinite deltas: nothing to validate
            return self._failure(f"non-finite weights in {', '.join(broken[:3])}", serving,
                                 drift, None)
        try:
            gate = self._gate(job, result.state)
        except DagpilotError as error:  # e.g. a held-back episode with no arrival in its horizon
            return self._failure(f"gate could not run: {error}", serving, drift, None)
        if not gate.passed:
            return self._failure(f"gate: JCT ratio upper bound {gate.interval.high:.4f} > 1.00",
                                 serving, drift, gate)
        version = self._publish(serving, result, drift, gate, recalibration)
        self.breaker.published(version, serving)
        return CycleReport("published", f"{version} (from {serving}; ratio "
                           f"{gate.interval.mean:.4f}, upper {gate.interval.high:.4f})",
                           drift, gate, version)

    def _gate(self, job: FineTuneJob, state: Mapping[str, Tensor]) -> GateResult:
        model, normaliser = serving_model(self.models, job.version)
        candidate = PolicyNet.from_state(model.config, state)
        settings = job.settings
        scene = world(settings.workload, settings.cluster, job.drift, self.sim,
                      job.recalibration)
        tasks = held_back_tasks(scene.jobs, scene.cluster, seed=job.seed,
                                seeds=settings.validation_seeds,
                                horizon_h=settings.gate_horizon_h,
                                replays=settings.gate_replays, load=settings.load)
        return validate(Agent(candidate, normaliser, explain=False),
                        Agent(model, normaliser, explain=False), tasks, scene.cluster,
                        scene.sim)

    def _publish(self, serving: str, result: FineTuneResult, drift: Drift,
                 gate: GateResult, recalibration: Recalibration | None) -> str:
        model, normaliser = serving_model(self.models, serving)
        model.load_state_dict(result.state, strict=True)
        version = _next_version(self.models, serving)
        metadata = {"online": {"from": serving, "task_class": drift.task_class,
                               "slowdown": drift.ratio, "iterations": result.iterations,
                               "fine_tune_s": round(result.wall_s, 3),
                               "gate": {"mean": gate.interval.mean, "ci95": [
                                   gate.interval.low, gate.interval.high]},
                               "recalibration": asdict(recalibration)
                               if recalibration is not None else None}}
        with tempfile.TemporaryDirectory(prefix="dagpilot-online-") as scratch:
            folder = export_model(Path(scratch) / "model", model, normaliser, metadata)
            publish(self.models, version, folder)
        return version

    def _failure(self, detail: str, serving: str | None, drift: Drift | None,
                 gate: GateResult | None) -> CycleReport:
        opened = self.breaker.failed(self.clock(), serving)
        if opened is not None:
            alert(opened, self.kubeconfig, self.namespace)
        return CycleReport("failed", detail, drift, gate, opened=opened)


def _next_version(models: Path, serving: str) -> str:
    """`<serving>.online-N`, N the first free number (versions are never overwritten)."""
    base = serving.split(".online-", maxsplit=1)[0]
    number = 1
    while (models / f"{base}.online-{number}").exists():
        number += 1
    return f"{base}.online-{number}"
