"""The learning curve PNG, drawn from a run's metrics.csv (its "eval" rows).

x: hours of training since the start of the run (behaviour cloning included); y: the greedy
policy's average JCT over the best heuristic's on the fixed evaluation episodes
(train.evaluation); below the line at 1 the policy beats the best heuristic.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from matplotlib.figure import Figure  # a bare Figure draws to files without any GUI backend

CURVE_FILE = "learning_curve.png"


def eval_points(metrics: Path) -> tuple[list[float], list[float], str]:
    """(hours, JCT ratios, best heuristic's name) of the evaluation rows of a metrics.csv."""
    hours, ratios, best = [], [], ""
    with metrics.open(newline="") as file:
        for row in csv.DictReader(file):
            if row["phase"] == "eval" and row["eval_ratio"]:
                hours.append(float(row["elapsed_s"]) / 3600.0)
                ratios.append(float(row["eval_ratio"]))
                best = row["eval_best_heuristic"]
    return hours, ratios, best


def plot_learning_curve(metrics: Path, out: Path) -> Path | None:
    """Write the curve to `out`; None (and nothing written) before the first evaluation."""
    hours, ratios, best = eval_points(metrics)
    if not hours:
        return None
    return draw_ratio_curve(hours, ratios, best,
                            "Learning curve on the fixed evaluation episodes", out)


def draw_ratio_curve(hours: Sequence[float], ratios: Sequence[float], best: str, title: str,
                     out: Path) -> Path:
    """The policy's JCT ratio to the best heuristic against hours of training, as a PNG."""
    figure = Figure(figsize=(7, 4))
    axes = figure.add_subplot()
    axes.plot(hours, ratios, marker="o", label="dagpilot (greedy)")
    axes.axhline(1.0, color="grey", linestyle="--", label=f"best heuristic ({best})")
    axes.set_xlabel("hours of training")
    axes.set_ylabel("average JCT / best heuristic's")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    partial = out.with_name(f".{out.name}.partial")
    figure.savefig(partial, dpi=100, format="png")
    partial.replace(out)  # a reader never sees half a PNG
    return out
