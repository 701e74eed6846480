"""The online adapter under drift, in the simulator (issue 12 part 2).

    NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" \
        .venv/bin/python bench/online_drift.py --seeds 10 --out bench/out/online_drift.json

The drift: every task of class `train` runs 1.5x its nominal runtime, and zone-b's disks are
throttled to 100 IOPS each (a volume out of burst credits; each its own, out of any shared
pool). The adapter sees what serving would see: the journal of an observation window in which
the shipped model scheduled the drifted world (other arrival streams than the evaluation's),
one `feedback` record per finished pod as the node agent writes it (node, class, runtime,
bytes moved, the prediction: the nominal runtime), stamped at the pod's end. It runs one real
cycle (online.adapter: the trigger, the recalibration estimated from that feedback, the pinned
fine-tune, the gate, the registry) on the configured pool; it never sees the drift's cause.
Everything runs at `--load` (0.4: below capacity, so placement, not queue order, decides), and
the fine-tune's objective is `--objective` (imitation: DAgger toward `--teacher`; or ppo).

Reported: the adapter's estimate next to the truth; the JCT of the shipped model and of the
model serving after the adapter (the adapted one when the gate passed it, else the shipped
one), on the same drifted arrival sequences and simulator seeds (paired, 95 % t-interval,
dagpilot.bench.stats); the time from the drift's last feedback record being read to the
adapted model being `current`; rollbacks; and a swap: an episode driven through serve's
ModelPolicy, with `current` changed half-way, counting the decisions each version made and
any call that found no model.
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
from dagpilot.core.types import Cluster, Disk, Job, Task
from dagpilot.core.view import ClusterView
from dagpilot.native import simulate
from dagpilot.online.adapter import Adapter
from dagpilot.online.config import OBJECTIVES, AdapterSettings, OnlineConfig
from dagpilot.online.drift import Drift, task_family
from dagpilot.online.finetune import FineTuneResult
from dagpilot.online.recalibration import replayed_cluster
from dagpilot.online.reference import nominal_runtime_s
from dagpilot.online.scenarios import recalibrated
from dagpilot.online.world import serving_model, world
from dagpilot.registry import publish, read_current
from dagpilot.serve.model_reload import ModelPolicy
from dagpilot.sim.record import PodRecord
from dagpilot.train.evaluation import censored_avg_jct
from dagpilot.train.scenarios import EpisodeTask, loaded_episode_tasks
from dagpilot.workloads import load

REPO = Path(__file__).resolve().parents[1]
WORKLOAD, CLUSTER = "builtin:mix", "builtin:small"
TASK_CLASS, SLOWDOWN = "train", 1.5
DEGRADED_ZONE = "zone-b"
THROTTLED_IOPS = 100
BENCH_SEED = 90_001  # the benchmark's arrival streams: apart from the adapter's seeds
OBSERVE_SEED = 90_002  # the observation window's
# The window's journal clock (Unix seconds): fixed, because the adapter seeds its fine-tune and
# its gate with the drift's journal time; the time to an adapted model is measured apart.
OBSERVED_FROM_T = 1_790_000_000.0


def degraded(cluster: Cluster) -> Cluster:
    """zone-b's disks throttled to THROTTLED_IOPS, each its own volume."""
    nodes = tuple(dataclasses.replace(node, disk=Disk(
        node.disk.kind, THROTTLED_IOPS, node.disk.bandwidth_bytes_s // 4, None))
        if node.zone == DEGRADED_ZONE else node for node in cluster.nodes)
    return dataclasses.replace(cluster, nodes=nodes)


def drifted_tasks(seeds: int, horizon_h: float, load_: float, seed: int = BENCH_SEED
                  ) -> tuple[list[EpisodeTask], Cluster]:
    drift = Drift(TASK_CLASS, 5, SLOWDOWN, 0.0, 0.0)
    jobs = recalibrated(tuple(load(WORKLOAD)), drift)
    cluster = degraded(load_cluster(CLUSTER))
    return loaded_episode_tasks(jobs, cluster, seed=seed, episodes=seeds, load=load_,
                                horizon_s=horizon_h * 3600.0, phase="eval"), cluster


def observed_journal(path: Path, agent: Agent, episodes: int, horizon_h: float,
                     load_: float) -> int:
    """The journal serving would have written while the shipped model scheduled the drifted
    world: one feedback record per finished pod at its end (episodes one after another),
    with the nominal runtime as the prediction. Returns the records written."""
    tasks, cluster = drifted_tasks(episodes, horizon_h, load_, seed=OBSERVE_SEED)
    nominal = {(job.id, task.id): task for job in load(WORKLOAD) for task in job.tasks}
    lines, offset = [], OBSERVED_FROM_T
    for number, task in enumerate(tasks):
        record = simulate(task.jobs, cluster, DagpilotScheduler(agent), SimSettings(),
                          task.sim_seed)
        by_id = {job.id: job for job in task.jobs}
        for pod in record.pods:
            if pod.outcome != "succeeded" or pod.started_s is None or pod.finished_s is None:
                continue
            base = by_id[pod.job_id]
            lines.append(_feedback(pod, nominal[(_template(base), pod.task_id)],
                                   base.index[pod.task_id], offset, number))
        offset += record.end_s + 60.0
    lines.sort(key=lambda line: line["t"])
    with path.open("w") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)
    return len(lines)


def _template(job: Job) -> str:
    """The pool job an arrival copies (the k-th copy is `ID#k`, workloads/arrivals.py)."""
    return job.id.split("#", 1)[0]


def _feedback(pod: PodRecord, nominal: Task, ran: Task, offset: float,
              episode: int) -> dict[str, Any]:
    assert pod.started_s is not None and pod.finished_s is not None
    return {"kind": "feedback", "t": round(offset + pod.finished_s, 3), "node": pod.node,
            "pod_uid": f"e{episode}-{pod.pod}-{pod.attempt}",
            "task_class": task_family(ran.name), "runtime_s": pod.finished_s - pod.started_s,
            "actual": {"io_bytes": ran.read_bytes + ran.written_bytes},
            "predicted": {"runtime_s": nominal_runtime_s(nominal, pod)}}


def jcts(agent: Agent, tasks: list[EpisodeTask], cluster: Cluster) -> list[float]:
    return [censored_avg_jct(simulate(task.jobs, cluster, DagpilotScheduler(agent),
                                      SimSettings(), task.sim_seed)) for task in tasks]


def adapt(models: Path, state: Path, settings: AdapterSettings, observe: tuple[int, float]
          ) -> tuple[dict[str, Any], float, FineTuneResult | None]:
    """One real adapter cycle on the observation window's journal; the seconds from the cycle
    reading the drift's feedback to its end (the adapted model current, when it passed)."""
    journal = state / "journal.jsonl"
    agent = Agent(*serving_model(models, "base"), explain=False)
    written = observed_journal(journal, agent, *observe, settings.load)
    config = OnlineConfig(adapter=settings)
    adapter = Adapter(config, journal_path=journal, models=models, state=state / "online",
                      cpus={max(os.sched_getaffinity(0))})
    drift_seen = time.time()
    report = adapter.cycle()
    elapsed = time.time() - drift_seen
    gate = report.gate
    scene, estimate = world(settings.workload, settings.cluster, None), adapter.recalibration
    replayed = (replayed_cluster(scene.cluster, estimate, scene.sim.effects)
                if estimate is not None else scene.cluster)
    return {"feedback_records": written, "action": report.action, "detail": report.detail,
            "version": report.version,
            "drift": dataclasses.asdict(report.drift) if report.drift else None,
            "recalibration": dataclasses.asdict(estimate) if estimate else None,
            "replay_iops": {n.name: n.disk.iops for n in replayed.nodes
                            if n.zone == DEGRADED_ZONE},
            "gate_ratio_mean": gate.interval.mean if gate else None,
            "gate_ratio_ci95": [gate.interval.low, gate.interval.high] if gate else None,
            "gate_candidate_jct_s": gate.candidate_jct_s if gate else None,
            "gate_serving_jct_s": gate.serving_jct_s if gate else None,
            "fine_tune": {"iterations": tuned.iterations, "env_steps": tuned.env_steps,
                          "wall_s": round(tuned.wall_s, 1), "cpus": tuned.cpus}
            if (tuned := adapter.fine_tuned) else None,
            "rollbacks": adapter.breaker.state.rollbacks}, elapsed, adapter.fine_tuned


def candidate_jcts(models: Path, tasks: list[EpisodeTask], cluster: Cluster,
                   tuned: FineTuneResult | None) -> list[float] | None:
    """The fine-tune's candidate on the true drifted world, published or not: what the
    adapter's weights would have done (the gate judged them on the estimated world)."""
    if tuned is None:
        return None
    model, normaliser = serving_model(models, "base")
    model.load_state_dict(tuned.state, strict=True)
    return jcts(Agent(model, normaliser, explain=False), tasks, cluster)


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
    parser.add_argument("--seeds", type=int, default=10)
    # Every episode is 2 h: at load 0.4 a 1 h fine-tune scenario of builtin:mix can hold no
    # arrival at all, and with few jobs one changed placement swings a seed by +-30 %. The
    # gate replays each held-back sequence on 3 simulator seeds (its JCT: their mean).
    parser.add_argument("--horizon-h", type=float, default=2.0)
    parser.add_argument("--gate-horizon-h", type=float, default=2.0)
    parser.add_argument("--gate-replays", type=int, default=3)
    parser.add_argument("--eval-horizon-h", type=float, default=2.0)
    parser.add_argument("--observe-horizon-h", type=float, default=2.0)
    parser.add_argument("--budget-s", type=float, default=90.0)
    parser.add_argument("--validation-seeds", type=int, default=10)
    parser.add_argument("--observe-episodes", type=int, default=2)
    # 0.4: the drifted cluster below capacity (at 0.8 its JCT grows with the horizon: the queue
    # builds and queue order, not placement, decides; docs/BENCHMARKS.md). Both arms, the
    # observation window, the reference, the fine-tune and the gate all run at it.
    parser.add_argument("--load", type=float, default=0.4)
    parser.add_argument("--objective", choices=OBJECTIVES, default="imitation")
    parser.add_argument("--teacher", default="physics-rules")
    parser.add_argument("--imitation-epochs", type=int, default=8)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--lora-rank", type=int, default=8)
    parser.add_argument("--scenarios", type=int, default=4)
    parser.add_argument("--replays", type=int, default=1)
    parser.add_argument("--ppo-epochs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    settings = AdapterSettings(workload=WORKLOAD, cluster=CLUSTER, budget_s=args.budget_s,
                               validation_seeds=args.validation_seeds, horizon_h=args.horizon_h,
                               gate_horizon_h=args.gate_horizon_h,
                               gate_replays=args.gate_replays,
                               learning_rate=args.learning_rate, lora_rank=args.lora_rank,
                               scenarios=args.scenarios, replays=args.replays,
                               ppo_epochs=args.ppo_epochs, load=args.load,
                               objective=args.objective, teacher=args.teacher,
                               imitation_epochs=args.imitation_epochs)
    with tempfile.TemporaryDirectory(prefix="dagpilot-drift-") as scratch:
        models = Path(scratch) / "models"
        publish(models, "base", (REPO / "models" / "current").resolve())
        adapted, to_model_s, tuned = adapt(models, Path(scratch), settings,
                                           (args.observe_episodes, args.observe_horizon_h))
        serving_after = read_current(models)
        assert serving_after is not None
        tasks, cluster = drifted_tasks(args.seeds, args.eval_horizon_h, args.load)
        without = jcts(Agent(*serving_model(models, "base"), explain=False), tasks, cluster)
        # Nothing published: the same model on the same seeds (the simulator is deterministic).
        with_ = without if serving_after == "base" else jcts(
            Agent(*serving_model(models, serving_after), explain=False), tasks, cluster)
        interval = paired_ratio_ci95(with_, without)
        candidate = candidate_jcts(models, tasks, cluster, tuned)
        swap = swap_episode(models, serving_after, tasks[0], cluster)
    result = {"workload": WORKLOAD, "cluster": CLUSTER, "load": args.load,
              "horizon_h": args.horizon_h, "gate_horizon_h": args.gate_horizon_h,
              "eval_horizon_h": args.eval_horizon_h,
              "observe_horizon_h": args.observe_horizon_h, "seeds": args.seeds, "drift": {
                  "task_class": TASK_CLASS, "slowdown": SLOWDOWN,
                  "degraded_zone": DEGRADED_ZONE, "iops": THROTTLED_IOPS},
              "adapter": adapted, "serving_after": serving_after,
              "drift_to_adapted_model_s": round(to_model_s, 1)
              if adapted["action"] == "published" else None,
              "cycle_s": round(to_model_s, 1),
              "jct_without_s": without, "jct_with_s": with_,
              "ratio_with_over_without": dataclasses.asdict(interval) if interval else None,
              "jct_candidate_s": candidate,
              "ratio_candidate_over_without": dataclasses.asdict(ratio) if candidate and (
                  ratio := paired_ratio_ci95(candidate, without)) else None,
              "swap": swap}
    result["settings"] = dataclasses.asdict(settings)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
