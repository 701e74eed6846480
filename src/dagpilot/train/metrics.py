"""The training log: one CSV row per iteration, flushed as it is written, so an interrupted
run keeps every finished iteration's figures."""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from pathlib import Path

COLUMNS = ("phase", "iteration", "stage", "jobs_per_episode", "episodes", "steps", "env_steps",
           "mean_return", "avg_jct_s", "unfinished_jobs", "oom_kills", "policy_loss",
           "value_loss", "entropy", "approx_kl", "clip_fraction", "bc_loss", "bc_accuracy",
           "rollout_s", "update_s", "env_steps_per_s", "elapsed_s", "eval_jct_s",
           "eval_best_heuristic", "eval_best_heuristic_jct_s", "eval_ratio", "eval_horizon_h")


class MetricsLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as file:
            csv.writer(file).writerow(COLUMNS)

    def write(self, row: Mapping[str, float | int | str]) -> None:
        unknown = set(row) - set(COLUMNS)
        if unknown:
            raise ValueError(f"unknown metric columns: {sorted(unknown)}")
        with self.path.open("a", newline="") as file:
            csv.writer(file).writerow([_text(row.get(column, "")) for column in COLUMNS])


def _text(value: float | int | str) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6g}"
    return str(value)
