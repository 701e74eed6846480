"""LiveView against the real sandbox: its nodes are the API server's, and at each step of a pod's
life and of an Argo DAG Workflow (pending, bound, running, succeeded) it says what the API
server says; Prometheus-fed signals carry real values and ages, missing ones are missed scrapes;
a CA or client certificate the cluster does not know is refused with the reason."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dagpilot.core import quantity
from dagpilot.core.config import PhysicsParameters
from dagpilot.live.errors import KubeApiError
from dagpilot.live.inventory import GPU_RESOURCE, node_spec
from dagpilot.live.kube_api import KubeApi, Resource
from dagpilot.live.node_table import LiveNode
from dagpilot.live.view import LiveView
from dagpilot.sandbox import components, rest
from dagpilot.sandbox.layout import Layout
from dagpilot.sandbox.state import SandboxState
from dagpilot.sim import physics
from dagpilot.state import bands
from tests.live.certs import Authority, kubeconfig
from tests.live.kube import WORKFLOWS, admin, items, namespace, wait_for

pytestmark = pytest.mark.live

PARAMS = PhysicsParameters()
NOBODY = "dagpilot-test-nobody"  # a schedulerName no scheduler serves: the pod stays pending
TERMINAL = ("Succeeded", "Failed")


def topology_rtt(a: Any, b: Any) -> float:
    return physics.rtt_ms(physics.distance(a, b), PARAMS)


@pytest.fixture(scope="module")
def view(sandbox: SandboxState) -> Iterator[LiveView]:
    live = LiveView.connect(Path(sandbox.kubeconfig), topology_rtt,
                            prometheus_url=f"http://127.0.0.1:{sandbox.ports['prometheus']}")
    live.start()
    yield live
    live.close()


# --- what the API server says, computed here from its objects ------------------------------

def _requests(pod: dict[str, Any]) -> tuple[int, int, int]:
    millicpu = memory = gpus = 0
    for container in pod["spec"]["containers"]:
        asked = (container.get("resources") or {}).get("requests") or {}
        millicpu += quantity.milli_value(asked.get("cpu", "0"))
        memory += quantity.value(asked.get("memory", "0"))
        gpus += quantity.value(asked.get(GPU_RESOURCE, "0"))
    return millicpu, memory, gpus


def _api_facts(api: rest.Endpoint, ns: str) -> dict[str, Any]:
    pods = items(api, "/api/v1/pods")
    allocated: dict[str, list[int]] = {}
    for pod in pods:
        node = pod["spec"].get("nodeName")
        if node and pod["status"].get("phase") not in TERMINAL:
            total = allocated.setdefault(node, [0, 0, 0])
            for index, amount in enumerate(_requests(pod)):
                total[index] += amount
    mine = [p for p in pods if p["metadata"]["namespace"] == ns]
    pending = sorted((p for p in mine if not p["spec"].get("nodeName")
                      and p["status"].get("phase") not in TERMINAL),
                     key=lambda p: p["metadata"]["creationTimestamp"])
    return {"allocated": {node: tuple(total) for node, total in allocated.items()},
            "pending": [f"{ns}/{p['metadata']['name']}" for p in pending],
            "phases": sorted((p["metadata"]["name"], p["status"].get("phase"),
                              p["spec"].get("nodeName") or "") for p in mine)}


def _view_facts(view: LiveView) -> dict[str, Any]:
    view.sync()
    allocated = {n.spec.name: (round(n.allocated.cpu * 1000), n.allocated.memory,
                               n.allocated.gpus) for n in view.nodes if n.pods}
    return {"allocated": allocated, "pending": [view.pod_key(p) for p in view.pending]}


def _agrees(view: LiveView, api: rest.Endpoint, ns: str) -> dict[str, Any] | None:
    facts = _api_facts(api, ns)
    seen = _view_facts(view)
    mine = [key for key in seen["pending"] if key and key.startswith(f"{ns}/")]
    return facts if seen["allocated"] == facts["allocated"] and mine == facts["pending"] \
        else None


# --- nodes ---------------------------------------------------------------------------------

def test_the_views_nodes_are_the_api_servers(view: LiveView, sandbox: SandboxState) -> None:
    view.sync()
    nodes = sorted(items(admin(sandbox), "/api/v1/nodes"), key=lambda n: n["metadata"]["name"])
    assert list(view.cluster.nodes) == [node_spec(n) for n in nodes]
    ready = [any(c["type"] == "Ready" and c["status"] == "True"
                 for c in n["status"]["conditions"]) for n in nodes]
    assert [n.ready for n in view.nodes] == ready and view.ready_mask().tolist() == ready
    assert view.health()["skipped"] == {}


def test_a_label_makes_a_new_cluster_and_a_heartbeat_does_not(view: LiveView,
                                                             sandbox: SandboxState) -> None:
    api = admin(sandbox)
    view.sync()
    name = view.cluster.nodes[0].name
    before = view.cluster
    rest.request(api, "PATCH", f"/api/v1/nodes/{name}/status", {"status": {"conditions": [
        {"type": "Ready", "status": "True", "reason": "KubeletReady",
         "lastHeartbeatTime": "2030-01-01T00:00:00Z"}]}})
    wait_for("the heartbeat applied", lambda: view.sync() >= 0 and _node_version_seen(
        view, api, name), 30)
    assert view.cluster is before
    patch = {"metadata": {"labels": {"dagpilot.io/test": "relabelled"}}}
    rest.request(api, "PATCH", f"/api/v1/nodes/{name}", patch)
    try:
        wait_for("the new label in the view", lambda: view.sync() >= 0 and dict(
            view.cluster.index[name].labels).get("dagpilot.io/test") == "relabelled", 30)
        assert view.cluster is not before
    finally:
        rest.request(api, "PATCH", f"/api/v1/nodes/{name}",
                     {"metadata": {"labels": {"dagpilot.io/test": None}}})


def _node_version_seen(view: LiveView, api: rest.Endpoint, name: str) -> bool:
    version = rest.get(api, f"/api/v1/nodes/{name}")["metadata"]["resourceVersion"]
    return view.table.records[name].resource_version == version


# --- a pod, step by step -------------------------------------------------------------------

def _pod(name: str, runtime: str, scheduler: str = NOBODY) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": {"dagpilot.io/runtime": runtime}},
            "spec": {"schedulerName": scheduler, "containers": [
                {"name": "main", "image": "busybox",
                 "resources": {"requests": {"cpu": "1500m", "memory": "3Gi"}}}]}}


def test_a_pod_pending_assumed_bound_running_and_succeeded_as_the_api_says(
        view: LiveView, sandbox: SandboxState) -> None:
    api = admin(sandbox)
    with namespace(api, "lv-steps") as ns:
        rest.create(api, f"/api/v1/namespaces/{ns}/pods", _pod("first", "4s"))
        rest.create(api, f"/api/v1/namespaces/{ns}/pods", _pod("second", "4s"))
        pending = wait_for("both pending in the view", lambda: _agrees(view, api, ns) if len(
            _api_facts(api, ns)["pending"]) == 2 else None)
        assert pending["pending"] == [f"{ns}/first", f"{ns}/second"]
        first = next(p for p in view.pending if view.pod_key(p) == f"{ns}/first")
        target = "node-0001"
        view.assume(first, target)  # what a scheduler does before its bind returns
        assert [view.pod_key(p) for p in view.pending if view.pod_key(p).startswith(ns)] == [
            f"{ns}/second"]
        assert view.api is not None
        view.api.bind(ns, "first", target)
        wait_for("bound, then running", lambda: (facts := _agrees(view, api, ns)) and (
            "first", "Running", target) in facts["phases"])
        node = view.nodes[view.cluster.nodes.index(view.cluster.index[target])]
        assert node.allocated.cpu >= 1.5 and ns + "/first" in view.job_ids()
        assert list(view.job_nodes(f"{ns}/first")) == [target]
        wait_for("succeeded, and released", lambda: (facts := _agrees(view, api, ns)) and (
            "first", "Succeeded", target) in facts["phases"], 60)
        assert view.finished_tasks(f"{ns}/first") == {"first"}
        assert list(view.job_nodes(f"{ns}/first")) == []


# --- an Argo DAG with the default scheduler ------------------------------------------------

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
      - {name: b, template: step, depends: a, withItems: [x, y]}
      - {name: c, template: step, depends: a}
      - {name: d, template: step, depends: b && c}
  - name: step
    metadata: {annotations: {dagpilot.io/runtime: "3s"}}
    container:
      image: busybox
      command: [sh, -c, "true"]
      resources: {requests: {cpu: 700m, memory: 512Mi}}
"""


def _task_id(node_name: str) -> str:
    """The loader's id of an Argo node name of the diamond (`diamond.b(0:x)` -> `b(0)`)."""
    return re.sub(r"\((\d+):[^)]*\)", r"(\1)", node_name.removeprefix("diamond."))


def test_an_argo_dag_is_what_the_api_says_at_each_step(view: LiveView,
                                                       sandbox: SandboxState) -> None:
    api = admin(sandbox)
    with namespace(api, "lv-dag") as ns:
        rest.create(api, WORKFLOWS.format(ns=ns), yaml.safe_load(DIAMOND))
        job = f"{ns}/diamond"
        steps: dict[tuple[Any, ...], bool] = {}  # each state the API was in: did the view agree

        def step() -> bool:
            workflow = rest.get(api, f"{WORKFLOWS.format(ns=ns)}/diamond")
            status = workflow.get("status") or {}
            done = {_task_id(n["name"]) for n in (status.get("nodes") or {}).values()
                    if n.get("type") == "Pod" and n.get("phase") == "Succeeded"}
            facts = _agrees(view, api, ns)
            running = {p["spec"]["nodeName"] for p in items(api, f"/api/v1/namespaces/{ns}/pods")
                       if p["spec"].get("nodeName") and p["status"].get("phase") not in TERMINAL}
            state = (tuple(sorted(done)), tuple(sorted(running)))
            agreed = facts is not None and view.finished_tasks(job) == done and set(
                view.job_nodes(job)) == running
            steps[state] = steps.get(state, False) or agreed
            return status.get("phase") == "Succeeded" and agreed

        wait_for("the DAG Succeeded, the view agreeing", step, 120)
        assert view.finished_tasks(job) == {"a", "b(0)", "b(1)", "c", "d"}
        job_of = view.pending[0].job if view.pending else None
        assert job_of is None or job_of.id != job
        seen = [state for state, agreed in steps.items() if agreed]
        assert any(state[1] for state in seen), "the view agreed while pods ran"
        assert len(seen) >= 3, f"the view agreed at too few steps: {steps}"


# --- signals -------------------------------------------------------------------------------

HOST = "dagpilot-test-host"


@pytest.fixture
def host_node(sandbox: SandboxState) -> Iterator[str]:
    """A Node for this machine, not run by kwok, its node_exporter scraped under its name."""
    api = admin(sandbox)
    rest.create(api, "/api/v1/nodes", {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": HOST},
        "spec": {"taints": [{"key": "dagpilot.io/test", "effect": "NoSchedule"}]},
        "status": {"allocatable": {"cpu": str(os.cpu_count()), "memory": "1Gi"}}})
    target = components.add_scrape_target(Layout(Path(sandbox.kubeconfig).parent),
                                          "test-host-node-exporter",
                                          sandbox.ports["node_exporter"], {"node": HOST})
    try:
        yield HOST
    finally:
        target.unlink(missing_ok=True)
        rest.request(api, "DELETE", f"/api/v1/nodes/{HOST}")


def test_signals_carry_real_values_and_ages_and_missing_ones_are_missed_scrapes(
        view: LiveView, sandbox: SandboxState, host_node: str) -> None:
    def host_cpu() -> bool:
        view.sync()
        return "cpu_used" in view.readings(host_node)

    wait_for("node_exporter's CPU of this machine in the view", host_cpu, 60)
    reading = view.readings(host_node)["cpu_used"]
    assert 0 < reading.value <= (os.cpu_count() or 1)
    age = view.now_s - reading.sampled_s
    assert 0 <= age < 4 * 5, "a reading of one of the last scrapes"
    host = next(n for n in view.nodes if n.spec.name == host_node)
    # no node agent runs for it: its pod memory is never measured, so its signals are stale
    assert "memory_used" not in view.readings(host_node) and host.signals.sampled_s == 0.0
    assert bands.stale(bands.scrapes_missed(view.now_s, host.signals.sampled_s, 5.0))
    kwok = next(n for n in view.nodes if n.spec.name == "node-0000")
    if sandbox.twin:  # the twin exports the kwok nodes' signals under the agent's names
        wait_for("the twin's signals of node-0000", lambda: view.sync() >= 0 and len(
            view.readings("node-0000")) == 5, 60)
        assert 0 <= view.now_s - kwok.signals.sampled_s < 4 * 5
    else:
        assert kwok.signals.sampled_s == 0.0 and view.readings("node-0000") == {}


def test_free_gpus_per_root_complex_are_the_devices_the_kubelet_reports(
        view: LiveView, sandbox: SandboxState) -> None:
    if not sandbox.twin:
        pytest.skip("without the twin nothing reports device assignment")
    api = admin(sandbox)
    gpu_node = next(s for s in view.cluster.nodes if len(s.root_complexes) == 2)
    with namespace(api, "lv-gpus") as ns:
        rest.create(api, f"/api/v1/namespaces/{ns}/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "three", "annotations": {"dagpilot.io/runtime": "60s"}},
            "spec": {"nodeName": gpu_node.name, "tolerations": [{"operator": "Exists"}],
                     "containers": [{"name": "main", "image": "x", "resources": {
                         "requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "3"},
                         "limits": {"nvidia.com/gpu": "3"}}}]}})
        def assigned() -> LiveNode | None:  # looked up each time: a new cluster, new nodes
            view.sync()
            state = view.table.by_name[gpu_node.name]
            return state if state.allocated.gpus == 3 and state.gpus_exact else None

        state = wait_for("the twin's device assignment in the view", assigned, 60)
        per_complex = {rc: sum(g.index in state.free_gpus for g in members)
                       for rc, members in gpu_node.root_complexes.items()}
        assert sum(per_complex.values()) == len(gpu_node.gpus) - 3
        assert sorted(per_complex.values()) == [1, 4]  # the kubelet keeps a pod on one complex


# --- the API's own refusals ----------------------------------------------------------------

def test_a_ca_or_client_certificate_the_cluster_does_not_know_is_refused(
        sandbox: SandboxState, tmp_path: Path) -> None:
    server = f"https://127.0.0.1:{sandbox.ports['apiserver']}"
    pki = Path(sandbox.kubeconfig).parent / "pki"
    ours = Authority("not-the-cluster")
    cert, key = ours.issue(tmp_path, "stranger")
    wrong_ca = kubeconfig(tmp_path / "wrong-ca", server, ours.write(tmp_path / "ca.crt"),
                          pki / "admin.crt", pki / "admin.key")
    with pytest.raises(KubeApiError, match="certificate-authority does not sign"):
        KubeApi(wrong_ca).version()
    stranger = kubeconfig(tmp_path / "stranger", server, pki / "ca.crt", cert, key)
    with pytest.raises(KubeApiError, match="401 Unauthorized") as caught:
        KubeApi(stranger).list_all(Resource.NODES)
    assert caught.value.status == 401


def test_an_api_server_that_is_not_there_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ca = Authority("x")
    cert, key = ca.issue(tmp_path, "c")
    config = kubeconfig(tmp_path / "k", f"https://127.0.0.1:{port}", ca.write(tmp_path / "ca"),
                        cert, key)
    view = LiveView.connect(config, topology_rtt)
    with pytest.raises(KubeApiError, match="unreachable"):
        view.start(deadline_s=5)
    view.close()
