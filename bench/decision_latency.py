"""Decision latency of the DRL agent: milliseconds per `dagpilot` decision, by cluster size.

    taskset -c 0 .venv/bin/python bench/decision_latency.py [--quick] [--models DIR] [--decisions N]

On 48 nodes (`builtin:default`), 1,000 and 5,000 (`builtin:scale-N`), the built-in archetype mix
arrives as a Poisson process at 0.8 of the cluster's cores, and the `dagpilot` scheduler
(`DagpilotScheduler.decide`, as serving calls it: greedy, no critic, one torch thread, the
start-up heap frozen, collections deferred past each decision; no explanations) places the
pods. After a warm-up, each view it decides on is also given to a second one that explains
its placements (its own copy of the model, so neither reuses the other's graph summaries or
signal memory) and to `kube-default`'s `decide`, the reference; the calls (four, with the
`prepared` copy below) run in rotating order and only they are timed (wall time, and the
thread's CPU time, which other processes on a shared machine disturb less). A call that
finds no feasible pod counts too (it is a decision: "nothing fits"). A third explaining
copy, `prepared`, is told of each scrape as a serving loop would be when new metrics land
(`DagpilotScheduler.prepare`, untimed for the decision: the scrape's node features,
normalised rows and node embeddings are then computed off the decision path; their CPU is
reported on its own, as `prepare`); its placements, explanations included, must equal the
explaining copy's (`prepared_disagreements`).

The model is the registry's current one when `--models` (default `models`) holds one, else a
freshly initialised PolicyNet with fresh normaliser statistics: an untrained network costs the
same per decision, though it chooses differently, and fresh statistics leave the features as
they are (trained ones cost a pass over the changed rows). Each row gives p50/p90/p99/mean of
the agent's wall time, its CPU time, the ratios of its median and p99 to the reference's,
measured on the same views in the same run (a busy machine moves the ratios less than the raw
figures), and how many of its decisions a garbage collection of generation 1 or 2 fell into
(milliseconds each, a full one over 100 ms before the heap is frozen; `dagpilot` defers them
past its decisions). The targets (docs/BENCHMARKS.md): p99 at most 5 ms at 1,000 nodes and
15 ms at 5,000. Results go to bench/out/decision_latency.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from dagpilot.agent import Agent, DagpilotScheduler, load_scheduler
from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.core.scheduler import Placement
from dagpilot.core.view import ClusterView
from dagpilot.policy import PolicyConfig, PolicyNet
from dagpilot.policy.process import settle_scheduler_process
from dagpilot.registry import read_current
from dagpilot.schedulers import SCHEDULERS
from dagpilot.sim import SimEnv
from dagpilot.state import Normaliser
from dagpilot.state.signals import SAMPLED_S
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals

OUT = Path(__file__).resolve().parent / "out"
POOL = "builtin:mix:200"
LOAD = 0.8
HORIZON_S = 3600.0
CLUSTERS = {48: "builtin:default", 1000: "builtin:scale-1000", 5000: "builtin:scale-5000"}
REFERENCE = "kube-default"
SEED = 0


def schedulers(models: Path) -> tuple[list[DagpilotScheduler], str]:
    """(`dagpilot` without explanations, with them, with them and told of scrapes; which
    model): three model copies."""
    explains = (False, True, True)
    if read_current(models) is not None:
        loaded = ([load_scheduler(models, explain=explain) for explain in explains],
                  f"registry {models}: {read_current(models)}")
    else:
        loaded = ([DagpilotScheduler(Agent(PolicyNet.create(PolicyConfig(), SEED),
                                           Normaliser.fresh(), explain=explain))
                   for explain in explains],
                  "fresh PolicyNet (untrained, seed 0) with fresh normaliser statistics")
    settle_scheduler_process()  # as a scheduler process does: full collections skip the heap
    return loaded


Decide = Callable[[ClusterView], Placement | None]


class Collections:
    """Counts Python's garbage collections of generations 1 and 2 (the costly ones: several
    ms with the simulator's heap) as they start."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] >= 1:
            self.count += 1


@dataclasses.dataclass(frozen=True, slots=True)
class Sample:
    wall_s: float
    cpu_s: float


@dataclasses.dataclass
class Timings:
    samples: list[Sample] = dataclasses.field(default_factory=list)
    with_collection: int = 0  # decisions during which a collection ran

    def summary(self) -> dict[str, float]:
        return {**summary([s.wall_s for s in self.samples]),
                **summary([s.cpu_s for s in self.samples], "cpu_"),
                "decisions_with_gc": self.with_collection}


def timed(decide: Decide, view: ClusterView, collections: Collections,
          into: Timings | None) -> Placement | None:
    """The decision; its wall and CPU time (this thread's: what other processes take from a
    shared core does not count) go `into` the timings, unless that is None (warm-up)."""
    before = collections.count
    wall, cpu = time.perf_counter(), time.thread_time()
    placement = decide(view)
    wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
    collected = collections.count > before
    # The Sample is the first object the collector tracks that is made after the call (an
    # allocation no free list serves): a collection `dagpilot` deferred past its decision runs
    # here, outside the timed spans (as after a serving loop's reply), not in the next call.
    sample = Sample(wall, cpu)
    if into is not None:
        into.samples.append(sample)
        into.with_collection += collected
    return placement


def measure(nodes: int, models: Path, warmup: int, decisions: int) -> dict[str, Any]:
    cluster = load_cluster(CLUSTERS[nodes])
    jobs = assign_arrivals(load(POOL), ArrivalSpec("poisson", LOAD), cluster.capacity.cpu,
                           np.random.default_rng(SEED), HORIZON_S)
    env = SimEnv(jobs, cluster, dataclasses.replace(SimSettings(), horizon_s=HORIZON_S))
    (quiet, explaining, prepared), model = schedulers(models)
    reference = SCHEDULERS[REFERENCE]()
    for scheduler in (quiet, explaining, prepared, reference):
        scheduler.reset(cluster, np.random.default_rng(SEED))
    deciders: dict[str, Decide] = {"explain_off": quiet.decide,
                                   "explain_on": explaining.decide,
                                   "prepared": prepared.decide,
                                   "reference": reference.decide}
    names = list(deciders)
    timings = {name: Timings() for name in [*names, "prepare"]}
    collections = Collections()
    gc.callbacks.append(collections)
    view: ClusterView = env.reset(SEED)
    disagreements = prepared_disagreements = placements = step = 0
    scrapes = Scrapes()
    while len(timings["reference"].samples) < decisions and not env.done:
        measuring = step >= warmup
        if scrapes.landed(view):  # new metrics: the serving loop's call, before any decision
            timed(prepared.prepare, view, collections,
                  timings["prepare"] if measuring else None)
        order = names[step % len(names):] + names[:step % len(names)]  # who goes first
        results = {name: timed(deciders[name], view, collections,
                               timings[name] if measuring else None) for name in order}
        placement = results["explain_off"]
        disagreements += not _same(placement, results["explain_on"])
        prepared_disagreements += results["prepared"] != results["explain_on"]
        placements += placement is not None
        view = env.step(placement)[0]
        step += 1
    gc.callbacks.remove(collections)
    measured = {name: timings[name].summary() for name in names}
    ref = measured["reference"]
    cache = getattr(quiet.agent.model.graphs, "summary_cache", None)
    agents = ("explain_off", "explain_on", "prepared")
    return {
        "nodes": nodes, "cluster": CLUSTERS[nodes], "model": model,
        "decisions": len(timings["reference"].samples),
        "placements_with_warmup": placements,
        "explain_disagreements": disagreements,
        "prepared_disagreements": prepared_disagreements, **measured,
        "prepare": {"scrapes": len(timings["prepare"].samples),
                    **timings["prepare"].summary()},
        "ratio_p50": {name: measured[name]["p50_ms"] / ref["p50_ms"] for name in agents},
        "ratio_p99": {name: measured[name]["p99_ms"] / ref["p99_ms"] for name in agents},
        "graph_cache": None if cache is None else {"hits": cache.hits, "misses": cache.misses},
    }


class Scrapes:
    """Whether new metrics landed since the last view: some node's sample time moved."""

    def __init__(self) -> None:
        self._sampled: np.ndarray | None = None

    def landed(self, view: ClusterView) -> bool:
        sampled = view.signal_arrays()[SAMPLED_S]
        moved = self._sampled is None or not np.array_equal(sampled, self._sampled)
        self._sampled = sampled.copy()
        return moved


def _same(a: Placement | None, b: Placement | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.pod.uid, a.node) == (b.pod.uid, b.node)


def summary(seconds: list[float], prefix: str = "") -> dict[str, float]:
    """Percentiles and mean in milliseconds."""
    ms = np.array(seconds) * 1e3 if seconds else np.array([np.nan])
    return {f"{prefix}p50_ms": float(np.percentile(ms, 50)),
            f"{prefix}p90_ms": float(np.percentile(ms, 90)),
            f"{prefix}p99_ms": float(np.percentile(ms, 99)), f"{prefix}mean_ms": float(ms.mean())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: few decisions")
    parser.add_argument("--models", type=Path, default=Path("models"),
                        help="registry root; a fresh network when it has no current model")
    parser.add_argument("--nodes", type=int, nargs="*", default=sorted(CLUSTERS),
                        choices=sorted(CLUSTERS), help="cluster sizes to measure")
    parser.add_argument("--decisions", type=int, default=400,
                        help="timed decisions per cluster size (after 50 warm-up ones)")
    args = parser.parse_args()
    warmup, decisions = (10, 40) if args.quick else (50, args.decisions)
    results = [measure(nodes, args.models, warmup, decisions) for nodes in args.nodes]
    OUT.mkdir(exist_ok=True)
    (OUT / "decision_latency.json").write_text(json.dumps(
        {"machine": platform.processor() or platform.machine(),
         "python": platform.python_version(), "torch": torch.__version__,
         "torch_threads": torch.get_num_threads(), "pool": POOL, "load": LOAD,
         "warmup": warmup, "results": results}, indent=1))
    print(f"model: {results[0]['model']}; torch threads: {torch.get_num_threads()}")
    print("agent wall ms, its CPU ms, the reference's wall ms, agent/reference ratios, "
          "decisions during which a generation 1-2 garbage collection ran")
    print(f"{'nodes':>6} {'explain':>8} {'n':>5} {'p50':>7} {'p90':>7} {'p99':>7} {'mean':>7} "
          f"{'cpu p50':>8} {'cpu p99':>8} {'ref p50':>8} {'ref p99':>8} {'x p50':>7} "
          f"{'x p99':>7} {'gc':>4}")
    for r in results:
        ref = r["reference"]
        for name in ("explain_off", "explain_on", "prepared"):
            a = r[name]
            print(f"{r['nodes']:>6} {name.removeprefix('explain_'):>8} {r['decisions']:>5} "
                  f"{a['p50_ms']:>7.2f} {a['p90_ms']:>7.2f} {a['p99_ms']:>7.2f} "
                  f"{a['mean_ms']:>7.2f} {a['cpu_p50_ms']:>8.2f} {a['cpu_p99_ms']:>8.2f} "
                  f"{ref['p50_ms']:>8.3f} {ref['p99_ms']:>8.3f} "
                  f"{r['ratio_p50'][name]:>7.1f} {r['ratio_p99'][name]:>7.1f} "
                  f"{a['decisions_with_gc']:>4}")
        prepare = r["prepare"]
        print(f"{'':>6} prepare: {prepare['scrapes']} scrapes, CPU p50 {prepare['cpu_p50_ms']:.2f}"
              f" p99 {prepare['cpu_p99_ms']:.2f} ms; prepared placements unlike explain_on's: "
              f"{r['prepared_disagreements']}; explain_on's destinations unlike off's: "
              f"{r['explain_disagreements']}")


if __name__ == "__main__":
    main()
