"""Simulator speed on one core: events per second, scaling with cluster size, peak memory.

    taskset -c 0 .venv/bin/python bench/sim_speed.py [--quick] [--skip-memory] [--repeat N]

kube-default runs in the native core (dagpilot.native: what `dagpilot bench` and `dagpilot run`
use for it); each measurement also runs the Python simulator on the same inputs, as the baseline
of the same run, and checks that both give the same record. Three measurements, printed as
tables and written to bench/out/sim_speed.json:

1. Throughput with `kube-default` on `builtin:scale-100`: the built-in archetype mix arriving as
   a Poisson process at 0.8 of the cluster's cores (the arrival module's rate; the GPUs are
   oversubscribed at that rate, so GPU pods queue and the scheduler works through a backlog).
   The baseline right after each run is the bare event kernel processing the same number of
   no-op events (each handler schedules the next of its chain, 1,000 chains in flight), so the
   figure is also a ratio: the share of the bare event-loop speed the simulator keeps, which
   a busy machine distorts less than the raw figure. The run is repeated (`--repeat`, 3) and
   the median reported with the range; then once more with `--physics off`.
2. Scaling from 10 to 5,000 nodes: the same workload at the same load. The arrival horizon is
   scaled as 1/nodes so every size processes a similar number of events (jobs per second grow
   with the cluster), but never below 30 minutes; the run stops at the horizon (a throughput
   measurement, not a benchmark).
3. Peak memory (ru_maxrss of a fresh child process) for a trace of 100,000 tasks of the mix,
   loaded and simulated to the end with every job arriving once.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.core.types import Cluster, Job
from dagpilot.native.run import simulate_native
from dagpilot.schedulers import SCHEDULERS, kube_default
from dagpilot.sim.kernel import Kernel
from dagpilot.sim.record import RunRecord
from dagpilot.sim.run import simulate
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals

OUT = Path(__file__).resolve().parent / "out"
POOL = "builtin:mix:200"  # the job pool Poisson arrivals cycle through
LOAD = 0.8
SCHEDULER = kube_default.NAME
REFERENCE_NODES = 100
REFERENCE_HORIZON_S = 6 * 3600.0
SCALING_NODES = (10, 100, 1000, 5000)
MIN_HORIZON_S = 1800.0  # the largest clusters still see jobs finish
MEMORY_TASKS = 100_000
MEMORY_NODES = 100  # decisions cost grows with nodes; the trace size is what memory is about
ENGINES = ("native", "python")


def run_engine(engine: str, jobs: list[Job], cluster: Cluster, settings: SimSettings,
               seed: int) -> RunRecord:
    if engine == "native":
        return simulate_native(jobs, cluster, settings, seed)
    return simulate(jobs, cluster, SCHEDULERS[SCHEDULER](), settings, seed)


def throughput(nodes: int, horizon_s: float, pool: list[Job], *, seed: int = 0,
               physics: bool = True, engine: str = "native") -> dict[str, Any]:
    """One run of kube-default on `builtin:scale-N`; events, wall seconds, events per second."""
    cluster = load_cluster(f"builtin:scale-{nodes}")
    jobs = arrivals(pool, cluster, horizon_s, seed)
    settings = dataclasses.replace(SimSettings(), horizon_s=horizon_s)
    if not physics:
        settings = settings.without_physics()
    cpu_before = time.process_time()
    record = run_engine(engine, jobs, cluster, settings, seed)
    cpu_s = time.process_time() - cpu_before  # below the wall time when the core is shared
    return {"engine": engine, "nodes": nodes, "horizon_s": horizon_s, "physics": physics,
            "jobs": len(jobs), "fingerprint": fingerprint(record),
            "pods": len(record.pods), "events": record.events, "wall_s": record.wall_seconds,
            "cpu_s": cpu_s, "events_per_s": record.events / record.wall_seconds,
            # the simulator alone: the wall time minus the time spent inside Scheduler.decide
            "sim_events_per_s": record.events / max(record.wall_seconds - record.decision_seconds,
                                                    1e-9),
            "pods_per_s": len(record.pods) / record.wall_seconds,
            "decisions": record.decisions, "decision_s": record.decision_seconds}


def fingerprint(record: RunRecord) -> int:
    """A hash of what the run produced (not how long it took): equal runs, equal prints."""
    return hash((tuple(record.pods), tuple(record.samples), tuple(record.jobs), record.events,
                 record.decisions))


def reference_runs(pool: list[Job], horizon_s: float, repeat: int, physics: bool,
                   engine: str = "native") -> dict[str, Any]:
    """`repeat` runs of the reference, each followed by the bare kernel on as many events; the
    median run (by events/s) with the range of the figures over the runs."""
    runs = []
    for _ in range(repeat):
        run = throughput(REFERENCE_NODES, horizon_s, pool, physics=physics, engine=engine)
        run["kernel_events_per_s"] = kernel_baseline(run["events"])["events_per_s"]
        run["share_of_kernel_speed"] = run["events_per_s"] / run["kernel_events_per_s"]
        runs.append(run)
    runs.sort(key=lambda run: run["events_per_s"])
    median = dict(runs[len(runs) // 2])
    median["runs"] = len(runs)
    for key in ("events_per_s", "sim_events_per_s", "share_of_kernel_speed"):
        median[f"{key}_range"] = [min(run[key] for run in runs), max(run[key] for run in runs)]
    return median


def arrivals(pool: list[Job], cluster: Cluster, horizon_s: float | None, seed: int) -> list[Job]:
    spec = ArrivalSpec("poisson", LOAD)
    return assign_arrivals(pool, spec, cluster.capacity.cpu, np.random.default_rng(seed),
                           horizon_s)


def kernel_baseline(events: int, in_flight: int = 1000) -> dict[str, Any]:
    """The bare kernel: `events` no-op events, `in_flight` self-rescheduling chains."""
    kernel = Kernel()
    gaps = np.random.default_rng(0).exponential(1.0, size=max(events, 1)).tolist()
    scheduled = [min(in_flight, events)]

    def tick(_: Any, __: int) -> None:
        if scheduled[0] < events:  # each event schedules the next one of its chain
            kernel.schedule(kernel.now_s + gaps[scheduled[0]], 0, tick, None, 0)
            scheduled[0] += 1

    started = time.perf_counter()
    for index in range(scheduled[0]):
        kernel.schedule(gaps[index], 0, tick, None, 0)
    kernel.run_until(math.inf)
    wall = time.perf_counter() - started
    return {"events": kernel.processed, "in_flight": in_flight, "wall_s": wall,
            "events_per_s": kernel.processed / wall}


def memory_child(tasks: int, nodes: int) -> dict[str, Any]:
    """Load a mix of `tasks` tasks and simulate it to the end; this process's peak RSS."""
    started = time.perf_counter()
    jobs, count = [], 0
    pool = load(f"builtin:mix:{max(1, tasks // 10)}")
    for job in pool:
        if count >= tasks:
            break
        jobs.append(job)
        count += len(job.tasks)
    cluster = load_cluster(f"builtin:scale-{nodes}")
    timed = arrivals(jobs, cluster, None, 0)
    loaded = time.perf_counter() - started
    record = run_engine("native", timed, cluster, SimSettings(), 0)
    return {"tasks": count, "jobs": len(jobs), "pods": len(record.pods), "nodes": nodes,
            "events": record.events, "load_s": loaded, "simulate_s": record.wall_seconds,
            "unfinished_jobs": sum(1 for job in record.jobs if job.finish_s is None),
            "peak_rss_bytes": peak_rss_bytes()}


def peak_rss_bytes() -> int:
    # ru_maxrss is in kilobytes on Linux, in bytes on macOS
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def memory(tasks: int, nodes: int) -> dict[str, Any]:
    """Run memory_child in a fresh interpreter, so nothing measured before counts."""
    command = [sys.executable, __file__, "--memory-child", str(tasks), str(nodes)]
    finished = subprocess.run(command, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(finished.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller run, for a smoke test")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the reference (median)")
    parser.add_argument("--memory-child", nargs=2, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=OUT / "sim_speed.json")
    options = parser.parse_args()
    if options.memory_child:
        print(json.dumps(memory_child(*options.memory_child)))
        return
    scale = 0.1 if options.quick else 1.0
    pool = load(POOL)
    reference = reference_runs(pool, REFERENCE_HORIZON_S * scale, options.repeat, physics=True)
    print_reference(reference)
    python = reference_runs(pool, REFERENCE_HORIZON_S * scale, 1, physics=True, engine="python")
    print_reference(python)
    print_ratio(reference, python)
    ideal = reference_runs(pool, REFERENCE_HORIZON_S * scale, 1, physics=False)
    print_reference(ideal)
    ideal_python = reference_runs(pool, REFERENCE_HORIZON_S * scale, 1, physics=False,
                                  engine="python")
    print_ratio(ideal, ideal_python)
    baseline = kernel_baseline(reference["events"])
    print_scaling_header()
    scaling = []
    for nodes in SCALING_NODES:
        horizon = scale * max(REFERENCE_HORIZON_S * REFERENCE_NODES / nodes, MIN_HORIZON_S)
        pair = [throughput(nodes, horizon, pool, engine=engine) for engine in ENGINES]
        scaling.extend(pair)
        print_scaling(*pair)
    peak = None if options.skip_memory else memory(
        int(MEMORY_TASKS * (0.05 if options.quick else 1.0)), MEMORY_NODES)
    if peak:
        print(f"memory: {peak['tasks']:,} tasks ({peak['pods']:,} pods) on {peak['nodes']} "
              f"nodes: peak RSS {peak['peak_rss_bytes'] / 2**30:.2f} GiB; load "
              f"{peak['load_s']:.1f} s, simulate {peak['simulate_s']:.1f} s, "
              f"{peak['events']:,} events")
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps({
        "machine": {"python": platform.python_version(), "cpu": platform.processor(),
                    "cores_visible": len(os.sched_getaffinity(0))},
        "reference": reference, "reference_python": python, "reference_physics_off": ideal,
        "reference_physics_off_python": ideal_python, "kernel_baseline": baseline,
        "scaling": scaling,
        "memory": peak}, indent=2) + "\n")
    print(f"wrote {options.out}")


def print_ratio(native: dict[str, Any], python: dict[str, Any]) -> None:
    same = native["fingerprint"] == python["fingerprint"]
    print(f"  native / python: {native['events_per_s'] / python['events_per_s']:.1f}x the "
          f"events per wall second, {python['cpu_s'] / native['cpu_s']:.1f}x less CPU; "
          f"records {'equal' if same else 'DIFFERENT'}")


def print_reference(row: dict[str, Any]) -> None:
    low, high = row["events_per_s_range"]
    print(f"[{row['engine']}] {SCHEDULER} on builtin:scale-{row['nodes']}, physics "
          f"{'on' if row['physics'] else 'off'}: {row['events']:,} events in "
          f"{row['wall_s']:.2f} s (cpu {row['cpu_s']:.2f} s) = {row['events_per_s']:,.0f} "
          f"events/s, median of {row['runs']} (range {low:,.0f}-{high:,.0f}); "
          f"{row['share_of_kernel_speed']:.1%} of the bare kernel's "
          f"{row['kernel_events_per_s']:,.0f} events/s; {row['pods']:,} pods, "
          f"decide {row['decision_s'] / row['wall_s']:.0%} of the time; without it "
          f"{row['sim_events_per_s']:,.0f} events/s")


def print_scaling_header() -> None:
    print(f"{'nodes':>6} {'horizon s':>10} {'pods':>9} {'events':>10} {'wall s':>8} "
          f"{'events/s':>10} {'CPU s':>7} {'decide %':>9} {'python s':>9} {'ratio':>6} "
          f"{'equal':>6}")


def print_scaling(row: dict[str, Any], python: dict[str, Any]) -> None:
    print(f"{row['nodes']:>6} {row['horizon_s']:>10.0f} {row['pods']:>9,} {row['events']:>10,} "
          f"{row['wall_s']:>8.2f} {row['events_per_s']:>10,.0f} {row['cpu_s']:>7.2f} "
          f"{row['decision_s'] / row['wall_s']:>9.0%} {python['wall_s']:>9.2f} "
          f"{python['wall_s'] / row['wall_s']:>5.1f}x "
          f"{row['fingerprint'] == python['fingerprint']!s:>6}")


if __name__ == "__main__":
    main()
