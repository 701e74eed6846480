"""The real kube-scheduler against dagpilot's `kube-default` port, pod by pod.

    .venv/bin/python bench/kube_default_vs_real.py [--pods 400] [--out FILE.json]

A sandbox of `builtin:default` (the real kube-apiserver and kube-scheduler v1.35.4, kwok
nodes, twin off, pods without a runtime, so none ends and the scheduler's cache cannot lag
the state the port reads) receives the built-in mix's tasks as pods, one at
a time (each waits until it is bound, or marked unschedulable, before the next is created, so
the state a decision sees is exactly the bindings before it). Before each pod, the port scores
the same pod on the same state (nodes from the API server through live/inventory, bound pods'
requests through live/pods) with the same filters and weighted scores kube-default
uses; the real choice is then checked against the port's best-scored ties. Where it is not
among them, the per-plugin scores of the real choice and of the port's best node are recorded.
Pods are created until the count is reached or 85 % of the cluster's CPU is requested.

`--workflows JOBS` renders the mix's first JOBS jobs as Argo Workflows instead (the real
workflow-controller creates their pods as their dependencies finish, the twin ends them):
every template carries a scheduling gate, and the bench lifts one pod's gate at a time, after
the port has scored it on the state of that moment.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from dagpilot.clusters import load_cluster
from dagpilot.core.snapshot import ClusterSnapshot
from dagpilot.core.types import Resources, Task
from dagpilot.decide.feasibility import Feasibility
from dagpilot.decide.filters import DEFAULT_FILTERS, filters
from dagpilot.decide.node_arrays import NodeArrays
from dagpilot.decide.scores import DEFAULT_WEIGHTS
from dagpilot.decide.scoring import Scoring
from dagpilot.live.inventory import cluster_of
from dagpilot.live.pod_manifest import pod_manifest
from dagpilot.live.pods import decode_pod
from dagpilot.live.task_annotations import RUNTIME
from dagpilot.live.workflow_manifest import workflow_manifest
from dagpilot.sandbox import components, launcher, rest
from dagpilot.sandbox.layout import Layout
from dagpilot.workloads import load

CLUSTER = "builtin:default"
WORKLOAD = "builtin:mix"
NAMESPACE = "agreement"
WORKFLOWS = f"/apis/argoproj.io/v1alpha1/namespaces/{NAMESPACE}/workflows"
FILL = 0.85
GATE = "dagpilot.io/agreement"
TIME_SCALE = 20.0  # the twin's, in the Workflow mode


def _tasks(count: int) -> list[Task]:
    """Tasks of the built-in mix in job order, one pod per instance, up to `count`."""
    tasks = []
    for job in load(WORKLOAD):
        for task in job.tasks:
            tasks.extend([task] * task.instances)
            if len(tasks) >= count:
                return tasks[:count]
    return tasks


def _ended(api: rest.Endpoint) -> set[str]:
    return {pod["metadata"]["name"] for pod in _pods(api)
            if pod["status"].get("phase") in ("Succeeded", "Failed")}


def _pods(api: rest.Endpoint) -> list[dict[str, Any]]:
    return list(rest.get(api, f"/api/v1/namespaces/{NAMESPACE}/pods")["items"])


def _state(api: rest.Endpoint) -> ClusterSnapshot:
    """The cluster as the API server has it now: nodes, and the requests bound to each."""
    cluster = cluster_of(rest.get(api, "/api/v1/nodes")["items"], "sandbox")
    allocated: dict[str, Resources] = {}
    counts: Counter[str] = Counter()
    for pod in _pods(api):
        node = pod["spec"].get("nodeName")
        if node and pod["status"].get("phase") not in ("Succeeded", "Failed"):
            amounts = decode_pod(pod).requests
            allocated[node] = allocated.get(node, Resources()) + amounts
            counts[node] += 1
    snapshot = ClusterSnapshot.of(cluster)
    for name, amounts in allocated.items():
        snapshot = snapshot.with_node(name, allocated=Resources(amounts.cpu, amounts.memory,
                                                                amounts.gpus),
                                      pods=counts[name])
    return snapshot


def _port(task: Task, view: ClusterSnapshot) -> dict[str, Any]:
    """The port's feasible nodes, best score, ties, and every node's per-plugin scores."""
    nodes = NodeArrays.from_view(view)
    feasible = np.flatnonzero(Feasibility(filters(DEFAULT_FILTERS)).mask(task, nodes))
    names = [spec.name for spec in view.cluster.nodes]
    if not len(feasible):
        return {"feasible": 0, "ties": [], "plugins": {}}
    totals = Scoring.named(DEFAULT_WEIGHTS).totals(task, nodes, feasible)
    best = float(np.max(totals))
    plugins = {name: Scoring.named([(name, 1)]).totals(task, nodes, feasible)
               for name, _ in DEFAULT_WEIGHTS}
    per_node = {names[i]: {p: float(s[k]) for p, s in plugins.items()}
                for k, i in enumerate(feasible)}
    return {"feasible": len(feasible), "best": best,
            "ties": [names[i] for k, i in enumerate(feasible) if totals[k] == best],
            "plugins": per_node}


def _lasting(task: Task, name: str) -> dict[str, Any]:
    """The task's pod without its runtime: kwok keeps it running, so no pod ends while the
    real scheduler decides on a state the port has not seen (its cache would lag ours)."""
    pod = pod_manifest(task, name)
    del pod["metadata"]["annotations"][RUNTIME]
    return pod


def _outcome(api: rest.Endpoint, name: str, deadline_s: float = 30.0) -> str | None:
    """The node the real scheduler bound the pod to, or None when it found it unschedulable."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        pod = rest.get(api, f"/api/v1/namespaces/{NAMESPACE}/pods/{name}")
        if pod["spec"].get("nodeName"):
            return str(pod["spec"]["nodeName"])
        if any(c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
               for c in pod["status"].get("conditions") or []):
            return None
        time.sleep(0.05)
    raise SystemExit(f"pod {name}: neither bound nor unschedulable after {deadline_s:.0f} s")


def _gated(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pods held by the bench's scheduling gate, oldest first (Argo created them)."""
    held = [p for p in pods if p["spec"].get("schedulingGates") and not p["spec"].get("nodeName")]
    return sorted(held, key=lambda p: (p["metadata"]["creationTimestamp"], p["metadata"]["name"]))


def _workflows_done(api: rest.Endpoint) -> bool:
    listing = rest.get(api, WORKFLOWS)["items"]
    return all((w.get("status") or {}).get("phase") in ("Succeeded", "Failed", "Error")
               for w in listing)


def run_workflows(jobs: int, count: int, directory: Path, budget_s: float) -> dict[str, Any]:
    """The mix's first `jobs` jobs as Argo Workflows: Argo creates the pods behind a
    scheduling gate; the bench lifts one gate at a time, after the port has scored that pod
    on the state of that moment. The twin ends pods meanwhile (time scale TIME_SCALE), so a
    decision is marked `raced` when a pod ended between the port's read and the binding."""
    state = launcher.up(CLUSTER, directory, twin=True, time_scale=TIME_SCALE)
    api = components.api_endpoint(Layout(directory.resolve()), state.ports["apiserver"])
    rows: list[dict[str, Any]] = []
    deadline = time.monotonic() + budget_s
    try:
        rest.create(api, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": NAMESPACE}})
        gate = {"schedulingGates": [{"name": GATE}]}
        for job in load(WORKLOAD)[:jobs]:
            rest.create(api, WORKFLOWS, workflow_manifest(job, pod_spec_patch=gate))
        while len(rows) < count and time.monotonic() < deadline:
            held = _gated(_pods(api))
            if not held:
                if _workflows_done(api):
                    break
                time.sleep(0.1)
                continue
            rows.append(_lift(api, held[0]))
    finally:
        launcher.down(directory)
    return _summary(rows)


def _lift(api: rest.Endpoint, pod: dict[str, Any]) -> dict[str, Any]:
    name = pod["metadata"]["name"]
    record = decode_pod(pod)
    if record.task is None:
        raise SystemExit(f"pod {name} does not parse: {record.error}")
    ended = _ended(api)
    port = _port(record.task, _state(api))
    rest.request(api, "PATCH", f"/api/v1/namespaces/{NAMESPACE}/pods/{name}",
                 {"spec": {"schedulingGates": None}})
    chosen = _outcome(api, name)
    return {**_row(name, record.task, port, chosen), "raced": _ended(api) != ended}


def run(count: int, directory: Path) -> dict[str, Any]:
    state = launcher.up(CLUSTER, directory, twin=False)
    api = components.api_endpoint(Layout(directory.resolve()), state.ports["apiserver"])
    capacity = load_cluster(CLUSTER).capacity.cpu
    rows: list[dict[str, Any]] = []
    try:
        rest.create(api, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": NAMESPACE}})
        requested = 0.0
        for index, task in enumerate(_tasks(count)):
            if requested + task.requests.cpu > FILL * capacity:
                break
            view = _state(api)
            port = _port(task, view)
            name = f"p{index:04d}"
            rest.create(api, f"/api/v1/namespaces/{NAMESPACE}/pods", _lasting(task, name))
            chosen = _outcome(api, name)
            if chosen is not None:
                requested += task.requests.cpu
            rows.append(_row(name, task, port, chosen))
    finally:
        launcher.down(directory)
    return _summary(rows)


def _row(name: str, task: Task, port: dict[str, Any], chosen: str | None) -> dict[str, Any]:
    ties = port["ties"]
    agree = (chosen in ties) if chosen is not None else not ties
    row: dict[str, Any] = {"pod": name, "task": task.id, "chosen": chosen,
                           "port_ties": len(ties), "feasible": port["feasible"],
                           "agree": agree}
    if not agree and chosen is not None and ties:
        mine, theirs = port["plugins"].get(ties[0], {}), port["plugins"].get(chosen)
        row["differs"] = ({p: (mine[p], theirs[p]) for p in mine if mine[p] != theirs[p]}
                          if theirs is not None else "the port found the real node infeasible")
    return row


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    agreed = sum(row["agree"] for row in rows)
    calm = [row for row in rows if not row.get("raced")]
    return {"version": 1, "cluster": CLUSTER, "workload": WORKLOAD, "pods": len(rows),
            "calm": len(calm), "calm_agree": sum(row["agree"] for row in calm),
            "agree": agreed, "agreement": agreed / len(rows) if rows else None,
            "unschedulable": sum(row["chosen"] is None for row in rows),
            "mean_ties": float(np.mean([row["port_ties"] for row in rows])) if rows else None,
            "disagreements": [row for row in rows if not row["agree"]], "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=400)
    parser.add_argument("--workflows", type=int, default=0, metavar="JOBS",
                        help="the mix's first JOBS jobs as Argo Workflows instead of pods")
    parser.add_argument("--budget-s", type=float, default=1200.0)
    parser.add_argument("--out", type=Path, default=Path("bench/out/kube_default_vs_real.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agreement-") as scratch:
        summary = (run_workflows(args.workflows, args.pods, Path(scratch), args.budget_s)
                   if args.workflows else run(args.pods, Path(scratch)))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=1))
    print(f"{summary['agree']}/{summary['pods']} decisions agree "
          f"({100 * (summary['agreement'] or 0):.1f} %), {summary['unschedulable']} "
          f"unschedulable, {summary['mean_ties']:.2f} ties on average; "
          f"{len(summary['disagreements'])} disagreements ({summary['calm_agree']}/"
          f"{summary['calm']} of the decisions no pod end raced) in {args.out}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
