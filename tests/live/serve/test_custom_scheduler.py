"""`dagpilot serve scheduler` on the real sandbox: it binds every pod of an Argo Workflow with
schedulerName dagpilot (the Workflow Succeeds), with a Scheduled Event, the decision annotation
and journal records; a policy that raises, a missing model and a decision past its deadline
still get every pod bound, by the fallback; an unschedulable pod gets kube-scheduler's
PodScheduled=False message and is bound once the cluster changes; a pod with a required rule
dagpilot cannot honour is told why and never bound; a pod bound or deleted meanwhile is a
conflict or gone, not a crash; the sandbox's Prometheus scrapes /metrics."""

from __future__ import annotations

import json
import threading
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from dagpilot.agent import Decision
from dagpilot.core.scheduler import Placement
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.journal import read
from dagpilot.live.kube_api import KubeApi
from dagpilot.registry import read_current
from dagpilot.sandbox import rest
from dagpilot.sandbox.components import add_scrape_target
from dagpilot.sandbox.layout import Layout
from dagpilot.sandbox.state import SandboxState
from dagpilot.serve.binder import BOUND, CONFLICT, GONE, Binder, BindRequest, BindResult
from dagpilot.serve.explanation import DECISION_ANNOTATION
from dagpilot.serve.model_reload import Serving
from dagpilot.serve.scheduler_loop import SchedulerLoop
from tests.live.kube import admin, items, namespace, wait_for
from tests.live.serve.scheduler_env import (
    MODELS,
    all_bound,
    config,
    create_pods,
    events,
    finished,
    pod,
    running,
    submit_workflow,
)
from tests.sim.helpers import job, task

pytestmark = pytest.mark.live


def _decisions(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [json.loads(p["metadata"]["annotations"][DECISION_ANNOTATION]) for p in pods]


def test_every_pod_of_a_workflow_is_bound_by_dagpilot_and_the_workflow_succeeds(
        sandbox: SandboxState, tmp_path: Path) -> None:
    api = admin(sandbox)
    journal = tmp_path / "journal.jsonl"
    with namespace(api, "sched-e2e") as ns, running(config(sandbox, journal=journal)) as process:
        submit_workflow(api, ns, "diamond")
        workflow = finished(api, ns, "diamond")
        assert workflow["status"]["phase"] == "Succeeded", workflow["status"].get("message")
        pods = items(api, f"/api/v1/namespaces/{ns}/pods")
        assert len(pods) == 4
        version = read_current(MODELS)
        for decision, one in zip(_decisions(pods), pods, strict=True):
            assert decision["source"] == "model" and decision["model"] == version
            assert decision["node"] == one["spec"]["nodeName"] and decision["top"]
        scheduled = wait_for("4 Scheduled Events", lambda: (
            found if len(found := events(api, ns, "Scheduled")) == 4 else None), 30)
        assert all(f"by model {version}" in e["message"] and "top nodes" in e["message"]
                   for e in scheduled)
        assert process.loop is not None and process.binder is not None
        assert process.binder.requests == 4
        wait_for("4 finished records", lambda: len(
            [r for r in read(journal).records if r["kind"] == "finished"]) == 4, 30)
    records = read(journal).records
    decided = {r["pod"]: r for r in records if r["kind"] == "decision"}
    bound = {r["pod"] for r in records if r["kind"] == "outcome" and r["result"] == BOUND}
    assert set(decided) == bound == {f"{ns}/{p['metadata']['name']}" for p in pods}
    ended = {r["pod"]: r for r in records if r["kind"] == "finished"}
    assert set(ended) == bound and {r["phase"] for r in ended.values()} == {"Succeeded"}
    for record in decided.values():
        assert record["model"] == version and record["mask"]["feasible"] >= 1
        assert record["mask"]["nodes"] == 48 and record["observation"]["nodes"] == 48


class Raising:
    def __init__(self) -> None:
        self.serving = Serving(self.policy, "raises")

    def current(self) -> Serving | None:
        return self.serving

    def policy(self, view: ClusterView) -> Decision:
        raise RuntimeError("a defect in the policy")


class Stalling(Raising):
    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def policy(self, view: ClusterView) -> Decision:
        self.release.wait(60)
        return Decision(None)


@pytest.mark.parametrize("failure", ["raises", "missing model", "deadline"])
def test_the_fallback_binds_every_pod_when_the_model_cannot_decide(
        sandbox: SandboxState, tmp_path: Path, failure: str) -> None:
    api = admin(sandbox)
    stalling = Stalling()
    source = {"raises": Raising(), "deadline": stalling}.get(failure)
    settings = config(sandbox, deadline_s=0.05,
                      models=tmp_path / "empty" if failure == "missing model" else MODELS)
    try:
        with namespace(api, "sched-fallback") as ns, running(settings, source) as process:
            submit_workflow(api, ns, "diamond")
            workflow = finished(api, ns, "diamond")
            assert workflow["status"]["phase"] == "Succeeded"
            pods = items(api, f"/api/v1/namespaces/{ns}/pods")
            assert len(pods) == 4
            assert {d["source"] for d in _decisions(pods)} == {"fallback"}
            assert isinstance(process.loop, SchedulerLoop)
            assert process.loop.outcomes["fallback"] == 4
            assert process.loop.outcomes["model"] == 0
    finally:
        stalling.release.set()


def _unscheduled(api: rest.Endpoint, ns: str, name: str) -> dict[str, Any]:
    """The pod's PodScheduled=False condition, once the scheduler has written it."""
    def condition() -> dict[str, Any] | None:
        got = rest.get(api, f"/api/v1/namespaces/{ns}/pods/{name}")
        return next((c for c in got["status"].get("conditions", [])
                     if c["type"] == "PodScheduled" and c["status"] == "False"), None)
    return wait_for(f"PodScheduled=False on {name}", condition, 30)


def test_an_unschedulable_pod_gets_the_message_and_is_bound_when_a_node_fits(
        sandbox: SandboxState) -> None:
    api = admin(sandbox)
    nodes = items(api, "/api/v1/nodes")
    target = next(n["metadata"]["name"] for n in nodes
                  if not n["spec"].get("taints") and not n["spec"].get("unschedulable"))
    label = "dagpilot-test/slot"
    with namespace(api, "sched-unsched") as ns, running(config(sandbox)):
        create_pods(api, ns, [pod("picky", nodeSelector={label: ns})])
        found = _unscheduled(api, ns, "picky")
        assert found["reason"] == "Unschedulable"
        assert found["message"].startswith(f"0/{len(nodes)} nodes are available: ")
        assert f"{len(nodes)} node(s) didn't match Pod's node selector {label}={ns}" \
            in found["message"]
        assert wait_for("a FailedScheduling Event", lambda: events(api, ns,
                                                                   "FailedScheduling"), 30)
        try:
            rest.request(api, "PATCH", f"/api/v1/nodes/{target}",
                         {"metadata": {"labels": {label: ns}}})
            bound = all_bound(api, ns, 1, 30)
            assert bound[0]["spec"]["nodeName"] == target
        finally:
            rest.request(api, "PATCH", f"/api/v1/nodes/{target}",
                         {"metadata": {"labels": {label: None}}})


def test_a_pod_with_a_rule_dagpilot_cannot_honour_is_told_why_and_never_bound(
        sandbox: SandboxState) -> None:
    api = admin(sandbox)
    apart = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "apart"}},
         "topologyKey": "kubernetes.io/hostname"}]}}
    with namespace(api, "sched-refused") as ns, running(config(sandbox)):
        create_pods(api, ns, [pod("apart", affinity=apart), pod("plain")])
        wait_for("the plain pod bound (the loop goes on around the other)",
                 lambda: rest.get(api, f"/api/v1/namespaces/{ns}/pods/plain")["spec"].get(
                     "nodeName"), 30)
        found = _unscheduled(api, ns, "apart")
        assert found["reason"] == "Unschedulable"
        assert found["message"].startswith("required pod anti-affinity "
                                           "(spec.affinity.podAntiAffinity)")
        assert wait_for("a FailedScheduling Event", lambda: events(api, ns,
                                                                   "FailedScheduling"), 30)
        assert not rest.get(api, f"/api/v1/namespaces/{ns}/pods/apart")["spec"].get(
            "nodeName")


def _bind_once(binder: Binder, ns: str, name: str, node: str) -> str:
    one = job("j", task("t", 1.0))
    placement = Placement(PodRef(0, one, one.tasks[0], 0, 0.0), node)
    binder.bind(BindRequest(placement, ns, name, None, "{}", "test"))
    results: list[BindResult] = []

    def back() -> bool:
        results.extend(binder.done())
        return bool(results)
    wait_for("the bind's result", back, 30)
    return results[0].result


def test_a_pod_bound_or_deleted_meanwhile_is_a_conflict_or_gone(sandbox: SandboxState) -> None:
    api = admin(sandbox)
    kube = KubeApi(Path(sandbox.kubeconfig))
    binder = Binder(kube)
    node = items(api, "/api/v1/nodes")[0]["metadata"]["name"]
    try:
        with namespace(api, "sched-conflict") as ns:
            create_pods(api, ns, [pod("taken", scheduler="nobody")])
            assert _bind_once(binder, ns, "taken", node) == BOUND
            assert _bind_once(binder, ns, "taken", node) == CONFLICT
            assert _bind_once(binder, ns, "never-was", node) == GONE
            assert binder.requests == 3
    finally:
        binder.close()
        kube.close()


def _query(state: SandboxState, promql: str) -> list[dict[str, Any]]:
    query = urllib.parse.urlencode({"query": promql})
    url = f"http://127.0.0.1:{state.ports['prometheus']}/api/v1/query?{query}"
    with urllib.request.urlopen(url, timeout=5) as reply:
        return list(json.load(reply)["data"]["result"])


def test_prometheus_scrapes_the_schedulers_metrics(sandbox: SandboxState) -> None:
    api = admin(sandbox)
    with namespace(api, "sched-metrics") as ns, running(config(sandbox)) as process:
        create_pods(api, ns, [pod(f"p{i}") for i in range(3)])
        all_bound(api, ns, 3)
        assert process.metrics_port is not None
        target = add_scrape_target(Layout(Path(sandbox.kubeconfig).parent),
                                   "dagpilot-scheduler", process.metrics_port,
                                   {"role": "scheduler"})
        try:
            decided = wait_for("decisions in Prometheus", lambda: _query(
                sandbox, 'dagpilot_scheduler_decisions_total{role="scheduler",'
                         'outcome="model"} >= 3'), 60)
            assert float(decided[0]["value"][1]) >= 3
            info = _query(sandbox, 'dagpilot_scheduler_model_info{role="scheduler"}')
            assert [s["metric"]["version"] for s in info] == [read_current(MODELS)]
            binds = _query(sandbox, 'dagpilot_scheduler_bind_seconds_count{role="scheduler"}')
            assert float(binds[0]["value"][1]) >= 3
        finally:
            target.unlink()
