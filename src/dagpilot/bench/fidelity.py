"""`dagpilot fidelity`: replay every recorded CWS Nextflow run and compare makespans.

For each recorded run (one per pipeline, strategy and repetition) the simulator replays it
(`cws_replay`: recorded runtimes and requests, the rebuilt task DAG, physics off, the strategy's
scheduler, the fitted overheads of `calibration.CWS_OVERHEADS`) and `DIR/fidelity.json` gets
the recorded and simulated makespans and the relative error (simulated - recorded) / recorded,
then per pipeline the Spearman correlation between the strategies ordered by mean recorded and
by mean simulated makespan, and the medians of |error| overall, per strategy, per pipeline,
and for the calibration pipelines apart from the held-out ones.

Pipelines load one after another in this process while worker processes replay the runs of
the ones already loaded. Ctrl-C writes what finished (`"interrupted": true`) and raises
`FidelityInterrupted`.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from multiprocessing.pool import AsyncResult, Pool
from pathlib import Path
from typing import Any

from dagpilot.bench.calibration import CALIBRATION_WORKFLOWS, CWS_OVERHEADS, Overheads
from dagpilot.bench.cws_replay import LATE_S, Replayed, replay
from dagpilot.bench.spearman import spearman
from dagpilot.bench.summary import write_json_atomic
from dagpilot.clusters import load_cluster
from dagpilot.core.config import LoaderSettings, SimSettings
from dagpilot.core.errors import SpecError
from dagpilot.core.types import Cluster, Job
from dagpilot.workloads import cws, load
from dagpilot.workloads.cws_runs import read_runs

log = logging.getLogger(__name__)

FIDELITY_FILE = "fidelity.json"
RUNS_FILE = "runs.csv"
ORIGINAL = "original"

Progress = Callable[[float, str], None]
"""Called with the share of the runs replayed (0..1) and what happens now."""


@dataclass(frozen=True)
class FidelityConfig:
    """What `dagpilot fidelity` replays. Empty filters select everything."""

    cws_dir: Path
    out_dir: Path
    cluster: str | None = None  # a cluster spec; default `cws:CWS_DIR`
    workflows: tuple[str, ...] = ()
    strategies: tuple[str, ...] = ()
    reps: tuple[int, ...] = ()
    overheads: Overheads = CWS_OVERHEADS
    seed: int = 0
    late_s: float | None = LATE_S  # DAG repair threshold; None: no repair
    workers: int = 1
    calibration_workflows: tuple[str, ...] = CALIBRATION_WORKFLOWS

    def selects(self, job: Job) -> bool:
        return ((not self.strategies or job.label("strategy") in self.strategies)
                and (not self.reps or int(job.label("rep", "0")) in self.reps))


@dataclass(frozen=True, slots=True)
class FidelityRun:
    """One recorded run against its replay."""

    workflow: str
    strategy: str
    rep: int
    recorded_s: float | None  # None when neither runs.csv nor the trace gives it
    simulated_s: float | None  # None when the replay did not finish
    inferred_edges: int

    @property
    def rel_error(self) -> float | None:
        if self.simulated_s is None or self.recorded_s is None or self.recorded_s <= 0.0:
            return None
        return (self.simulated_s - self.recorded_s) / self.recorded_s


@dataclass(frozen=True)
class FidelityReport:
    document: dict[str, Any]
    path: Path


class FidelityInterrupted(KeyboardInterrupt):
    """Ctrl-C during the replays; carries the report of the runs that finished."""

    def __init__(self, report: FidelityReport) -> None:
        super().__init__(f"{len(report.document['runs'])} runs replayed before the interrupt; "
                         f"written to {report.path}")
        self.report = report


def run_fidelity(config: FidelityConfig, settings: SimSettings,
                 loader: LoaderSettings | None = None,
                 progress: Progress | None = None) -> FidelityReport:
    """Replay the selected runs and write `fidelity.json`; returns its document and path."""
    traces = _pipelines(config)
    cluster = load_cluster(config.cluster or f"cws:{config.cws_dir}", loader)
    recorded = _recorded_makespans(config.cws_dir)
    sim_settings = config.overheads.apply(settings.without_physics())
    expected = _expected_runs(config, recorded, {cws.pipeline_name(t) for t, _ in traces})
    tracker = _Tracker(expected, progress or (lambda _, __: None))
    results: list[FidelityRun] = []
    try:
        for replayed, job_recorded in _replays(config, traces, cluster, sim_settings,
                                               loader=loader, tracker=tracker):
            results.append(_compare(replayed, recorded.get(replayed.job_id, job_recorded)))
            tracker.done(replayed.workflow)
    except KeyboardInterrupt:
        raise FidelityInterrupted(_write(config, results, interrupted=True)) from None
    return _write(config, results, interrupted=False)


def _pipelines(config: FidelityConfig) -> list[tuple[Path, Path]]:
    traces = cws.pipelines(config.cws_dir)
    if not config.workflows:
        return traces
    known = {cws.pipeline_name(trace): (trace, dag) for trace, dag in traces}
    unknown = [name for name in config.workflows if name not in known]
    if unknown:
        raise SpecError(",".join(unknown), f"no such pipeline in {config.cws_dir}; known: "
                                           f"{', '.join(sorted(known))}")
    return [known[name] for name in config.workflows]


def _recorded_makespans(cws_dir: Path) -> dict[str, float]:
    """Job id -> makespan from runs.csv, or nothing when the folder has none (the makespan
    then comes from the trace itself, which computes it the same way)."""
    path = cws_dir / RUNS_FILE
    if not path.is_file():
        log.warning("%s not found: recorded makespans come from the traces", path)
        return {}
    return {run.job_id: run.makespan_s for run in read_runs(path)}


def _expected_runs(config: FidelityConfig, recorded: dict[str, float],
                   workflows: set[str]) -> int:
    """How many runs the selection holds by runs.csv (0 when unknown)."""
    count = 0
    for job_id in recorded:
        workflow, strategy, rep = job_id.split("/")
        if (workflow in workflows and (not config.strategies or strategy in config.strategies)
                and (not config.reps or int(rep) in config.reps)):
            count += 1
    return count


class _Tracker:
    """Progress over runs; the total grows if runs.csv undercounted."""

    def __init__(self, expected: int, report: Progress) -> None:
        self.total = expected
        self.finished = 0
        self._report = report

    def loading(self, workflow: str, runs: int | None = None) -> None:
        if runs is not None and runs > 0 and self.finished + runs > self.total:
            self.total = self.finished + runs
        self._report(self._share(), f"loading {workflow}")

    def done(self, workflow: str) -> None:
        self.finished += 1
        self.total = max(self.total, self.finished)
        self._report(self._share(), f"replaying {workflow}")

    def _share(self) -> float:
        return self.finished / self.total if self.total else 0.0


def _replays(config: FidelityConfig, traces: Sequence[tuple[Path, Path]], cluster: Cluster,
             settings: SimSettings, *, loader: LoaderSettings | None, tracker: _Tracker
             ) -> Iterable[tuple[Replayed, float | None]]:
    """Every selected run replayed, with its trace's recorded makespan; in order with one
    worker, as they finish with several."""
    def jobs_of(trace: Path) -> list[Job]:
        name = cws.pipeline_name(trace)
        tracker.loading(name)
        selected = [job for job in load(f"cws:{trace}", loader) if config.selects(job)]
        tracker.loading(name, len(selected))
        return selected

    if config.workers <= 1:
        for trace, _ in traces:
            for job in jobs_of(trace):
                yield replay(job, cluster, settings, config.seed, config.late_s), _made(job)
        return
    pool = multiprocessing.Pool(config.workers, initializer=_ignore_interrupts)
    try:
        pending: list[tuple[AsyncResult[Replayed], float | None]] = []
        for trace, _ in traces:
            for job in jobs_of(trace):
                pending.append((pool.apply_async(
                    replay, (job, cluster, settings, config.seed, config.late_s)), _made(job)))
            yield from _collect(pending, block=False)
        yield from _collect(pending, block=True)
        pool.close()
    finally:
        _stop(pool)


def _collect(pending: list[tuple[AsyncResult[Replayed], float | None]], block: bool
             ) -> Iterable[tuple[Replayed, float | None]]:
    """Yield finished replays (all of them, waiting, when `block`), removing them from
    `pending`."""
    while pending:
        ready = [item for item in pending if item[0].ready()]
        if not ready:
            if not block:
                return
            pending[0][0].wait(0.2)
            continue
        for item in ready:
            pending.remove(item)
            yield item[0].get(), item[1]


def _stop(pool: Pool) -> None:
    pool.terminate()
    pool.join()


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process decides what Ctrl-C does


def _made(job: Job) -> float | None:
    return job.recorded_makespan_s


def _compare(replayed: Replayed, recorded_s: float | None) -> FidelityRun:
    return FidelityRun(replayed.workflow, replayed.strategy, replayed.rep, recorded_s,
                       replayed.simulated_s, replayed.inferred_edges)


# --- the document --------------------------------------------------------------------------

def _write(config: FidelityConfig, results: list[FidelityRun], interrupted: bool
           ) -> FidelityReport:
    document = fidelity_document(results, config.calibration_workflows)
    document["settings"] = {
        "cws": str(config.cws_dir), "cluster": config.cluster or f"cws:{config.cws_dir}",
        "physics": "off", "seed": config.seed, "dag_repair_late_s": config.late_s,
        "overheads": config.overheads.as_dict()}
    if interrupted:
        document["interrupted"] = True
    path = config.out_dir / FIDELITY_FILE
    write_json_atomic(path, document)
    return FidelityReport(document, path)


def fidelity_document(results: Sequence[FidelityRun],
                      calibration_workflows: Sequence[str] = CALIBRATION_WORKFLOWS
                      ) -> dict[str, Any]:
    """`fidelity.json` (DESIGN.md section 7, plus extra keys) of some replayed runs."""
    ordered = sorted(results, key=lambda r: (r.workflow, r.strategy, r.rep))
    workflows = sorted({r.workflow for r in ordered})
    calibrated = [w for w in workflows if w in calibration_workflows]
    held_out = [w for w in workflows if w not in calibration_workflows]
    return {
        "version": 1,
        "runs": [{"workflow": r.workflow, "strategy": r.strategy, "rep": r.rep,
                  "recorded_s": _rounded(r.recorded_s), "simulated_s": _rounded(r.simulated_s),
                  "rel_error": _rounded(r.rel_error, 5), "inferred_edges": r.inferred_edges}
                 for r in ordered],
        "summary": {
            "median_abs_rel_error": {
                **_medians(ordered),
                "by_strategy": {s: _median_abs(r for r in ordered if r.strategy == s)
                                for s in sorted({r.strategy for r in ordered})},
                "by_workflow": {w: _medians([r for r in ordered if r.workflow == w])
                                for w in workflows}},
            "mean_rel_error": {
                "original": _mean(r for r in ordered if r.strategy == ORIGINAL),
                "all": _mean(ordered)},
            "spearman": {w: _rounded(_workflow_spearman([r for r in ordered if r.workflow == w]),
                                     4) for w in workflows},
            "calibration": _subset(ordered, calibrated),
            "held_out": _subset(ordered, held_out),
            "runs": len(ordered),
            "unfinished": sum(1 for r in ordered if r.rel_error is None),
            "tasks_repaired": sum(r.inferred_edges for r in ordered)},
        "strategies": {w: _strategy_table([r for r in ordered if r.workflow == w])
                       for w in workflows},
    }


def _medians(runs: Sequence[FidelityRun]) -> dict[str, float | None]:
    return {"original": _median_abs(r for r in runs if r.strategy == ORIGINAL),
            "all": _median_abs(runs)}


def _subset(runs: Sequence[FidelityRun], workflows: list[str]) -> dict[str, Any]:
    chosen = [r for r in runs if r.workflow in workflows]
    return {"workflows": workflows, "median_abs_rel_error": _medians(chosen)}


def _errors(runs: Iterable[FidelityRun]) -> list[float]:
    return [error for error in (r.rel_error for r in runs) if error is not None]


def _median_abs(runs: Iterable[FidelityRun]) -> float | None:
    errors = _errors(runs)
    return _rounded(statistics.median(abs(e) for e in errors), 5) if errors else None


def _mean(runs: Iterable[FidelityRun]) -> float | None:
    errors = _errors(runs)
    return _rounded(statistics.fmean(errors), 5) if errors else None


def _strategy_means(runs: Sequence[FidelityRun]) -> dict[str, tuple[float, float]]:
    """Per strategy: (mean recorded, mean simulated) makespan over its compared runs."""
    grouped: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for run in runs:
        if run.recorded_s is not None and run.simulated_s is not None:
            grouped[run.strategy].append((run.recorded_s, run.simulated_s))
    return {strategy: (statistics.fmean(r for r, _ in pairs),
                       statistics.fmean(s for _, s in pairs))
            for strategy, pairs in sorted(grouped.items())}


def _strategy_table(runs: Sequence[FidelityRun]) -> dict[str, dict[str, float | None]]:
    return {strategy: {"recorded_mean_s": _rounded(recorded),
                       "simulated_mean_s": _rounded(simulated)}
            for strategy, (recorded, simulated) in _strategy_means(runs).items()}


def _workflow_spearman(runs: Sequence[FidelityRun]) -> float | None:
    """Strategies ranked by mean recorded vs by mean simulated makespan."""
    means = list(_strategy_means(runs).values())
    return spearman([recorded for recorded, _ in means], [simulated for _, simulated in means])


def _rounded(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)
