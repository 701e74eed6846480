"""Training throughput: environment steps, decisions and simulator events per second of PPO
rollouts, one episode at a time against lock-step groups, in the same run.

    taskset -c 0 nice -n 5 .venv/bin/python bench/training_throughput.py [--quick] [--lanes 8]
        [--rounds 4] [--iterations 2]

The episodes are the PPO phase's loaded ones (`train.scenarios.loaded_episode_tasks`, phase
"ppo", iteration 0): the pool `builtin:mix:60` (loader seed 1, as the shipped model's run)
arriving for `--horizon-h` hours at load 0.8 on `builtin:default`, `--episodes` arrival
sequences replayed 4 times each, so 4 x episodes tasks. The policy is the registry's current
model (`--models`, default `models`) with its normaliser, else a freshly initialised network;
it samples, with the critic, as `LocalRollouts.collect` runs it. Each mode collects every
task (`lanes=1`: `run_episode` per task, the path before; `lanes=N`: groups of N tasks in
lock-step), in alternating order over `--rounds` rounds; the figures are per second of the
process's CPU time (one torch thread, one core: what other processes take from a shared core
does not count, though on a shared VM a busy neighbour still inflates it, by up to 2x here)
and of wall time, and the ratio of the lock-step mode to one lane: the best of each mode,
and the median of the rounds' ratios (each round runs both modes back to back). The two
modes' episodes are compared step by step: how many steps chose the same action until the
episodes part, and the largest difference of the log-probabilities while they agree
(rounding: docs/TRAINING.md, "Lock-step rollouts").

Then `--iterations` rounds of whole PPO iterations, training before this work against
training now, in alternating order. Each is the rollouts of the same tasks, their targets
(`Steps.of`: GAE and the input-driven baseline) and one PPO update (the training defaults:
4 epochs, minibatch 64) of a fresh copy of the model with the same generator. "before": the
rollouts one episode at a time (`run_episode`, the path training took before lock-step
rollouts) and the update as it was (`PPO(collate_once=False)`: every minibatch collated
afresh, per-tensor Adam); "new": the lock-step rollouts (`--lanes`) and the update from the
iteration's StepTable (the default). `--before-rollouts lockstep` gives "before" the new
lock-step rollouts too, so that only the update differs (the third and fourth rounds'
comparison). Each phase's CPU and wall seconds are kept; the figure is environment steps per
CPU second of the whole iteration, and of the update alone (steps of data per second). Both
updates' losses and weights are compared (the two rollouts take the same actions, as the
rounds above check, their log-probabilities equal up to rounding). Results go to
bench/out/training_throughput.json.

`--own-iterations N` measures nothing else: N whole iterations exactly as the trainer of the
`dagpilot` package on the path runs one (`Trainer.reinforce`: its rollout lanes, its targets,
its PPO with its defaults). With another tree's `src/` first on PYTHONPATH it measures that
tree's training, so the code from before this work can be timed against today's in turns:

    git worktree add /tmp/before 1845dd6
    PYTHONPATH=/tmp/before/src taskset -c 1 .venv/bin/python bench/training_throughput.py \
        --own-iterations 1 --models models      # then the same without PYTHONPATH
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from dagpilot.clusters import load_cluster
from dagpilot.core.config import LoaderSettings, SimSettings
from dagpilot.policy import PolicyConfig, PolicyNet
from dagpilot.policy.process import set_torch_threads
from dagpilot.registry import load_current, read_current
from dagpilot.state import FEATURE_SCHEMA_VERSION, Normaliser
from dagpilot.train import loop
from dagpilot.train.config import PPOSettings, TrainConfig
from dagpilot.train.ppo import PPO, Steps
from dagpilot.train.rollout import Episode, LocalRollouts
from dagpilot.train.scenarios import EpisodeTask, loaded_episode_tasks
from dagpilot.train.snapshot import PolicySnapshot
from dagpilot.workloads import load

OUT = Path(__file__).resolve().parent / "out"
POOL, LOADER_SEED, CLUSTER, LOAD, REPLAYS, SEED = "builtin:mix:60", 1, "builtin:default", 0.8, 4, 0


def snapshot(models: Path) -> tuple[PolicySnapshot, str]:
    if read_current(models) is not None:
        loaded = load_current(models, FEATURE_SCHEMA_VERSION)
        policy = PolicyConfig.from_dict(dict(loaded.config["policy"]))
        model = PolicyNet.from_state(policy, loaded.state_dict)
        normaliser = Normaliser.from_json(json.dumps(_plain(loaded.normaliser)))
        return PolicySnapshot.of(model, normaliser), f"registry {models}: {read_current(models)}"
    return (PolicySnapshot.of(PolicyNet.create(PolicyConfig(), SEED), Normaliser.fresh()),
            "fresh PolicyNet (seed 0), fresh normaliser")


def _plain(value: Any) -> Any:
    if isinstance(value, dict) or hasattr(value, "items"):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def collect(rollouts: LocalRollouts, policy: PolicySnapshot, tasks: list[EpisodeTask],
            lanes: int) -> tuple[list[Episode], float, float]:
    """The episodes, and the CPU and wall seconds they took."""
    cpu, wall = time.process_time(), time.perf_counter()
    # one lane as the code before lock-step rollouts was called, so that this script can
    # measure that code too (`--one-lane-only` with its src first on PYTHONPATH)
    episodes = (rollouts.collect(policy, tasks) if lanes == 1 else
                rollouts.collect(policy, tasks, lanes=lanes))
    return episodes, time.process_time() - cpu, time.perf_counter() - wall


def agreement(one: list[Episode], other: list[Episode]) -> dict[str, float]:
    """Steps that chose the same action before the episodes parted, and the log-probabilities'
    largest difference over them."""
    same = total = parted = 0
    worst = 0.0
    for a, b in zip(one, other, strict=True):
        total += len(a)
        for step, (x, y) in enumerate(zip(a.actions, b.actions, strict=False)):
            if x != y:
                parted += 1
                break
            same += 1
            worst = max(worst, abs(a.log_probs[step] - b.log_probs[step]))
    return {"steps": total, "same_before_parting": same, "episodes_parted": parted,
            "episodes": len(one), "max_log_prob_difference": worst}


def iteration(rollouts: LocalRollouts, policy: PolicySnapshot, tasks: list[EpisodeTask],
              lanes: int, collate_once: bool) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """One PPO iteration (rollouts, targets, update) of a fresh copy of the snapshot's
    network: CPU and wall seconds per phase, the update's statistics, the weights after it."""
    clock: dict[str, float] = {}
    started = (time.process_time(), time.perf_counter())
    episodes, clock["rollout_cpu_s"], clock["rollout_wall_s"] = collect(rollouts, policy,
                                                                       tasks, lanes)
    begun = (time.process_time(), time.perf_counter())
    settings = PPOSettings()
    steps = Steps.of(episodes, settings)
    clock["targets_cpu_s"] = time.process_time() - begun[0]
    model = PolicyNet.from_state(policy.config, policy.state_dict)
    begun = (time.process_time(), time.perf_counter())
    ppo = PPO(model, settings, collate_once=collate_once)
    if not collate_once:  # the update before, whole: its per-tensor Adam too
        ppo.optimizer = torch.optim.Adam(model.parameters(), lr=settings.learning_rate)
    stats = ppo.update(steps, torch.Generator().manual_seed(SEED))
    clock["update_cpu_s"] = time.process_time() - begun[0]
    clock["update_wall_s"] = time.perf_counter() - begun[1]
    clock["cpu_s"] = time.process_time() - started[0]
    clock["wall_s"] = time.perf_counter() - started[1]
    env_steps = sum(e.summary.env_steps for e in episodes if e.summary is not None)
    return ({**clock, "env_steps": env_steps, "decisions": len(steps),
             "steps_per_cpu_s": env_steps / clock["cpu_s"],
             "steps_per_wall_s": env_steps / clock["wall_s"],
             "update_steps_per_cpu_s": len(steps) / clock["update_cpu_s"],
             "stats": dataclasses.asdict(stats)},
            {name: p.detach().clone() for name, p in model.named_parameters()})


MODES = {"before": (False, "the update before (every minibatch collated, per-tensor Adam)"),
         "new": (True, "the StepTable's update")}
"""Whole-iteration modes: (collate_once, what runs)."""


def iterations(rollouts: LocalRollouts, policy: PolicySnapshot, tasks: list[EpisodeTask],
               lanes: dict[str, int], rounds: int) -> dict[str, Any]:
    """Whole iterations, "before" and "new" (`MODES`; `lanes`: each one's rollout lanes),
    alternating; per round the ratio, and how far the two updates' weights and losses lie
    apart."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in MODES}
    weights: dict[str, dict[str, torch.Tensor]] = {}
    for round_ in range(rounds):
        for name in (list(MODES) if round_ % 2 == 0 else list(MODES)[::-1]):
            result, weights[name] = iteration(rollouts, policy, tasks, lanes[name],
                                              MODES[name][0])
            runs[name].append(result)
            print(f"iteration round {round_} {name:>6} (rollout lanes {lanes[name]}): "
                  f"{result['env_steps']} steps in {result['cpu_s']:.1f} s CPU "
                  f"({result['wall_s']:.1f} s wall; rollouts {result['rollout_cpu_s']:.1f}, "
                  f"targets {result['targets_cpu_s']:.2f}, update "
                  f"{result['update_cpu_s']:.1f}): {result['steps_per_cpu_s']:,.0f} steps/s, "
                  f"update {result['update_steps_per_cpu_s']:,.0f} steps/s of CPU", flush=True)
    old, new = runs["before"], runs["new"]
    return {"modes": {name: {"rollout_lanes": lanes[name], "update": what}
                      for name, (_, what) in MODES.items()},
            "runs": runs,
            "ratio_per_round": _ratios(old, new, "steps_per_cpu_s"),
            "update_ratio_per_round": _ratios(old, new, "update_steps_per_cpu_s"),
            "rollout_ratio_per_round": [a["rollout_cpu_s"] / b["rollout_cpu_s"]
                                        for a, b in zip(old, new, strict=True)],
            "max_weight_difference": max(
                float((weights["new"][name] - tensor).abs().max())
                for name, tensor in weights["before"].items()),
            "loss_relative_differences": {
                key: abs(new[0]["stats"][key] - old[0]["stats"][key]) / max(
                    abs(old[0]["stats"][key]), 1e-12) for key in old[0]["stats"]}}


def _ratios(old: list[dict[str, Any]], new: list[dict[str, Any]], key: str) -> list[float]:
    """Per round, new's figure over before's."""
    return [b[key] / a[key] for a, b in zip(old, new, strict=True)]


def own_iteration(rollouts: LocalRollouts, policy: PolicySnapshot,
                  tasks: list[EpisodeTask]) -> dict[str, Any]:
    """One iteration as this package's `Trainer.reinforce` runs it, whatever its version."""
    config = TrainConfig()
    lanes = getattr(config, "rollout_lanes", 1)  # 1: the code before lock-step rollouts
    cpu = time.process_time()
    episodes, rollout_cpu, _ = collect(rollouts, policy, tasks, lanes)
    if hasattr(Steps, "of"):
        steps = Steps.of(episodes, config.ppo)
    else:  # the code before `Steps.of`: the trainer's own helper
        steps = loop._steps(episodes, config)  # type: ignore[attr-defined]
    model = PolicyNet.from_state(policy.config, policy.state_dict)
    PPO(model, config.ppo).update(steps, torch.Generator().manual_seed(SEED))
    cpu_s = time.process_time() - cpu
    env_steps = sum(e.summary.env_steps for e in episodes if e.summary is not None)
    # the same digest from two trees: both took the same actions
    taken = repr([[int(a) for a in e.actions] for e in episodes])
    actions = hashlib.sha256(taken.encode()).hexdigest()
    return {"lanes": lanes, "env_steps": env_steps, "rollout_cpu_s": rollout_cpu,
            "cpu_s": cpu_s, "steps_per_cpu_s": env_steps / cpu_s, "actions": actions[:12]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: short episodes")
    parser.add_argument("--lanes", type=int, default=8, help="tasks per lock-step group")
    parser.add_argument("--episodes", type=int, default=2, help="arrival sequences (x4 tasks)")
    parser.add_argument("--horizon-h", type=float, default=0.25, help="hours of arrivals")
    parser.add_argument("--rounds", type=int, default=4, help="alternating rounds per mode")
    parser.add_argument("--iterations", type=int, default=2,
                        help="alternating rounds of whole iterations, old update and new")
    parser.add_argument("--before-rollouts", choices=("one-lane", "lockstep"),
                        default="one-lane", help="the rollouts of whole iterations' before "
                        "mode: one episode at a time (training before), or lock-step")
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument("--own-iterations", type=int, default=0, metavar="N",
                        help="only N whole iterations as this package's trainer runs them")
    parser.add_argument("--one-lane-only", action="store_true",
                        help="only the one-lane mode (to measure another tree's code)")
    args = parser.parse_args()
    set_torch_threads(1)
    horizon_h = 0.25 if args.quick else args.horizon_h
    cluster = load_cluster(CLUSTER)
    pool = load(POOL, LoaderSettings(seed=LOADER_SEED))
    tasks = loaded_episode_tasks(pool, cluster, seed=SEED, episodes=args.episodes, load=LOAD,
                                 horizon_s=horizon_h * 3600, phase="ppo", iteration=0,
                                 replays=REPLAYS)
    policy, model = snapshot(args.models)
    rollouts = LocalRollouts(cluster, SimSettings())
    for number in range(args.own_iterations):
        result = own_iteration(rollouts, policy, tasks)
        print(f"own iteration {number} ({model}; {result['lanes']} lanes): "
              f"{result['env_steps']} steps in {result['cpu_s']:.1f} s CPU (rollouts "
              f"{result['rollout_cpu_s']:.1f}): {result['steps_per_cpu_s']:,.0f} steps/s; actions "
              f"{result['actions']}",
              flush=True)
    if args.own_iterations:
        return
    modes = {"one_lane": 1} if args.one_lane_only else {"one_lane": 1, "lockstep": args.lanes}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in modes}
    kept: dict[str, list[Episode]] = {}
    for round_ in range(args.rounds):
        for name in (list(modes) if round_ % 2 == 0 else list(modes)[::-1]):
            episodes, cpu_s, wall_s = collect(rollouts, policy, tasks, modes[name])
            summaries = [e.summary for e in episodes if e.summary is not None]
            steps = sum(s.env_steps for s in summaries)
            events = sum(getattr(s, "events", 0) for s in summaries)  # 0: code before events
            decisions = sum(len(e) for e in episodes)
            runs[name].append({"cpu_s": cpu_s, "wall_s": wall_s, "env_steps": steps,
                               "decisions": decisions, "events": events,
                               "steps_per_cpu_s": steps / cpu_s,
                               "decisions_per_cpu_s": decisions / cpu_s,
                               "events_per_cpu_s": events / cpu_s,
                               "steps_per_wall_s": steps / wall_s})
            kept[name] = episodes
            print(f"round {round_} {name:>9} (lanes {modes[name]}): {steps} steps, "
                  f"{decisions} decisions, {events} events in {cpu_s:.1f} s CPU "
                  f"({wall_s:.1f} s wall): {steps / cpu_s:,.0f} steps/s, "
                  f"{events / cpu_s:,.0f} events/s of CPU", flush=True)
    best = {name: max(r["steps_per_cpu_s"] for r in results) for name, results in runs.items()}
    if args.one_lane_only:
        print(f"model: {model}; {len(tasks)} tasks; one lane best {best['one_lane']:,.0f} "
              "steps per CPU second")
        return
    ratio = best["lockstep"] / best["one_lane"]
    paired = [b["steps_per_cpu_s"] / a["steps_per_cpu_s"]
              for a, b in zip(runs["one_lane"], runs["lockstep"], strict=True)]
    agree = agreement(kept["one_lane"], kept["lockstep"])
    before_lanes = 1 if args.before_rollouts == "one-lane" else args.lanes
    whole = (iterations(rollouts, policy, tasks, {"before": before_lanes, "new": args.lanes},
                        args.iterations) if args.iterations else None)
    OUT.mkdir(exist_ok=True)
    (OUT / "training_throughput.json").write_text(json.dumps({
        "machine": platform.processor() or platform.machine(), "python":
        platform.python_version(), "torch": torch.__version__, "model": model, "pool": POOL,
        "cluster": CLUSTER, "load": LOAD, "horizon_h": horizon_h, "tasks": len(tasks),
        "lanes": args.lanes, "runs": runs, "best_steps_per_cpu_s": best,
        "ratio_best": ratio, "ratio_per_round": paired, "agreement": agree,
        "iterations": whole}, indent=1))
    print(f"model: {model}; {len(tasks)} tasks of {horizon_h:g} h on {CLUSTER}")
    print(f"lock-step / one lane, steps per CPU second: best {ratio:.2f}x, median of rounds "
          f"{float(np.median(paired)):.2f}x, per round {', '.join(f'{r:.2f}x' for r in paired)}")
    print(f"agreement: {agree['same_before_parting']} of {agree['steps']} steps the same "
          f"before parting; {agree['episodes_parted']} of {agree['episodes']} episodes parted; "
          f"largest log-probability difference {agree['max_log_prob_difference']:.2e}")
    if whole is not None:
        print("whole iteration, new / before, steps per CPU second: "
              f"{', '.join(f'{r:.2f}x' for r in whole['ratio_per_round'])}; the update alone "
              f"{', '.join(f'{r:.2f}x' for r in whole['update_ratio_per_round'])}; the "
              f"rollouts alone {', '.join(f'{r:.2f}x' for r in whole['rollout_ratio_per_round'])}"
              "; weights "
              f"within {whole['max_weight_difference']:.1e}; relative differences of the "
              "update's means: " + ", ".join(
                  f"{key} {value:.1e}" for key, value in
                  whole["loss_relative_differences"].items()))


if __name__ == "__main__":
    main()
