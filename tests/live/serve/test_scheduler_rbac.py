"""The shipped RBAC is enough for the scheduler and no more than it needs: on the
ServiceAccount of deploy/scheduler alone, it takes the Lease, binds a pod, annotates it and
records the Scheduled Event, and marks an unschedulable pod PodScheduled=False; it may not
delete pods or read Secrets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dagpilot.sandbox import rest
from dagpilot.sandbox.state import SandboxState
from dagpilot.serve.explanation import DECISION_ANNOTATION
from dagpilot.serve.leader import LeaseConfig
from tests.deploy.manifests import DEPLOY, in_namespace, render
from tests.live.kube import admin, namespace, wait_for
from tests.live.serve.scheduler_env import config, create_pods, events, pod, running
from tests.live.serve.setup import apply, as_token, delete, service_account_kubeconfig

pytestmark = pytest.mark.live


def test_the_scheduler_runs_on_its_shipped_rbac_alone(sandbox: SandboxState,
                                                      tmp_path: Path) -> None:
    api = admin(sandbox)
    with namespace(api, "sched-rbac") as ns:
        shipped = [o for o in render(DEPLOY / "scheduler")
                   if o["kind"] in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding",
                                    "Role", "RoleBinding")]
        objects = in_namespace(shipped, ns)
        apply(api, objects)
        try:
            kubeconfig = service_account_kubeconfig(api, ns, "dagpilot-scheduler",
                                                    tmp_path / "sa.kubeconfig")
            lease = LeaseConfig(ns, "replica", lease_duration_s=4.0, renew_deadline_s=2.5,
                                retry_period_s=0.5)
            settings = config(sandbox, kubeconfig=kubeconfig, leader_elect=True, lease=lease)
            with running(settings) as process:
                wait_for("the Lease taken", lambda: process.leader.is_leader, 30)
                create_pods(api, ns, [pod("fits"), pod("never", cpu="100000")])
                [bound] = wait_for("one pod bound", lambda: [
                    p for p in all_pods(api, ns) if p["spec"].get("nodeName")], 30)
                wait_for("the decision annotation", lambda: DECISION_ANNOTATION in rest.get(
                    api, f"/api/v1/namespaces/{ns}/pods/fits")["metadata"].get(
                    "annotations", {}), 30)
                assert wait_for("the Scheduled Event", lambda: events(api, ns, "Scheduled"))
                wait_for("PodScheduled=False", lambda: any(
                    c["type"] == "PodScheduled" and c["status"] == "False"
                    for c in rest.get(api, f"/api/v1/namespaces/{ns}/pods/never")[
                        "status"].get("conditions", [])), 30)
                assert process.binder is not None and process.binder.requests == 1
                assert bound["metadata"]["name"] == "fits"
            token = kubeconfig.read_text().split("token: ", 1)[1].split()[0]
            status, _ = as_token(api, token, "DELETE", f"/api/v1/namespaces/{ns}/pods/fits")
            assert status == 403
            status, _ = as_token(api, token, "GET", f"/api/v1/namespaces/{ns}/secrets")
            assert status == 403
        finally:
            delete(api, [o for o in objects if o["kind"] in ("ClusterRole",
                                                             "ClusterRoleBinding")])


def all_pods(api: rest.Endpoint, ns: str) -> list[dict[str, Any]]:
    return list(rest.get(api, f"/api/v1/namespaces/{ns}/pods").get("items", []))

