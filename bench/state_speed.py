"""State encoder speed: milliseconds per decision, by cluster size and number of candidates.

    taskset -c 0 .venv/bin/python bench/state_speed.py [--quick]

For each cluster size, `builtin:scale-N` runs the built-in archetype mix arriving as a Poisson
process at 0.8 of the cluster's cores, with `kube-default` placing the pods; at each of its
decisions the encoder observes the view with the first C pending pods as candidates (one
EncodeContext through the run, as in training and serving). Only `observe` is timed. A
decision is "after a scrape" when some node's signals were sampled since the previous one
(every row is re-read then), otherwise "between scrapes". The first call (building the
cluster's statics) is reported on its own. Results go to bench/out/state_speed.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.schedulers import SCHEDULERS
from dagpilot.sim import SimEnv
from dagpilot.state import EncodeContext, observe
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals

OUT = Path(__file__).resolve().parent / "out"
POOL = "builtin:mix:200"
LOAD = 0.8
HORIZON_S = 3600.0
NODES = (100, 1000, 5000)
CANDIDATES = (1, 16, 64)


def measure(nodes: int, candidates: int, decisions: int) -> dict[str, Any]:
    cluster = load_cluster(f"builtin:scale-{nodes}")
    rng = np.random.default_rng(0)
    jobs = assign_arrivals(load(POOL), ArrivalSpec("poisson", LOAD), cluster.capacity.cpu, rng,
                           HORIZON_S)
    env = SimEnv(jobs, cluster, dataclasses.replace(SimSettings(), horizon_s=HORIZON_S))
    scheduler = SCHEDULERS["kube-default"]()
    scheduler.reset(cluster, np.random.default_rng(0))
    context = EncodeContext()
    view = env.reset(0)
    first_s: float | None = None
    between: list[float] = []
    after: list[float] = []
    last_sample = -1.0
    while len(between) + len(after) < decisions and not env.done:
        pods = list(itertools.islice(view.pending, candidates))
        sample = view.nodes[0].signals.sampled_s  # the simulator scrapes every node at once
        started = time.perf_counter()
        observe(view, pods, context)
        elapsed = time.perf_counter() - started
        if first_s is None:
            first_s = elapsed
        elif sample != last_sample:
            after.append(elapsed)
        else:
            between.append(elapsed)
        last_sample = sample
        view, _, _, _ = env.step(scheduler.decide(view))
    return {"nodes": nodes, "candidates": candidates, "first_ms": 1e3 * (first_s or 0.0),
            **summary("between_scrapes", between), **summary("after_scrape", after)}


def summary(name: str, seconds: list[float]) -> dict[str, Any]:
    ms = np.array(seconds) * 1e3
    if not len(ms):
        return {f"{name}_n": 0}
    return {f"{name}_n": len(ms), f"{name}_median_ms": float(np.median(ms)),
            f"{name}_p95_ms": float(np.percentile(ms, 95))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer decisions per size")
    args = parser.parse_args()
    decisions = 60 if args.quick else 400
    results = [measure(nodes, c, decisions) for nodes in NODES for c in CANDIDATES]
    OUT.mkdir(exist_ok=True)
    (OUT / "state_speed.json").write_text(json.dumps(
        {"machine": platform.processor() or platform.machine(), "python": platform.python_version(),
         "decisions": decisions, "results": results}, indent=1))
    print(f"{'nodes':>6} {'cand':>5} {'first':>8} {'between med':>12} {'p95':>8} "
          f"{'after-scrape med':>17} {'p95':>8}")
    for r in results:
        print(f"{r['nodes']:>6} {r['candidates']:>5} {r['first_ms']:>8.1f} "
              f"{r.get('between_scrapes_median_ms', float('nan')):>12.2f} "
              f"{r.get('between_scrapes_p95_ms', float('nan')):>8.2f} "
              f"{r.get('after_scrape_median_ms', float('nan')):>17.2f} "
              f"{r.get('after_scrape_p95_ms', float('nan')):>8.2f}")


if __name__ == "__main__":
    main()
