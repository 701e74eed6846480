"""Every baseline on the shared real traces, physics on and off, as one markdown table.

    nice -n 10 .venv/bin/python bench/real_traces.py [--traces DIR] [--seeds 2] [--workers 1]
        [--datasets wfinstances,alibaba,tpch,cws] [--physics on,off]

Each dataset runs through the real `dagpilot bench` command (printed before it runs) with
Poisson arrivals at load 0.8 of the busiest resource on `builtin:default`; the table of average
JCT and makespan, with their ratios to kube-default and to the lower bound, is written to
`bench/out/real_traces/real_traces.md` for docs/BENCHMARKS.md. The table holds every dataset
whose summaries are in `bench/out/real_traces/`, so datasets can be run one call at a time.

Poisson arrivals take the jobs of the pool in its order. The Alibaba file lists its 6,600 DAGs
by job, and its job sizes are heavy-tailed (median 5 instances, ten of 41,600-176,000): its
first ten jobs hold 191,000 instances, which would be every arrival of a short horizon. The
script therefore writes the file's jobs in a seeded random order (SHUFFLE_SEED) to
`bench/out/real_traces/alibaba-set_0-shuffled.csv`: the arrivals are a random sample of the
trace, and the rate is still set on the mean job of all 6,600.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# Every baseline, physics-rules among them, and the shipped policy (trained on some of these
# families: docs/TRAINING.md names the split; "The policy on held-out real-trace families" in
# docs/BENCHMARKS.md is its judgement).
SCHEDULERS = ("kube-default,fifo,random,sjf-cp,heft,tetris,cws-rank-min-rr,load-aware,"
              "physics-rules,dagpilot")
OUT_ROOT = Path("bench/out/real_traces")
SHUFFLE_SEED = 0
ALIBABA_FILE = "alibaba-v2018-dags/set_0_6600_dags.csv.gz"


def shuffled_alibaba(traces: Path) -> str:
    """The Alibaba file with its jobs (all rows of each) in a seeded random order."""
    text = gzip.decompress((traces / ALIBABA_FILE).read_bytes()).decode()
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader)
    column = header.index("job_name")
    rows_by_job: dict[str, list[list[str]]] = {}
    for row in reader:
        rows_by_job.setdefault(row[column], []).append(row)
    jobs = list(rows_by_job)
    order = np.random.default_rng(SHUFFLE_SEED).permutation(len(jobs))
    out = OUT_ROOT / "alibaba-set_0-shuffled.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        for index in order:
            writer.writerows(rows_by_job[jobs[index]])
    return f"alibaba:{out}"


@dataclass(frozen=True)
class Dataset:
    title: str
    horizon: str  # short: 20 runs (dagpilot's the longest) take minutes to half an hour of CPU
    spec: Callable[[Path], str]


DATASETS = {
    "wfinstances": Dataset("WfInstances", "20m", lambda t: f"wfformat:{t}/wfinstances"),
    "alibaba": Dataset("Alibaba DAGs", "10m", shuffled_alibaba),
    "tpch": Dataset("TPC-H", "2m", lambda t: f"tpch:{t}/decima-tpch/tpch_decima.json.gz"),
    "cws": Dataset("CWS nf-core", "10m",
                   lambda t: f"cws:{t}/cws-k8s-nextflow/traces/rnaseq.csv.gz"),
}


def command(spec: str, horizon: str, physics: str, out: Path,
            args: argparse.Namespace) -> list[str]:
    return [sys.executable, "-m", "dagpilot.cli", "bench", "--workload", spec,
            "--cluster", "builtin:default", "--schedulers", SCHEDULERS,
            "--seeds", str(args.seeds), "--arrival", "poisson", "--load", "0.8",
            "--horizon", horizon, "--physics", physics, "--workers", str(args.workers),
            "--out", str(out)]


def rows(dataset: str, physics: str, summary: dict[str, object]) -> list[str]:
    schedulers = summary["schedulers"]
    ratios = summary["ratios"]
    assert isinstance(schedulers, dict) and isinstance(ratios, dict)
    lines = []
    for name, figures in schedulers.items():
        to_ref = ratios.get(f"{name}/kube-default", {}).get("avg_jct")
        ref = f"{to_ref['mean']:.2f} [{to_ref['ci95'][0]:.2f}, {to_ref['ci95'][1]:.2f}]" \
            if to_ref else "1"
        lines.append(
            f"| {dataset} | {physics} | {name} | {figures['avg_jct_s'] / 60:.1f} | {ref} | "
            f"{figures['avg_jct_to_bound']:.2f} | {figures['makespan_s'] / 3600:.2f} | "
            f"{figures['makespan_to_bound']:.2f} | {figures['oom_kills']:.0f} | "
            f"{figures['failed_jobs'] + figures['unfinished_jobs']:.0f} |")
    return lines


def table() -> list[str]:
    """The rows of every dataset and physics setting whose summary is in OUT_ROOT."""
    lines = ["| dataset | physics | scheduler | avg JCT min | JCT ÷ kube-default [95 % CI] | "
             "JCT ÷ bound | makespan h | makespan ÷ bound | OOM kills | failed jobs |",
             "|---|---|---|---:|---|---:|---:|---:|---:|---:|"]
    for key, dataset in DATASETS.items():
        for physics in ("on", "off"):
            summary = OUT_ROOT / f"{key}-{physics}" / "summary.json"
            if summary.is_file():
                lines += rows(dataset.title, physics, json.loads(summary.read_text()))
    return lines


def children_cpu_s() -> float:
    """CPU seconds used by finished child processes: the wall time depends on the machine's load."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    default = Path(__file__).resolve().parent.parent.parent / "shared" / "traces"
    parser.add_argument("--traces", type=Path, default=default)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--datasets", default=",".join(DATASETS),
                        help=f"comma-separated, from {', '.join(DATASETS)}")
    parser.add_argument("--physics", default="on,off", help="comma-separated: on, off")
    args = parser.parse_args()
    chosen = [key.strip() for key in args.datasets.split(",") if key.strip()]
    unknown = [key for key in chosen if key not in DATASETS]
    if unknown:
        parser.error(f"unknown dataset {', '.join(unknown)}; known: {', '.join(DATASETS)}")
    settings = [value.strip() for value in args.physics.split(",") if value.strip()]
    if not settings or any(value not in ("on", "off") for value in settings):
        parser.error(f"--physics takes on, off or both, not {args.physics!r}")
    for key in chosen:
        dataset = DATASETS[key]
        spec = dataset.spec(args.traces)
        for physics in settings:
            argv = command(spec, dataset.horizon, physics, OUT_ROOT / f"{key}-{physics}", args)
            print("$", " ".join(argv[2:]).replace(str(args.traces), "../shared/traces"),
                  flush=True)
            start, cpu = time.perf_counter(), children_cpu_s()
            subprocess.run(argv, check=True)
            print(f"{dataset.title}, physics {physics}: {time.perf_counter() - start:.0f} s "
                  f"wall, {children_cpu_s() - cpu:.0f} s CPU", flush=True)
    lines = table()
    (OUT_ROOT / "real_traces.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
