"""Every baseline on the shared real traces, physics on and off, as one markdown table.

    .venv/bin/python bench/real_traces.py [--traces DIR] [--seeds 3] [--workers 2]

Each dataset runs through the real `dagpilot bench` command (printed before it runs) with
Poisson arrivals at load 0.8 of the busiest resource on `builtin:default`; the table of average
JCT and makespan, with their ratios to kube-default and to the lower bound, is written to
`bench/out/real_traces.md` for docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

SCHEDULERS = "kube-default,fifo,random,sjf-cp,heft,tetris,cws-rank-min-rr,load-aware"
DATASETS = {
    "WfInstances": ("wfformat:{t}/wfinstances", "20m"),
    "Alibaba DAGs": ("alibaba:{t}/alibaba-v2018-dags/set_0_6600_dags.csv.gz", "10m"),
    "TPC-H": ("tpch:{t}/decima-tpch/tpch_decima.json.gz", "10m"),
    "CWS nf-core": ("cws:{t}/cws-k8s-nextflow/traces/rnaseq.csv.gz", "20m"),
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    default = Path(__file__).resolve().parent.parent.parent / "shared" / "traces"
    parser.add_argument("--traces", type=Path, default=default)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated dataset names")
    args = parser.parse_args()
    out_root = Path("bench/out/real_traces")
    table = ["| dataset | physics | scheduler | avg JCT min | JCT ÷ kube-default [95 % CI] | "
             "JCT ÷ bound | makespan h | makespan ÷ bound | OOM kills | failed jobs |",
             "|---|---|---|---:|---|---:|---:|---:|---:|---:|"]
    chosen = [d for d in DATASETS if not args.only or d in args.only.split(",")]
    for dataset in chosen:
        spec, horizon = DATASETS[dataset]
        for physics in ("on", "off"):
            out = out_root / f"{dataset.split()[0].lower()}-{physics}"
            argv = command(spec.format(t=args.traces), horizon, physics, out, args)
            print("$", " ".join(argv[2:]).replace(str(args.traces), "../shared/traces"),
                  flush=True)
            subprocess.run(argv, check=True)
            table += rows(dataset, physics, json.loads((out / "summary.json").read_text()))
    (out_root / "real_traces.md").write_text("\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
