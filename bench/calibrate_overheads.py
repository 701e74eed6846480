"""Fit the overhead settings of the fidelity check to the recorded CWS Nextflow runs.

    .venv/bin/python bench/calibrate_overheads.py [--cws DIR] [--workers 2] [--free]

Only overheads are fitted, on the `original` runs (kube-scheduler with Nextflow's own executor)
of the calibration pipelines (CALIBRATION_WORKFLOWS) alone; the held-out pipelines are replayed
only to report how the fitted values carry over. src/dagpilot/bench/calibration.py says which
values are configured rather than fitted.

1. Measured in the traces:
   - start-up: the median gap between consecutive container starts on one node while at
     least BACKLOG pods of the run wait to start (the node's one start-up slot is then never
     idle, so a gap is one start-up);
   - polling: the delay from the last parent's completion to a task's submission, for
     dependencies released within LATE_S (longer ones are missing dependencies, see
     cws_replay). The engine model makes it uniform on [latency, latency + poll interval], so
     its 10th and 90th percentiles give both: poll = (p90 - p10) / 0.8, latency = p10 - 0.1
     poll.
2. Searched: the log-space spread of the start-up delay, on a grid, by the mean |relative
   error| of the replayed makespans over the calibration runs and simulator seeds 0, 1, 2
   (three seeds keep the simulator's own noise from choosing), ties broken by the median.
3. Checks: the chosen point and, in turn, each measured mechanism switched off, on every
   `original` run, calibration and held-out apart.

With --free the polling period and latency are searched too (a grid on the same objective) and
the best free points are replayed on the held-out pipelines as well: the calibration error keeps
falling as the latency grows past what the traces show while the held-out error rises, which is
why the measured values are kept (docs/BENCHMARKS.md, "Fidelity").

Writes bench/out/calibration.json (or calibration_free.json) and prints the results. The chosen
values go into CWS_OVERHEADS by hand, with docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import bisect
import dataclasses
import itertools
import json
import multiprocessing
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from dagpilot.bench.calibration import CALIBRATION_WORKFLOWS, CWS_OVERHEADS, Overheads
from dagpilot.bench.cws_replay import LATE_S, replay
from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster, Job
from dagpilot.workloads import cws, load

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
DEFAULT_CWS = ROOT.parent / "shared" / "traces" / "cws-k8s-nextflow"
STRATEGY = "original"
SEEDS = (0, 1, 2)
BACKLOG = 20  # pods waiting to start: enough that every node's start-up slot is busy
SIGMAS = (0.2, 0.3, 0.4, 0.6, 0.8)
FREE_GRID = {
    "poll_interval_s": (5.0, 7.5, 10.0),
    "submit_latency_s": (0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 8.5, 10.0),
    "startup_sigma": (0.4, 0.6),
}
FREE_CHECKED = 6  # best free points replayed on the held-out pipelines too

# The jobs and cluster of the replays, set before the worker processes fork so they inherit
# them instead of receiving ~100 kB of pickled job per replay.
JOBS: list[Job] = []
CLUSTER: list[Cluster] = []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cws", type=Path, default=DEFAULT_CWS, help="the CWS trace folder")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--free", action="store_true",
                        help="also search the polling period and latency (shows the overfit)")
    args = parser.parse_args()

    started = time.perf_counter()
    CLUSTER.append(load_cluster(f"cws:{args.cws}"))
    JOBS.extend(original_runs(args.cws))
    calibration = [i for i, job in enumerate(JOBS)
                   if job.label("workflow") in CALIBRATION_WORKFLOWS]
    held_out = [i for i in range(len(JOBS)) if i not in calibration]
    print(f"{len(JOBS)} original runs loaded in {time.perf_counter() - started:.0f} s; "
          f"calibration: {', '.join(CALIBRATION_WORKFLOWS)} ({len(calibration)} runs)")

    measurements = measure([JOBS[i] for i in calibration])
    measured = CWS_OVERHEADS.with_changes(
        startup_median_s=measurements["start_gap_s"]["median"],
        poll_interval_s=measurements["release_delay_s"]["poll_interval_s"],
        submit_latency_s=measurements["release_delay_s"]["submit_latency_s"])
    print_measurements(measurements)

    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        if args.free:
            points = [measured.with_changes(**dict(zip(FREE_GRID, values, strict=True)))
                      for values in itertools.product(*FREE_GRID.values())]
        else:
            points = [measured.with_changes(startup_sigma=sigma) for sigma in SIGMAS]
        ranked = search(pool, points, calibration)
        best = ranked[0][0]
        checks: dict[str, tuple[Overheads, float | None]]
        if args.free:
            checks = {f"free #{rank + 1}": (point, LATE_S)
                      for rank, (point, _) in enumerate(ranked[:FREE_CHECKED])}
        else:
            checks = {name: (overheads, late_s) for name, overheads, late_s in ablations(best)}
        check_scores = pool.map(score, [(overheads, calibration + held_out, late_s)
                                        for overheads, late_s in checks.values()])
    report = {
        "calibration_workflows": list(CALIBRATION_WORKFLOWS),
        "objective": "mean |rel error| of the makespans of the original runs of the "
                     f"calibration workflows, seeds {list(SEEDS)}; ties: the median",
        "measurements": measurements,
        "searched": (FREE_GRID if args.free else {"startup_sigma": SIGMAS}),
        "best": best.as_dict(),
        "points": [{**point.as_dict(), **result} for point, result in ranked],
        "checks": {name: {**by_set(result, calibration, held_out), "late_s": late_s,
                          **overheads.as_dict()}
                   for (name, (overheads, late_s)), result in zip(
                       checks.items(), check_scores, strict=True)},
        "wall_s": round(time.perf_counter() - started, 1),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / ("calibration_free.json" if args.free else "calibration.json")
    path.write_text(json.dumps(report, indent=2) + "\n")
    print_report(ranked, report, path)


def original_runs(cws_dir: Path) -> list[Job]:
    jobs: list[Job] = []
    for trace, _ in cws.pipelines(cws_dir):
        jobs.extend(job for job in load(f"cws:{trace}") if job.label("strategy") == STRATEGY)
    return jobs


# --- 1. measurements ------------------------------------------------------------------------

def measure(jobs: list[Job]) -> dict[str, Any]:
    gaps = start_gaps(jobs)
    delays = release_delays(jobs)
    p10, p50, p90 = (float(np.percentile(delays, q)) for q in (10, 50, 90))
    poll = (p90 - p10) / 0.8
    return {
        "start_gap_s": {"median": statistics.median(gaps), "mean": statistics.fmean(gaps),
                        "count": len(gaps), "backlog": BACKLOG},
        "release_delay_s": {"p10": p10, "p50": p50, "p90": p90, "count": len(delays),
                            "poll_interval_s": round(poll * 2) / 2,  # to 0.5 s
                            "submit_latency_s": round((p10 - 0.1 * poll) * 2) / 2},
    }


def start_gaps(jobs: list[Job]) -> list[float]:
    """Seconds between consecutive container starts on one node, where the later pod was
    already waiting when the earlier one started and at least BACKLOG pods of the run were
    waiting to start then."""
    gaps: list[float] = []
    for job in jobs:
        times = [(t.recorded.node, t.recorded.submit_s, t.recorded.start_s)
                 for t in job.tasks if t.recorded is not None]
        submits = sorted(submit for _, submit, _ in times if submit is not None)
        starts = sorted(start for _, _, start in times if start is not None)
        by_node: dict[str, list[tuple[float, float]]] = {}
        for node, submit, start in times:
            if node is not None and submit is not None and start is not None:
                by_node.setdefault(node, []).append((start, submit))
        for pods in by_node.values():
            pods.sort()
            for (start, _), (next_start, next_submit) in itertools.pairwise(pods):
                waiting = (bisect.bisect_right(submits, start)
                           - bisect.bisect_right(starts, start))
                if next_submit < start and waiting >= BACKLOG:
                    gaps.append(next_start - start)
    return gaps


def release_delays(jobs: list[Job]) -> list[float]:
    """Seconds from the last parent's completion to a task's submission, up to LATE_S."""
    delays: list[float] = []
    for job in jobs:
        complete = {t.id: t.recorded.complete_s for t in job.tasks if t.recorded is not None}
        for task in job.tasks:
            if not task.parents or task.recorded is None or task.recorded.submit_s is None:
                continue
            ends = [complete.get(up) for up in task.parents]
            if all(end is not None for end in ends):
                delay = task.recorded.submit_s - max(end for end in ends if end is not None)
                if delay <= LATE_S:
                    delays.append(delay)
    return delays


# --- 2. search, 3. checks -------------------------------------------------------------------

def search(pool: Any, points: list[Overheads], indices: list[int]
           ) -> list[tuple[Overheads, dict[str, Any]]]:
    scores = pool.map(score, [(point, indices, LATE_S) for point in points])
    return sorted(zip(points, scores, strict=True),
                  key=lambda pair: (pair[1]["mean_abs"], pair[1]["median_abs"]))


def ablations(best: Overheads) -> list[tuple[str, Overheads, float | None]]:
    """The chosen point, then each measured mechanism switched off in turn."""
    return [
        ("chosen", best, LATE_S),
        ("start-ups in parallel (slots 0)", best.with_changes(startup_slots_per_node=0), LATE_S),
        ("requests freed at the end", best.with_changes(release_at_poll=False), LATE_S),
        ("no queueSize", best.with_changes(engine_queue_size=0), LATE_S),
        ("no DAG repair", best, None),
        ("SimSettings defaults", defaults(), LATE_S),
    ]


def defaults() -> Overheads:
    """The overheads SimSettings has by default."""
    plain = SimSettings()
    return Overheads(**{field.name: getattr(plain, field.name)
                        for field in dataclasses.fields(Overheads)})


def score(task: tuple[Overheads, list[int], float | None]) -> dict[str, Any]:
    """Relative errors of the replays of some of the loaded runs at one point."""
    overheads, indices, late_s = task
    settings = overheads.apply(SimSettings().without_physics())
    errors: dict[str, float] = {}
    for index in indices:
        job = JOBS[index]
        for seed in SEEDS:
            result = replay(job, CLUSTER[0], settings, seed, late_s)
            recorded = job.recorded_makespan_s
            if result.simulated_s is not None and recorded:
                errors[f"{job.id}#{seed}"] = (result.simulated_s - recorded) / recorded
    values = list(errors.values())
    return {"mean_abs": round(statistics.fmean(abs(e) for e in values), 5),
            "median_abs": round(statistics.median(abs(e) for e in values), 5),
            "mean": round(statistics.fmean(values), 5),
            "errors": {key: round(value, 4) for key, value in errors.items()}}


def by_set(result: dict[str, Any], calibration: list[int], held_out: list[int]
           ) -> dict[str, Any]:
    def median_of(indices: list[int]) -> float | None:
        values = [abs(result["errors"][key]) for i in indices for seed in SEEDS
                  if (key := f"{JOBS[i].id}#{seed}") in result["errors"]]
        return round(statistics.median(values), 5) if values else None
    return {"calibration_median_abs": median_of(calibration),
            "held_out_median_abs": median_of(held_out),
            "all_median_abs": result["median_abs"], "all_mean": result["mean"],
            "errors": result["errors"]}


def print_measurements(measurements: dict[str, Any]) -> None:
    gaps, delays = measurements["start_gap_s"], measurements["release_delay_s"]
    print(f"start-up gaps on busy nodes: median {gaps['median']:.1f} s, mean "
          f"{gaps['mean']:.2f} s ({gaps['count']} gaps)")
    print(f"release delays: p10 {delays['p10']:.1f} s, p50 {delays['p50']:.1f} s, p90 "
          f"{delays['p90']:.1f} s ({delays['count']} dependencies) -> poll "
          f"{delays['poll_interval_s']} s, latency {delays['submit_latency_s']} s")


def print_report(ranked: list[tuple[Overheads, dict[str, Any]]], report: dict[str, Any],
                 path: Path) -> None:
    print("best points (mean |error| of the calibration runs, median |error|, mean error):")
    for point, result in ranked[:8]:
        print(f"  poll {point.poll_interval_s:5.1f}  latency {point.submit_latency_s:4.1f}  "
              f"sigma {point.startup_sigma:4.2f}   "
              f"{result['mean_abs']:.4f}  {result['median_abs']:.4f}  {result['mean']:+.4f}")
    print("checks (median |error| of original runs: calibration / held-out / all; mean error):")
    for name, check in report["checks"].items():
        print(f"  {name:34s} {check['calibration_median_abs']:.4f} / "
              f"{check['held_out_median_abs']:.4f} / {check['all_median_abs']:.4f}; "
              f"{check['all_mean']:+.4f}")
    print(f"wrote {path} in {report['wall_s']:.0f} s")


if __name__ == "__main__":
    main()
