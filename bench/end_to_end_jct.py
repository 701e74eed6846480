"""End-to-end JCT on the sandbox with its hardware twin: dagpilot against the real
kube-scheduler, and the simulator's prediction of both beside them.

    NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" \\
        .venv/bin/python bench/end_to_end_jct.py [--jobs 10] [--load 0.8] [--seed 0] \\
        [--time-scale 100] [--out bench/out/end_to_end_jct.json]

One sandbox (`--cluster`, twin on at `--time-scale` simulated seconds per wall second, so
placement changes runtimes through the simulator's physics). The stream: the built-in mix's
jobs with at most `--max-pods` pods and a critical path of at most `--max-critical-s` (Spark
ETL's 100-357 pods of ~50 s each would measure the control plane, not placement), Poisson
arrivals at `--load` as `dagpilot bench` draws them (seed `--seed`), the first `--jobs`.
Each job is rendered as an Argo Workflow (live/workflow_manifest; each pod retried after an
OOM kill as often as the simulator retries one) and submitted through the signed endpoint of
`dagpilot serve webhook` (a process, with the shipped RBAC and MutatingWebhookConfiguration,
as tests/live/serve sets it up) at its arrival time / scale.

Run 1: a namespace labelled `dagpilot.io/managed`, so the API server's call of the webhook sets
schedulerName dagpilot, and `dagpilot serve scheduler` (a process, the registry's current
model, the sandbox's Prometheus for the twin's signals) binds every pod. Run 2: the same
stream into a namespace not labelled: the webhook leaves schedulerName unset and the sandbox's
kube-scheduler binds them. JCT per Workflow from the API server (creationTimestamp to
status.finishedAt, whole seconds) times the scale. The prediction: the simulator on the same
jobs, arrival times and cluster with the twin's physics (bench/end_to_end.py), dagpilot and
kube-default.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from dagpilot.bench import end_to_end
from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.core.types import Job
from dagpilot.live.workflow_manifest import argo_name, workflow_manifest
from dagpilot.sandbox import components, launcher, rest
from dagpilot.sandbox.layout import Layout
from dagpilot.serve.explanation import DECISION_ANNOTATION
from dagpilot.serve.submit_client import submit
from dagpilot.workloads import load

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the live tests' setup
from tests.live.kube import WORKFLOWS, items, namespace
from tests.live.serve.setup import SandboxCa, wait_mutating, webhook_serving
from tests.serve.helpers import HOUR, key, write_keys

REPO = Path(__file__).resolve().parent.parent
WORKLOAD = "builtin:mix"
MANAGED = {"dagpilot.io/managed": "true"}
SCHEDULERS = {"dagpilot": "dagpilot", "kube-scheduler": "kube-default"}  # live: sim name
POLL_S = 2.0
WORKFLOW_LABEL = "workflows.argoproj.io/workflow"


@contextmanager
def serve_scheduler(layout: Layout, prometheus_port: int, deadline_s: float = 180
                    ) -> Iterator[None]:
    """`dagpilot serve scheduler` as its own process, until the block ends; ready once it has
    printed its model line (its live view synced, the model loaded)."""
    log = layout.logs / "bench-serve-scheduler.log"
    with log.open("wb") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "dagpilot.cli", "serve", "scheduler",
             "--kubeconfig", str(layout.kubeconfig), "--models", str(REPO / "models"),
             "--no-leader-elect", "--metrics-port", "0", "--metrics-address", "127.0.0.1",
             "--prometheus", f"http://127.0.0.1:{prometheus_port}"],
            stdout=out, stderr=subprocess.STDOUT, cwd=REPO)
    try:
        deadline = time.monotonic() + deadline_s
        while "metrics on" not in log.read_text(errors="replace"):
            if child.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"dagpilot serve scheduler did not start: "
                                 f"{log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.5)  # polling a process's readiness, with a deadline
        yield
        if child.poll() is not None:
            raise SystemExit(f"dagpilot serve scheduler exited during the run: "
                             f"{log.read_text(errors='replace')[-2000:]}")
    finally:
        child.terminate()
        try:
            child.wait(30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


class Submitter:
    """The signed endpoint's client (`dagpilot submit`'s), with a key and a client
    certificate made here from the sandbox's CA."""

    def __init__(self, folder: Path, pki: Path) -> None:
        self.folder = folder
        self.cert, self.key = SandboxCa(pki).issue(folder, "dagpilot-submit")
        self.ca = pki / "ca.crt"
        start = datetime.datetime.now(datetime.UTC) - HOUR
        self.keys = write_keys(folder / "keys.yaml", key(f"bench-{uuid.uuid4().hex[:6]}",
                                                         start=start))

    def send(self, port: int, manifest: dict[str, Any]) -> str:
        path = self.folder / f"{manifest['metadata']['name']}.yaml"
        path.write_text(yaml.safe_dump(manifest, sort_keys=False))
        _, name = submit(path, f"https://127.0.0.1:{port}", self.keys, cert=self.cert,
                         key=self.key, ca=self.ca)
        return name


def rendered(job: Job) -> dict[str, Any]:
    """The job's Workflow; each pod retried after an OOM kill as often as the simulator
    retries one (SimSettings.oom_retry_limit, Argo's retryStrategy on the pod templates)."""
    manifest = workflow_manifest(job, name=argo_name(job.id))
    retries = {"limit": str(SimSettings().oom_retry_limit), "retryPolicy": "OnFailure"}
    for template in manifest["spec"]["templates"]:
        if "container" in template:
            template["retryStrategy"] = retries
    return manifest


def run_stream(api: rest.Endpoint, submitter: Submitter, pki: Path, jobs: list[Job], *,
               managed: bool, time_scale: float, budget_s: float) -> dict[str, Any]:
    """The stream through the signed endpoint into a fresh namespace, paced at the arrival
    times / scale; every Workflow's outcome once all have ended (or the budget is spent)."""
    with namespace(api, "e2e") as ns:
        if managed:
            rest.request(api, "PATCH", f"/api/v1/namespaces/{ns}",
                         {"metadata": {"labels": MANAGED}})
        with webhook_serving(api, ns, submitter.folder, pki, submitter.keys) as (port,
                                                                                 kubeconfig):
            if managed:
                wait_mutating(api, ns, kubeconfig)
            started = time.monotonic()
            lags = []
            for job in jobs:
                wait = started + job.arrival_s / time_scale - time.monotonic()
                if wait > 0:
                    time.sleep(wait)  # pacing the arrivals, not waiting on a result
                lags.append(time.monotonic() - started - job.arrival_s / time_scale)
                submitter.send(port, rendered(job))
            workflows = _until_ended(api, ns, len(jobs), started + budget_s)
            pods = items(api, f"/api/v1/namespaces/{ns}/pods")
        wall_s = time.monotonic() - started
    by_name = {w["metadata"]["name"]: w for w in workflows}
    mine = {job.id: by_name.get(argo_name(job.id), {}) for job in jobs}
    return {"namespace": ns, "wall_s": round(wall_s, 1),
            "max_submit_lag_s": round(max(lags), 2),
            "jcts": {i: end_to_end.workflow_jct_s(w, time_scale) for i, w in mine.items()},
            "outcomes": {i: {"phase": (w.get("status") or {}).get("phase"),
                             "message": (w.get("status") or {}).get("message")}
                         for i, w in mine.items()},
            "pods": _pod_facts(pods)}


def _until_ended(api: rest.Endpoint, ns: str, count: int, deadline: float
                 ) -> list[dict[str, Any]]:
    while True:
        listing = items(api, WORKFLOWS.format(ns=ns))
        ended = [w for w in listing
                 if (w.get("status") or {}).get("phase") in end_to_end.DONE_PHASES]
        if len(ended) == count or time.monotonic() > deadline:
            return listing
        time.sleep(POLL_S)  # polling the API server for the Workflows' ends, with a deadline


def _pod_facts(pods: list[dict[str, Any]]) -> dict[str, Any]:
    """Who scheduled the run's pods, and how dagpilot decided (model or fallback)."""
    sources: Counter[str] = Counter()
    for pod in pods:
        note = (pod["metadata"].get("annotations") or {}).get(DECISION_ANNOTATION)
        if note:
            sources[json.loads(note).get("source", "?")] += 1
    return {"count": len(pods),
            "scheduler_names": dict(Counter(p["spec"].get("schedulerName", "") for p in pods)),
            "phases": dict(Counter((p.get("status") or {}).get("phase", "") for p in pods)),
            "oom_killed": sum((p.get("status") or {}).get("reason") == "OOMKilled"
                              for p in pods),
            "nodes": dict(sorted(Counter(p["spec"].get("nodeName") or "" for p in pods).items())),
            "by_workflow": _placements(pods),
            "decision_sources": dict(sources)}


def _placements(pods: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """The nodes each Workflow's pods ran on (every attempt)."""
    nodes: dict[str, Counter[str]] = {}
    for pod in pods:
        workflow = (pod["metadata"].get("labels") or {}).get(WORKFLOW_LABEL, "")
        nodes.setdefault(workflow, Counter())[pod["spec"].get("nodeName") or ""] += 1
    return {name: dict(sorted(count.items())) for name, count in sorted(nodes.items())}


def measure(cluster_spec: str, jobs: list[Job], args: argparse.Namespace,
            directory: Path) -> dict[str, dict[str, Any]]:
    """Both runs on one sandbox, dagpilot first unless --kube-first."""
    time_scale, budget_s = args.time_scale, args.budget_s
    state = launcher.up(cluster_spec, directory, twin=True, time_scale=time_scale)
    layout = Layout(directory.resolve())
    api = components.api_endpoint(layout, state.ports["apiserver"])
    folder = directory / "bench"
    folder.mkdir()
    submitter = Submitter(folder, layout.pki)
    runs: dict[str, dict[str, Any]] = {}

    def dagpilot() -> None:
        with serve_scheduler(layout, state.ports["prometheus"]):
            print("run: dagpilot serve scheduler", file=sys.stderr, flush=True)
            runs["dagpilot"] = run_stream(api, submitter, layout.pki, jobs, managed=True,
                                          time_scale=time_scale, budget_s=budget_s)

    def kube() -> None:
        print("run: kube-scheduler", file=sys.stderr, flush=True)
        runs["kube-scheduler"] = run_stream(api, submitter, layout.pki, jobs, managed=False,
                                            time_scale=time_scale, budget_s=budget_s)
    try:
        for one in (kube, dagpilot) if args.kube_first else (dagpilot, kube):
            one()
    finally:
        if args.logs is not None:  # the twin's, the schedulers', the webhooks' logs
            args.logs.mkdir(parents=True, exist_ok=True)
            for log in [*layout.logs.glob("*.log"), *folder.glob("*.log")]:
                shutil.copy(log, args.logs / log.name)
        launcher.down(directory)
    return {name: runs[name] for name in SCHEDULERS if name in runs}


def check_runs(runs: dict[str, dict[str, Any]]) -> list[str]:
    """What is wrong with the setup, if anything: a pod scheduled by the other scheduler."""
    wrong = []
    expected = {"dagpilot": "dagpilot", "kube-scheduler": "default-scheduler"}
    for name, run in runs.items():
        others = set(run["pods"]["scheduler_names"]) - {expected[name]}
        if others:
            wrong.append(f"{name}: pods with schedulerName {sorted(others)}")
    return wrong


def report(args: argparse.Namespace, jobs: list[Job],
           predicted: dict[str, end_to_end.Prediction],
           runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    live = {name: run["jcts"] for name, run in runs.items()}
    per_job = [{"job": job.id, "arrival_s": round(job.arrival_s, 1),
                "pods": sum(t.instances for t in job.tasks),
                "critical_path_s": round(job.critical_path_s, 1),
                **{f"live_{n}": live[n][job.id] for n in SCHEDULERS},
                **{f"live_{n}_phase": runs[n]["outcomes"][job.id]["phase"] for n in SCHEDULERS},
                **{f"sim_{n}": _round(predicted[sim].jcts[job.id])
                   for n, sim in SCHEDULERS.items()},
                **{f"live_{n}_nodes": runs[n]["pods"]["by_workflow"].get(argo_name(job.id), {})
                   for n in SCHEDULERS},
                **{f"sim_{n}_nodes": predicted[sim].nodes[job.id]
                   for n, sim in SCHEDULERS.items()}}
               for job in jobs]
    figures = {name: {"live": end_to_end.summary(live[name]),
                      "sim": {**end_to_end.summary(predicted[sim].jcts),
                              "oom_kills": predicted[sim].oom_kills},
                      "live_over_sim": end_to_end.paired_ratio(live[name],
                                                               predicted[sim].jcts),
                      "run": {k: v for k, v in runs[name].items() if k != "jcts"}}
               for name, sim in SCHEDULERS.items()}
    return {"version": 1, "date": datetime.date.today().isoformat(),
            "command": " ".join(sys.argv), "cluster": args.cluster, "workload": WORKLOAD,
            "stream": {"jobs": args.jobs, "load": args.load, "seed": args.seed,
                       "max_pods": args.max_pods, "max_critical_s": args.max_critical_s},
            "time_scale": args.time_scale, "cpus": os.cpu_count(),
            "order": "kube-scheduler first" if args.kube_first else "dagpilot first",
            "schedulers": figures,
            "ratios": {"live_dagpilot_over_kube": end_to_end.paired_ratio(
                           live["dagpilot"], live["kube-scheduler"]),
                       "sim_dagpilot_over_kube": end_to_end.paired_ratio(
                           predicted["dagpilot"].jcts, predicted["kube-default"].jcts)},
            "setup_problems": check_runs(runs), "jobs": per_job}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def table(document: dict[str, Any]) -> str:
    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:,.0f}"
    lines = ["| | dagpilot | kube-scheduler |", "|---|---:|---:|"]
    figures = document["schedulers"]
    for label, part in (("live", "live"), ("simulator", "sim")):
        row = [figures[n][part] for n in SCHEDULERS]
        lines.append(f"| {label} avg JCT (s) | " + " | ".join(
            f"{cell(r['avg_jct_s'])} ({r['finished']}/{r['jobs']})" for r in row) + " |")
    lines.append("| live / simulator (jobs both finished) | " + " | ".join(
        str(figures[n]["live_over_sim"]) for n in SCHEDULERS) + " |")
    lines.append("| OOM kills, live (pods) / simulator | " + " | ".join(
        f"{figures[n]['run']['pods']['oom_killed']} / {figures[n]['sim']['oom_kills']}"
        for n in SCHEDULERS) + " |")
    ratios = document["ratios"]
    lines.append(f"\ndagpilot / kube, live: {ratios['live_dagpilot_over_kube']}; "
                 f"simulator: {ratios['sim_dagpilot_over_kube']}")
    lines.append("\n| job | pods | arrival s | live dagpilot | live kube | sim dagpilot | "
                 "sim kube-default |\n|---|---:|---:|---:|---:|---:|---:|")
    for row in document["jobs"]:
        live = [cell(row[f"live_{n}"]) if row[f"live_{n}"] is not None
                else str(row[f"live_{n}_phase"]) for n in SCHEDULERS]
        lines.append(f"| {row['job']} | {row['pods']} | {row['arrival_s']:,.0f} | "
                     f"{live[0]} | {live[1]} | "
                     f"{cell(row['sim_dagpilot'])} | {cell(row['sim_kube-scheduler'])} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", default="builtin:small")
    parser.add_argument("--jobs", type=int, default=10)
    parser.add_argument("--load", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-pods", type=int, default=64)
    parser.add_argument("--max-critical-s", type=float, default=12_000.0)
    parser.add_argument("--time-scale", type=float, default=100.0)
    parser.add_argument("--budget-s", type=float, default=600.0,
                        help="wall seconds one run may take, from its first submission")
    parser.add_argument("--kube-first", action="store_true",
                        help="run the kube-scheduler's stream first (order effects)")
    parser.add_argument("--logs", type=Path, help="keep the sandbox's and the servers' logs")
    parser.add_argument("--out", type=Path, default=REPO / "bench/out/end_to_end_jct.json")
    args = parser.parse_args()
    if not 1 <= args.jobs <= 100:
        parser.error("--jobs takes 1-100")
    if not 0 < args.time_scale <= 10_000:
        parser.error("--time-scale takes a number above 0, at most 10000 (the twin's range)")
    if not args.budget_s > 0:
        parser.error("--budget-s must be above 0")
    cluster = load_cluster(args.cluster)
    settings = end_to_end.twin_settings(SimSettings())
    spec = end_to_end.StreamSpec(args.jobs, args.load, args.seed, args.max_pods,
                                 args.max_critical_s)
    jobs = end_to_end.stream(load(WORKLOAD), cluster, spec, settings.startup_median_s)
    predicted = {sim: end_to_end.predict(jobs, cluster, sim, settings, args.seed)
                 for sim in SCHEDULERS.values()}
    load_before = os.getloadavg()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dagpilot-e2e-") as scratch:
        runs = measure(args.cluster, jobs, args, Path(scratch))
    document = report(args, jobs, predicted, runs)
    document |= {"wall_s": round(time.monotonic() - started, 1),
                 "load_average_before": load_before, "load_average_after": os.getloadavg()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    print(table(document))
    if document["setup_problems"]:
        raise SystemExit("setup problems (the runs do not compare what they claim): "
                         + "; ".join(document["setup_problems"]))


if __name__ == "__main__":
    main()
