"""Check that a loader change leaves the Jobs of the shared traces exactly as they were.

    .venv/bin/python bench/loaded_jobs_unchanged.py save /tmp/jobs-before.pickle   # old code
    .venv/bin/python bench/loaded_jobs_unchanged.py compare /tmp/jobs-before.pickle  # new code

`save` pickles the Jobs of every data set; `compare` loads them again and requires equal
dataclasses and equal reprs (which also tells 1 from 1.0), naming the first job that differs.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

from dagpilot.core.types import Job
from dagpilot.workloads import load

DATASETS = {
    "wfinstances": "wfformat:{t}/wfinstances",
    "cws-k8s-nextflow": "cws:{t}/cws-k8s-nextflow",
    "decima-tpch": "tpch:{t}/decima-tpch/tpch_decima.json.gz",
    "argo-examples-dags": "argo:{t}/argo-examples-dags/argo_example_dags.json",
    "builtin-mix": "builtin:mix:200",
}


def load_all(traces: Path, names: list[str]) -> dict[str, list[Job]]:
    return {name: load(DATASETS[name].format(t=traces)) for name in names}


def first_difference(before: list[Job], after: list[Job]) -> str | None:
    if len(before) != len(after):
        return f"{len(before)} jobs before, {len(after)} after"
    for old, new in zip(before, after, strict=True):
        if old != new or repr(old) != repr(new):
            for index, (old_task, new_task) in enumerate(zip(old.tasks, new.tasks, strict=False)):
                if repr(old_task) != repr(new_task):
                    return (f"job {old.id}, task {index}:\n  before {old_task!r}\n"
                            f"  after  {new_task!r}")
            return f"job {old.id}: {old!r:.300} != {new!r:.300}"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("action", choices=("save", "compare"))
    parser.add_argument("pickle", type=Path)
    default = Path(__file__).resolve().parent.parent.parent / "shared" / "traces"
    parser.add_argument("--traces", type=Path, default=default)
    parser.add_argument("--only", nargs="*", choices=list(DATASETS), default=list(DATASETS))
    args = parser.parse_args()
    jobs = load_all(args.traces, args.only)
    if args.action == "save":
        args.pickle.write_bytes(pickle.dumps(jobs, protocol=pickle.HIGHEST_PROTOCOL))
        print(f"saved {sum(map(len, jobs.values()))} jobs of {', '.join(jobs)}")
        return
    saved = pickle.loads(args.pickle.read_bytes())
    failed = False
    for name, after in jobs.items():
        difference = first_difference(saved[name], after)
        tasks = sum(len(job.tasks) for job in after)
        print(f"{name:20s} {len(after):6d} jobs {tasks:8d} tasks: "
              f"{'identical' if difference is None else 'DIFFERENT: ' + difference}")
        failed |= difference is not None
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
