"""The sandbox against its real components: nodes, version, an Argo DAG, Prometheus, status."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from pathlib import Path

from dagpilot.clusters import load_cluster
from dagpilot.live.inventory import GPU_RESOURCE, node_spec
from dagpilot.sandbox import launcher, rest, versions
from dagpilot.sandbox.state import SandboxState
from tests.live.conftest import SANDBOX_CLUSTER
from tests.live.kube import WORKFLOWS, admin, items, namespace, wait_for


def test_nodes_of_the_cluster_appear_ready_with_their_labels_capacity_and_taints(
        sandbox: SandboxState) -> None:
    expected = {spec.name: spec for spec in load_cluster(SANDBOX_CLUSTER).nodes}
    nodes = {n["metadata"]["name"]: n for n in items(admin(sandbox), "/api/v1/nodes")}
    assert set(nodes) == set(expected)
    for name, node in nodes.items():
        spec, seen = expected[name], node_spec(node)
        assert dict(spec.labels).items() <= dict(seen.labels).items()
        assert (seen.allocatable, seen.gpus, seen.taints, seen.zone, seen.rack, seen.disk,
                seen.memory_bandwidth_bytes_s) == (
            spec.allocatable, spec.gpus, spec.taints, spec.zone, spec.rack, spec.disk,
            spec.memory_bandwidth_bytes_s)
        allocatable = node["status"]["allocatable"]
        assert allocatable.get(GPU_RESOURCE, "0") == str(len(spec.gpus))
        assert any(c["type"] == "Ready" and c["status"] == "True"
                   for c in node["status"]["conditions"])


def test_the_api_server_reports_its_real_version(sandbox: SandboxState) -> None:
    version = rest.get(admin(sandbox), "/version")
    assert version["gitVersion"] == versions.KUBERNETES
    assert version["gitTreeState"] == "clean"


DIAMOND = """
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: diamond}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: step}
      - {name: b, template: step, depends: a}
      - {name: c, template: step, depends: a}
      - {name: d, template: step, depends: b && c}
  - name: step
    metadata: {annotations: {dagpilot.io/runtime: "1s"}}
    container:
      image: busybox
      command: [sh, -c, "true"]
      resources: {requests: {cpu: 500m, memory: 256Mi}}
"""


def test_an_argo_dag_workflow_runs_to_succeeded_with_the_default_scheduler(
        sandbox: SandboxState) -> None:
    import yaml

    api = admin(sandbox)
    with namespace(api, "argo-dag") as ns:
        rest.create(api, WORKFLOWS.format(ns=ns), yaml.safe_load(DIAMOND))
        workflow = wait_for("Workflow diamond Succeeded", lambda: _finished(api, ns), 120)
        assert workflow["status"]["phase"] == "Succeeded", workflow["status"].get("message")
        pods = items(api, f"/api/v1/namespaces/{ns}/pods")
        assert len(pods) == 4
        assert all(p["spec"].get("nodeName") and p["status"]["phase"] == "Succeeded"
                   for p in pods)
        starts = {p["metadata"]["annotations"]["workflows.argoproj.io/node-name"]:
                  p["status"]["startTime"] for p in pods}
        assert starts["diamond.a"] <= starts["diamond.b"] <= starts["diamond.d"]


def _finished(api: rest.Endpoint, ns: str) -> dict[str, object] | None:
    workflow = rest.get(api, f"{WORKFLOWS.format(ns=ns)}/diamond")
    phase = (workflow.get("status") or {}).get("phase")
    return workflow if phase in ("Succeeded", "Failed", "Error") else None


def test_prometheus_scrapes_node_exporter(sandbox: SandboxState) -> None:
    query = urllib.parse.urlencode({"query": 'up{job="node-exporter"}'})
    url = f"http://127.0.0.1:{sandbox.ports['prometheus']}/api/v1/query?{query}"

    def scraped() -> bool:
        with urllib.request.urlopen(url, timeout=5) as reply:
            result = json.load(reply)["data"]["result"]
        return bool(result) and result[0]["value"][1] == "1"

    wait_for("node_exporter scraped", scraped, 30)


def test_status_reports_every_component_running(sandbox: SandboxState,
                                                sandbox_dir: Path) -> None:
    health = launcher.status(sandbox_dir)
    assert {h.component for h in health} == set(sandbox.components)
    assert all(h.running for h in health)


def test_up_twice_is_harmless(sandbox: SandboxState, sandbox_dir: Path) -> None:
    again = launcher.up(SANDBOX_CLUSTER, sandbox_dir, twin=sandbox.twin)
    assert {n: r.pid for n, r in again.components.items()} == {
        n: r.pid for n, r in sandbox.components.items()}
