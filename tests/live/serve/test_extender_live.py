"""`dagpilot serve extender` inside a real kube-scheduler on the session's sandbox: a second
kube-scheduler (profile dagpilot-extender) runs the shipped extenders entry over mTLS with
percentageOfNodesToScore 100; its pods land on a node dagpilot scored 10 (its best) in at
least 95 % of decisions, an Argo Workflow through it Succeeds, and with the extender stopped
pods still get scheduled. The same with the documented prioritize-only entry (docs/SERVING.md:
the shipped entry without its filterVerb), where kube-scheduler's own filters alone decide
feasibility and no filter call reaches dagpilot."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from dagpilot.agent import load_scheduler
from dagpilot.core.config import PhysicsParameters
from dagpilot.live.view import LiveView
from dagpilot.live.workflow_manifest import workflow_manifest
from dagpilot.sandbox import build, components, process, rest
from dagpilot.sandbox.components import Ports
from dagpilot.sandbox.layout import Layout, free_ports
from dagpilot.sandbox.state import SandboxState
from dagpilot.serve.extender_process import ExtenderConfig, ExtenderProcess
from dagpilot.sim import physics
from tests.conftest import REPO
from tests.live import kube
from tests.live.serve.scheduler_env import diamond, finished
from tests.live.serve.setup import extender_entry

pytestmark = pytest.mark.live
PROFILE = "dagpilot-extender"
PODS, AFTER_STOP = 20, 5


def pod(name: str, cpu: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": PROFILE, "containers": [
                {"name": "main", "image": "busybox",
                 "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]}}


def bound(api: rest.Endpoint, namespace: str, names: list[str]) -> dict[str, str] | None:
    nodes = {item["metadata"]["name"]: item["spec"].get("nodeName")
             for item in kube.items(api, f"/api/v1/namespaces/{namespace}/pods")}
    return nodes if all(nodes.get(name) for name in names) else None  # type: ignore[return-value]


@pytest.mark.parametrize("filter_verb", [True, False], ids=["filter,prioritize", "prioritize"])
def test_pods_land_on_dagpilots_best_node_and_schedule_without_it(sandbox: SandboxState,
                                                                  filter_verb: bool) -> None:
    api = kube.admin(sandbox)
    layout = Layout(Path(sandbox.kubeconfig).parent)
    pki = layout.pki
    params = PhysicsParameters()
    view = LiveView.connect(Path(sandbox.kubeconfig), lambda a, b: physics.rtt_ms(
        physics.distance(a, b), params))
    view.start()
    stop = threading.Event()
    scheduler = None
    try:
        served = ExtenderProcess(ExtenderConfig(
            kubeconfig=Path(sandbox.kubeconfig), port=0, tls_cert=pki / "serving.crt",
            tls_key=pki / "serving.key", client_ca=pki / "ca.crt", host="127.0.0.1"),
            view=view, rank=load_scheduler(REPO / "models", explain=False).agent.rank)
        thread = threading.Thread(target=served.serve, args=(stop,))
        thread.start()
        component = components.kube_scheduler(
            layout, build.bin_dir(), Ports.of(list(sandbox.ports.values())),
            extenders=[extender_entry(served.port, pki, filter_verb=filter_verb)],
            profile=PROFILE,
            name="kube-scheduler-extender", port=free_ports(1)[0],
            extra={"percentageOfNodesToScore": 100})
        scheduler = process.start(component, layout.logs)
        process.wait_ready(component, scheduler)
        with kube.namespace(api, "ext") as namespace:
            names = [f"p-{i}" for i in range(PODS)]
            for index, name in enumerate(names):
                rest.create(api, f"/api/v1/namespaces/{namespace}/pods",
                            pod(name, ("250m", "500m", "1")[index % 3]))
            placed = kube.wait_for("every pod bound", lambda: bound(api, namespace, names),
                                   deadline_s=120)
            answers = {answer.pod: answer for answer in served.extender.answers
                       if answer.verb == "prioritize"}
            on_best = [name for name in names
                       if placed[name] in answers[f"{namespace}/{name}"].best()]
            assert len(on_best) >= 0.95 * PODS, (placed, answers)
            filtered = served.extender.calls["filter"]
            assert (filtered >= PODS) if filter_verb else (filtered == 0)
            # A Workflow through the same scheduler: Argo's pods ranked by the extender, run
            # by the twin, the Workflow Succeeds.
            rest.create(api, kube.WORKFLOWS.format(ns=namespace), workflow_manifest(
                diamond("ext-dag"), name="ext-dag", scheduler=PROFILE))
            done = finished(api, namespace, "ext-dag", deadline_s=180)
            assert done["status"]["phase"] == "Succeeded", done["status"].get("message")
            ranked = {answer.pod for answer in served.extender.answers
                      if answer.verb == "prioritize"}
            dag_pods = [p["metadata"]["name"] for p in kube.items(
                api, f"/api/v1/namespaces/{namespace}/pods")
                if p["metadata"].get("labels", {}).get("workflows.argoproj.io/workflow")
                == "ext-dag"]
            assert len(dag_pods) == 4
            assert all(f"{namespace}/{name}" in ranked for name in dag_pods)
            stop.set()
            thread.join(timeout=30)
            later = [f"q-{i}" for i in range(AFTER_STOP)]
            for name in later:
                rest.create(api, f"/api/v1/namespaces/{namespace}/pods", pod(name, "250m"))
            kube.wait_for("pods bound with the extender down",
                          lambda: bound(api, namespace, later), deadline_s=120)
    finally:
        stop.set()
        if scheduler is not None:
            process.stop([scheduler])
        view.close()
