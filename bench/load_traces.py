"""How long loading every shared trace takes on one core, against reading the raw bytes.

    POLARS_MAX_THREADS=1 taskset -c 0 .venv/bin/python bench/load_traces.py [--traces DIR]
        [--only DATASET ...]

The baseline in the same run is the cost of only decompressing and splitting the same files
(no parsing into Jobs), so the ratio says what the loaders add on this machine. CPU seconds
are printed beside wall seconds: on a busy machine they move less with the load. To compare two
versions of the loaders, run this script alternately with `PYTHONPATH=<other checkout>/src`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import time
from pathlib import Path

from dagpilot.workloads import load

DATASETS = {
    "wfinstances": "wfformat:{t}/wfinstances",
    "cws-k8s-nextflow": "cws:{t}/cws-k8s-nextflow",
    "alibaba-v2018-dags": "alibaba:{t}/alibaba-v2018-dags",
    "decima-tpch": "tpch:{t}/decima-tpch/tpch_decima.json.gz",
    "argo-examples-dags": "argo:{t}/argo-examples-dags/argo_example_dags.json",
}


def raw_read_seconds(folder: Path) -> float:
    """Decompress every data file and split it into lines: the floor any loader pays."""
    start = time.perf_counter()
    for path in sorted(folder.rglob("*")):
        if path.suffix == ".gz":
            gzip.decompress(path.read_bytes()).split(b"\n")
        elif path.suffix in (".csv", ".json"):
            path.read_bytes().split(b"\n")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    default = Path(__file__).resolve().parent.parent.parent / "shared" / "traces"
    parser.add_argument("--traces", type=Path, default=default)
    parser.add_argument("--out", type=Path, default=Path("bench/out/load_traces.json"))
    parser.add_argument("--only", nargs="+", choices=list(DATASETS), default=list(DATASETS))
    args = parser.parse_args()
    rows = []
    for name in args.only:
        raw = raw_read_seconds(args.traces / name)
        start, start_cpu = time.perf_counter(), time.process_time()
        jobs = load(DATASETS[name].format(t=args.traces))
        seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        tasks = sum(len(job.tasks) for job in jobs)
        pods = sum(job.instances for job in jobs)
        rows.append({"dataset": name, "jobs": len(jobs), "tasks": tasks, "pods": pods,
                     "load_s": round(seconds, 3), "load_cpu_s": round(cpu, 3),
                     "raw_read_s": round(raw, 3),
                     "ratio_to_raw": round(seconds / raw, 1) if raw else None})
        print(f"{name:22s} {len(jobs):7d} jobs {tasks:8d} tasks {seconds:7.2f} s "
              f"({cpu:.2f} CPU s; raw read {raw:.2f} s)")
    total = sum(row["load_s"] for row in rows)
    total_cpu = sum(row["load_cpu_s"] for row in rows)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tasks = sum(row["tasks"] for row in rows)
    print(f"total {total:.2f} s ({total_cpu:.2f} CPU s), {tasks} tasks, peak RSS "
          f"{peak_mib:.0f} MiB, load average {os.getloadavg()[0]:.1f}, "
          f"POLARS_MAX_THREADS={os.environ.get('POLARS_MAX_THREADS', 'unset')}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"datasets": rows, "total_s": total, "total_cpu_s": total_cpu,
                                    "peak_rss_mib": round(peak_mib)}, indent=2))


if __name__ == "__main__":
    main()
