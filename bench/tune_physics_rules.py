"""Tune the `physics-rules` baseline's weights on the training pool: a small, bounded grid.

    .venv/bin/python bench/tune_physics_rules.py [--seeds 3] [--horizon-h 3] [--workers 1]

The pool is dagpilot's: the built-in mix generated with loader seed 1 (configs/
train-builtin.toml), on builtin:default, Poisson load 0.8, physics on; never the evaluation's
jobs (loader seed 0). Every weight set of GRID runs on the same paired seeds in one
`dagpilot bench` harness call, with kube-default beside them; the winner is the set with the
lowest mean average JCT over the seeds (ties: the earlier set in GRID order). Prints every
set's mean and the winner, for schedulers/physics_rules.py's TUNED and docs/SCHEDULERS.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from dagpilot.bench.harness import BenchConfig, run_benchmark
from dagpilot.core.config import load_settings
from dagpilot.schedulers import physics_rules
from dagpilot.schedulers.kube_default import build as kube_default
from dagpilot.workloads.arrivals import ArrivalSpec

TRAINING_SETTINGS = Path("configs/train-builtin.toml")
GRID = {  # 3 x 3 x 2 x 2 x 2 = 72 weight sets
    "network": (0.5, 1.0, 2.0),
    "pcie": (0.5, 1.0, 2.0),
    "mbpi": (0.0, 1.0),
    "storage": (0.0, 0.5),
    "page_cache": (0.0, 0.5),
}


def weight_sets() -> list[physics_rules.RuleWeights]:
    names = list(GRID)
    return [physics_rules.RuleWeights(**dict(zip(names, values, strict=True)))
            for values in itertools.product(*GRID.values())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--horizon-h", type=float, default=3.0)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    sets = weight_sets()
    registry: dict[str, Callable[[], Any]] = {
        f"set-{i}": partial(physics_rules.build, weights) for i, weights in enumerate(sets)}
    registry["kube-default"] = kube_default
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as out:
        config = BenchConfig(workloads=("builtin:mix",), cluster="builtin:default",
                             schedulers=tuple(registry), seeds=tuple(range(args.seeds)),
                             out_dir=Path(out), arrival=ArrivalSpec("poisson", 0.8),
                             physics=True, horizon_s=args.horizon_h * 3600.0, plots=False,
                             workers=args.workers)
        summary = run_benchmark(config, load_settings(TRAINING_SETTINGS), registry=registry)
    figures = summary.document["schedulers"]
    reference = figures["kube-default"]["avg_jct_s"]
    ranked = sorted(range(len(sets)), key=lambda i: (figures[f"set-{i}"]["avg_jct_s"], i))
    for i in ranked:
        jct = figures[f"set-{i}"]["avg_jct_s"]
        print(f"{jct / 3600:7.3f} h  {jct / reference:6.3f} x kube-default  "
              f"{dataclasses.asdict(sets[i])}")
    best = sets[ranked[0]]
    print(f"kube-default {reference / 3600:.3f} h; {len(sets)} sets x {args.seeds} seeds, "
          f"{args.horizon_h:g} h of arrivals, in {time.monotonic() - started:.0f} s")
    print(f"best: {best}")


if __name__ == "__main__":
    main()
