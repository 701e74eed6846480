"""The online adapter under drift, in the simulator (issue 12 part 2).

    NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" \
        .venv/bin/python bench/online_drift.py --seeds 4 --out bench/out/online_drift.json

The drift: every task of class `train` runs 1.5x its nominal runtime, and zone-b's disks degrade
(a tenth of their IOPS, a quarter of their bandwidth). The adapter sees what serving would see:
feedback records of `train` tasks at 1.5x their prediction in a journal; it runs one real cycle
(online.adapter: the pinned fine-tune, the gate, the registry) on the configured pool. It does
not see the storage: its replays use the nominal cluster, the evaluation the degraded one.

Reported: the JCT of the shipped model and of the model serving after the adapter (the adapted
one when the gate passed it, else the shipped one), on the same drifted arrival sequences and
simulator seeds (paired, 95 % t-interval, dagpilot.bench.stats); the time from the drift's
last feedback record to the adapted model being `current`; rollbacks; and a swap: an episode
driven through serve's ModelPolicy, with `current` changed half-way, counting the decisions
each version made and any call that found no model.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from dagpilot.agent import Agent, DagpilotScheduler
from dagpilot.bench.stats import paired_ratio_ci95
from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Cluster, Disk
from dagpilot.core.view import ClusterView
from dagpilot.journal import Journal
from dagpilot.native import simulate
from dagpilot.online.adapter import Adapter
from dagpilot.online.config import AdapterSettings, OnlineConfig
from dagpilot.online.drift import Drift
from dagpilot.online.scenarios import LOAD, recalibrated
from dagpilot.online.world import serving_model
from dagpilot.registry import publish, read_current
from dagpilot.serve.model_reload import ModelPolicy
from dagpilot.train.evaluation import censored_avg_jct
from dagpilot.train.scenarios import EpisodeTask, loaded_episode_tasks
from dagpilot.workloads import load

REPO = Path(__file__).resolve().parents[1]
WORKLOAD, CLUSTER = "builtin:mix", "builtin:small"
TASK_CLASS, SLOWDOWN = "train", 1.5
DEGRADED_ZONE = "zone-b"
BENCH_SEED = 90_001  # the benchmark's arrival streams: apart from the adapter's seeds


def degraded(cluster: Cluster) -> Cluster:
    """zone-b's disks at a tenth of their IOPS and a quarter of their bandwidth."""
    nodes = tuple(dataclasses.replace(node, disk=Disk(
        node.disk.kind, max(1, node.disk.iops // 10), max(1, node.disk.bandwidth_bytes_s // 4),
        node.disk.shared_pool)) if node.zone == DEGRADED_ZONE else node
        for node in cluster.nodes)
    return dataclasses.replace(cluster, nodes=nodes)


def drifted_tasks(seeds: int, horizon_h: float) -> tuple[list[EpisodeTask], Cluster]:
    drift = Drift(TASK_CLASS, 5, SLOWDOWN, 0.0, 0.0)
    jobs = recalibrated(tuple(load(WORKLOAD)), drift)
    cluster = degraded(load_cluster(CLUSTER))
    return loaded_episode_tasks(jobs, cluster, seed=BENCH_SEED, episodes=seeds, load=LOAD,
                                horizon_s=horizon_h * 3600.0, phase="eval"), cluster


def jcts(agent: Agent, tasks: list[EpisodeTask], cluster: Cluster) -> list[float]:
    return [censored_avg_jct(simulate(task.jobs, cluster, DagpilotScheduler(agent),
                                      SimSettings(), task.sim_seed)) for task in tasks]


def adapt(models: Path, state: Path, settings: AdapterSettings) -> tuple[dict[str, Any], float]:
    """One real adapter cycle on a journal that shows the drift; the seconds from the last
    feedback record to the end of the cycle (the adapted model current, when it passed)."""
    journal = Journal(state / "journal.jsonl")
    for index in range(5):
        journal.write("feedback", {"pod_uid": f"u{index}", "task_class": TASK_CLASS,
                                   "runtime_s": 100.0 * SLOWDOWN,
                                   "predicted": {"runtime_s": 100.0}})
    journal.close()
    drift_seen = time.time()
    adapter = Adapter(OnlineConfig(adapter=settings), journal_path=journal.path, models=models,
                      state=state / "online", cpus={max(os.sched_getaffinity(0))})
    report = adapter.cycle()
    elapsed = time.time() - drift_seen
    gate = report.gate
    return {"action": report.action, "detail": report.detail, "version": report.version,
            "gate_ratio_mean": gate.interval.mean if gate else None,
            "gate_ratio_ci95": [gate.interval.low, gate.interval.high] if gate else None,
            "rollbacks": adapter.breaker.state.rollbacks}, elapsed


class ReloadingScheduler:
    """serve's model path in the simulator: every decision asks ModelPolicy for `current`
    (refreshed first, as its thread would), and `swap_at` decisions in `current` changes."""

    name = "dagpilot-reloading"

    def __init__(self, policy: ModelPolicy, swap: Any, swap_at: int) -> None:
        self.policy, self.swap, self.swap_at = policy, swap, swap_at
        self.by_version: Counter[str] = Counter()
        self.without_model = 0

    def reset(self, cluster: Cluster, rng: np.random.Generator) -> None:
        del cluster, rng

    def decide(self, view: ClusterView) -> Placement | None:
        if sum(self.by_version.values()) == self.swap_at:
            self.swap()
        self.policy.refresh()
        serving = self.policy.current()
        if serving is None:
            self.without_model += 1
            return None
        self.by_version[serving.version] += 1
        return serving.policy(view).placement


def swap_episode(models: Path, target: str, task: EpisodeTask,
                 cluster: Cluster) -> dict[str, Any]:
    """One drifted episode with `current` switched to `target` half-way through its
    decisions (the count of a run without a swap first); every decision accounted for."""
    plain = simulate(task.jobs, cluster, ReloadingScheduler(ModelPolicy(models), lambda: None,
                                                            -1), SimSettings(), task.sim_seed)
    policy = ModelPolicy(models)
    before = policy.current()
    assert before is not None
    scheduler = ReloadingScheduler(policy, lambda: publish(models, f"{target}.swap",
                                                           models / target),
                                   plain.decisions // 2)
    record = simulate(task.jobs, cluster, scheduler, SimSettings(), task.sim_seed)
    finished = sum(1 for job in record.jobs if job.finish_s is not None)
    return {"decisions_without_swap": plain.decisions, "decisions": record.decisions,
            "by_version": dict(scheduler.by_version), "without_model": scheduler.without_model,
            "reloads_seen": len(scheduler.by_version), "jobs": len(record.jobs),
            "jobs_finished": finished, "from": before.version, "to": f"{target}.swap"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--horizon-h", type=float, default=0.1)
    parser.add_argument("--budget-s", type=float, default=60.0)
    parser.add_argument("--validation-seeds", type=int, default=4)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    settings = AdapterSettings(workload=WORKLOAD, cluster=CLUSTER, budget_s=args.budget_s,
                               validation_seeds=args.validation_seeds, horizon_h=args.horizon_h)
    with tempfile.TemporaryDirectory(prefix="dagpilot-drift-") as scratch:
        models = Path(scratch) / "models"
        publish(models, "base", (REPO / "models" / "current").resolve())
        adapted, to_model_s = adapt(models, Path(scratch), settings)
        serving_after = read_current(models)
        assert serving_after is not None
        tasks, cluster = drifted_tasks(args.seeds, args.horizon_h)
        without = jcts(Agent(*serving_model(models, "base"), explain=False), tasks, cluster)
        with_ = jcts(Agent(*serving_model(models, serving_after), explain=False), tasks,
                     cluster)
        interval = paired_ratio_ci95(with_, without)
        swap = swap_episode(models, serving_after, tasks[0], cluster)
    result = {"workload": WORKLOAD, "cluster": CLUSTER, "load": LOAD,
              "horizon_h": args.horizon_h, "seeds": args.seeds, "drift": {
                  "task_class": TASK_CLASS, "slowdown": SLOWDOWN,
                  "degraded_zone": DEGRADED_ZONE, "iops": 0.1, "bandwidth": 0.25},
              "adapter": adapted, "serving_after": serving_after,
              "drift_to_adapted_model_s": round(to_model_s, 1)
              if adapted["action"] == "published" else None,
              "cycle_s": round(to_model_s, 1),
              "jct_without_s": without, "jct_with_s": with_,
              "ratio_with_over_without": dataclasses.asdict(interval) if interval else None,
              "swap": swap}
    text = json.dumps(result, indent=1)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
