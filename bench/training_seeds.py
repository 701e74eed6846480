"""The spread of training seeds: each run's best model against the baselines on the same runs.

    .venv/bin/python bench/training_seeds.py runs/real-0 runs/real-1 runs/real-2 \
        [--workload pool:configs/pools/unseen-real.toml] [--seeds 3] [--horizon 10m]

`dagpilot bench` resolves `dagpilot` as the current model of ./models. For each training run
this publishes the run's `best/` into a scratch registry, in a scratch working directory that
sees the repository's `configs/` and `../shared` (pool members are read from the working
directory), and runs the same `dagpilot bench` there: kube-default, load-aware, tetris,
physics-rules and `dagpilot`, physics on, Poisson load 0.8 on builtin:default, paired seeds.
Writes bench/out/training_seeds.md with each run's paired ratios to kube-default and to the
best of the baselines.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from dagpilot.bench.stats import bracketed
from dagpilot.bench.summary import paired_in

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench/out/training_seeds.md"
BASELINES = ("kube-default", "load-aware", "tetris", "physics-rules")


def scratch_tree(root: Path) -> Path:
    """root/work with configs/ and ../shared as the repository sees them."""
    work = root / "work"
    work.mkdir()
    (work / "configs").symlink_to(REPO / "configs")
    (root / "shared").symlink_to((REPO.parent / "shared").resolve())
    return work


def bench_run(run: Path, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        work = scratch_tree(Path(scratch))
        subprocess.run([sys.executable, "-m", "dagpilot.cli", "models", "publish",
                        str((run / "best").resolve()), "--root", str(work / "models"),
                        "--version", f"seed-{run.name}"], check=True, cwd=work)
        argv = [sys.executable, "-m", "dagpilot.cli", "bench", "--workload", args.workload,
                "--cluster", "builtin:default", "--schedulers", ",".join((*BASELINES,
                                                                          "dagpilot")),
                "--seeds", str(args.seeds), "--arrival", "poisson", "--load", "0.8",
                "--horizon", args.horizon, "--physics", "on", "--workers", str(args.workers),
                "--out", str(work / "out")]
        print("$", " ".join(argv[2:]), f"(in a scratch tree, models: {run}/best)", flush=True)
        subprocess.run(argv, check=True, cwd=work)
        summary: dict[str, Any] = json.loads((work / "out" / "summary.json").read_text())
        return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--workload", default="pool:configs/pools/unseen-real.toml")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--horizon", default="10m")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    lines = [f"{args.workload}, builtin:default, physics on, Poisson load 0.8, "
             f"{args.horizon} of arrivals, seeds 0..{args.seeds - 1}.", "",
             "| run | selected (iteration: training-pool ratio) | dagpilot ÷ kube-default | "
             "best baseline | dagpilot ÷ best baseline |", "|---|---|---|---|---|"]
    for run in args.runs:
        summary = bench_run(run, args)
        figures = summary["schedulers"]
        best = min(BASELINES, key=lambda name: figures[name]["avg_jct_s"])
        selected = json.loads((run / "best" / "metadata.json").read_text())["selected"]
        to_ref, to_best = (paired_in(summary, "dagpilot", other, "avg_jct_s")
                           for other in ("kube-default", best))
        lines.append(f"| {run.name} | {selected['iteration']}: {selected['ratio']:.4f} | "
                     f"{bracketed(to_ref)} | {best} | {bracketed(to_best)} |")
        print(lines[-1], flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
