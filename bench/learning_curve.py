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
from matplotlib.figure import Figure

from dagpilot.bench.offered_load import cpu_equivalent_cores
from dagpilot.clusters import load_cluster
from dagpilot.core.config import LoaderSettings, SimSettings
from dagpilot.policy import PolicyConfig, PolicyNet
from dagpilot.state import Normaliser
from dagpilot.train.config import DEFAULT_TEACHERS
from dagpilot.train.evaluation import Evaluator
from dagpilot.train.scenarios import EpisodeTask
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals

OUT = Path("bench/out")
POOL = "builtin:mix:60"
HEURISTICS = (*DEFAULT_TEACHERS, "load-aware", "random")


def episodes(seeds: int, horizon_s: float, startup_s: float) -> tuple[list[EpisodeTask], str]:
    cluster = load_cluster("builtin:default")
    pool = load(POOL, LoaderSettings(seed=1))
    cores = cpu_equivalent_cores(pool, cluster, startup_s)
    tasks = []
    for seed in range(seeds):
        jobs = assign_arrivals(pool, ArrivalSpec("poisson", 0.8), cores,
                               np.random.default_rng((seed, 77)), horizon_s)
        tasks.append(EpisodeTask(seed, 0, tuple(jobs), seed, seed))
    return tasks, "builtin:default"


def checkpoint(folder: Path) -> tuple[PolicyNet, Normaliser]:
    config = json.loads((folder / "config.json").read_text())
    state = torch.load(folder / "weights.pt", weights_only=True)
    model = PolicyNet.from_state(PolicyConfig.from_dict(config["policy"]), state)
    return model, Normaliser.from_json((folder / "normaliser.json").read_text())


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
    tasks, cluster_spec = episodes(args.seeds, args.horizon_h * 3600, sim.startup_median_s)
    evaluator = Evaluator(tasks, HEURISTICS, load_cluster(cluster_spec), sim)
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
    figure = Figure(figsize=(7, 4))
    axes = figure.add_subplot()
    axes.plot([p["hours"] for p in points], [p["ratio"] for p in points], marker="o",
              label="dagpilot checkpoints (greedy)")
    axes.axhline(1.0, color="grey", linestyle="--", label=f"best heuristic ({evaluator.best})")
    axes.set_xlabel("hours of training")
    axes.set_ylabel("average JCT / best heuristic's")
    axes.set_title(f"Loaded episodes: load 0.8, {args.horizon_h:g} h of arrivals, "
                   f"{args.seeds} seeds")
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(OUT / "learning_curve.png", dpi=100)
    print(json.dumps(heuristics), evaluator.best)


if __name__ == "__main__":
    main()
