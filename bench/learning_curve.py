"""The learning curve under load: each checkpoint of a training run against the heuristics.

    .venv/bin/python bench/learning_curve.py RUN_DIR [--seeds 3] [--horizon-h 3]

`dagpilot train` evaluates its checkpoints on a few short episodes of the curriculum's last
stage, which barely load the cluster. This script replays each checkpoint of RUN_DIR (greedy,
as served) on loaded episodes instead: the training pool (`builtin:mix:60` with loader seed 1,
as the shipped model's run; never the benchmark's seed-0 jobs) arriving as a Poisson process
at load 0.8 of the busiest resource for `--horizon-h` hours, one episode per seed, and every
candidate heuristic on the same episodes. Each checkpoint's point is the mean over episodes of
its average JCT / the best heuristic's, at the hours of training its metrics.csv row records.
Writes bench/out/learning_curve.json and bench/out/learning_curve.png.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np
import torch

from dagpilot.agent import agent_from_files
from dagpilot.bench.offered_load import cpu_equivalent_cores
from dagpilot.clusters import load_cluster
from dagpilot.core.config import LoaderSettings, SimSettings
from dagpilot.core.types import Cluster
from dagpilot.policy import PolicyNet
from dagpilot.state import Normaliser
from dagpilot.train.config import DEFAULT_TEACHERS
from dagpilot.train.curve import draw_ratio_curve
from dagpilot.train.evaluation import Evaluator
from dagpilot.train.scenarios import EpisodeTask
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals

OUT = Path("bench/out")
POOL = "builtin:mix:60"
HEURISTICS = (*DEFAULT_TEACHERS, "load-aware", "random")


def episodes(cluster: Cluster, seeds: int, horizon_s: float,
             startup_s: float) -> list[EpisodeTask]:
    """One Poisson arrival sequence of the training pool per seed (its own random stream)."""
    pool = load(POOL, LoaderSettings(seed=1))
    cores = cpu_equivalent_cores(pool, cluster, startup_s)
    tasks = []
    for seed in range(seeds):
        jobs = assign_arrivals(pool, ArrivalSpec("poisson", 0.8), cores,
                               np.random.default_rng((seed, 77)), horizon_s)
        tasks.append(EpisodeTask(seed, 0, tuple(jobs), seed, seed))
    return tasks


def checkpoint(folder: Path) -> tuple[PolicyNet, Normaliser]:
    """A checkpoint folder's network and normaliser, built as the registry's loader builds
    them (checkpoints are not in a registry, so there are no checksums to check)."""
    agent = agent_from_files(torch.load(folder / "weights.pt", weights_only=True),
                             json.loads((folder / "normaliser.json").read_text()),
                             json.loads((folder / "config.json").read_text()))
    return agent.model, agent.normaliser


def hours_at(metrics: Path) -> dict[int, float]:
    """Hours of training at each evaluation row (the checkpoints' iterations)."""
    with metrics.open(newline="") as file:
        return {int(row["iteration"]): float(row["elapsed_s"]) / 3600
                for row in csv.DictReader(file) if row["phase"] == "eval"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run", type=Path)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--horizon-h", type=float, default=3.0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    sim = SimSettings()
    cluster = load_cluster("builtin:default")
    tasks = episodes(cluster, args.seeds, args.horizon_h * 3600, sim.startup_median_s)
    evaluator = Evaluator(tasks, HEURISTICS, cluster, sim)
    hours = hours_at(args.run / "metrics.csv")
    points: list[dict[str, float]] = []
    for folder in sorted((args.run / "checkpoints").iterdir()):
        iteration = int(folder.name.split("-")[1])
        row = evaluator.evaluate(*checkpoint(folder))
        points.append({"iteration": iteration, "hours": hours.get(iteration, float("nan")),
                       "ratio": row.ratio, "policy_jct_s": row.policy_jct_s})
        print(f"{folder.name}: {row.ratio:.3f} of {row.best_heuristic}", flush=True)
    heuristics = {name: float(jct.mean()) for name, jct in evaluator.heuristic_jct_s.items()}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "learning_curve.json").write_text(json.dumps(
        {"best_heuristic": evaluator.best, "heuristic_jct_s": heuristics, "points": points},
        indent=2) + "\n")
    draw_ratio_curve([p["hours"] for p in points], [p["ratio"] for p in points],
                     evaluator.best, f"Loaded episodes: load 0.8, {args.horizon_h:g} h of "
                     f"arrivals, {args.seeds} seeds", OUT / "learning_curve.png")
    print(json.dumps(heuristics), evaluator.best)


if __name__ == "__main__":
    main()
