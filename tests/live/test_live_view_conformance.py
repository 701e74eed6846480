"""The ClusterView conformance suite (tests/core/view_conformance.py) run against LiveView, with a
factory that drives the sandbox: the suite's nodes are created as Nodes of a pool of their own
(the view selects them by label), its pods as pods of a namespace of its own that no scheduler
serves; a bind is a real pods/binding, a release the pod's phase set to Succeeded, readiness the
Node's Ready condition, a spec change a patch of the Node; each change is applied when the view,
synced, shows it. A scrape cannot be made on demand (signals come from Prometheus scraping real
exporters): the factory serves, for its nodes, the metrics a node agent would (probe times of
now, no pods, idle memory bandwidth and disk) to the sandbox's real Prometheus, and a scrape is
waiting until the view shows a sample newer than the last one of every node.

Three checks of the suite assume what a live view cannot have, and are restated here with the
same rules: the cluster equals the suite's Cluster object (a live view's Nodes carry the zone,
rack and disk-kind labels the Node convention writes, and its pool label, and the cluster is
named "live"), the clock starts at 0 (a live view's clock is the wall clock) and pending pods
keep the suite's uids and job (a live view numbers its pods itself, and a pod without a
Workflow is a single-task job `namespace/name`). Pods are compared by name instead, specs by
the live round trip of the suite's spec, the clock by never going back.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from dagpilot.core.config import PhysicsParameters
from dagpilot.core.types import Cluster, NodeSpec, Resources, Taint
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.live.inventory import node_manifest, node_spec
from dagpilot.live.node_agent import metric_names as m
from dagpilot.live.view import LiveView
from dagpilot.sandbox import components, rest
from dagpilot.sandbox.layout import Layout
from dagpilot.sandbox.state import SandboxState
from dagpilot.sim import physics
from tests.core.view_conformance import (
    CLUSTER,
    GIB,
    AddNode,
    B,
    Bind,
    Change,
    Release,
    RemoveNode,
    Respec,
    Scrape,
    SetReady,
    ViewConformance,
    ViewFactory,
    amounts,
    assert_consistent,
)
from tests.live.kube import admin, wait_for

pytestmark = pytest.mark.live

POOL = "dagpilot.io/conformance-pool"
NOBODY = "dagpilot-test-nobody"
PARAMS = PhysicsParameters()


def topology_rtt(a: NodeSpec, b: NodeSpec) -> float:
    return physics.rtt_ms(physics.distance(a, b), PARAMS)


def _ready(ready: bool) -> list[dict[str, str]]:
    return [{"type": "Ready", "status": "True" if ready else "False", "reason": "Test",
             "lastHeartbeatTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]


class Exporter:
    """Serves, for some nodes, what their node agents would: every probe measured just now,
    no pods, idle memory bandwidth and disks."""

    def __init__(self, nodes: set[str]) -> None:
        self.nodes = nodes

        def metrics() -> bytes:
            now = time.time()
            lines = []
            for node in sorted(self.nodes):
                for probe in (m.PROBE_POD_CPU, m.PROBE_POD_MEMORY, m.PROBE_MEMORY_BANDWIDTH,
                              m.PROBE_DISK_AWAIT):
                    lines.append(f'{m.PROBE_SAMPLE_TIMESTAMP_SECONDS}{{node="{node}",'
                                 f'probe="{probe}"}} {now}')
                lines.append(f'{m.MEMORY_BANDWIDTH_UTILISATION}{{node="{node}",'
                             f'source="test"}} 0.1')
                lines.append(f'{m.DISK_AWAIT_MILLISECONDS}{{node="{node}",device="vda"}} 1.5')
            return ("\n".join(lines) + "\n").encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = metrics()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server.server_port)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class LiveFactory:
    """Builds LiveViews of a node pool and a namespace of the sandbox; cleans up after."""

    def __init__(self, sandbox: SandboxState) -> None:
        self.sandbox = sandbox
        self.api = admin(sandbox)
        self.pool = uuid.uuid4().hex[:8]
        self.ns = f"lv-conf-{self.pool}"
        self.views: list[LiveView] = []
        self.names: set[str] = set()
        self.exporter = Exporter(self.names)
        self.target = components.add_scrape_target(
            Layout(Path(sandbox.kubeconfig).parent), f"conformance-{self.pool}",
            self.exporter.port, {})

    def manifest(self, spec: NodeSpec) -> dict[str, Any]:
        node = node_manifest(spec, extra_labels={POOL: self.pool})
        node["status"]["conditions"] = _ready(True)
        return node

    def seen(self, spec: NodeSpec) -> NodeSpec:
        """The spec as the view reads it back from the Node this factory makes."""
        return node_spec(self.manifest(spec))

    def build(self, cluster: Cluster, pending: Sequence[PodRef]) -> ClusterView:
        rest.create(self.api, "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.ns}})
        for spec in cluster.nodes:
            self._create_node(spec)
        for pod in pending:  # one after another: the API's creation order is theirs
            requests = {"cpu": f"{round(pod.requests.cpu * 1000)}m",
                        "memory": str(pod.requests.memory)}
            limits = {}
            if pod.requests.gpus:  # an extended resource is asked for by its limit
                requests["nvidia.com/gpu"] = limits["nvidia.com/gpu"] = str(pod.requests.gpus)
            rest.create(self.api, f"/api/v1/namespaces/{self.ns}/pods", {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod.task.id},
                "spec": {"schedulerName": NOBODY, "tolerations": [{"operator": "Exists"}],
                         "containers": [{"name": "main", "image": "x", "resources": {
                             "requests": requests, "limits": limits}}]}})
        view = LiveView.connect(
            Path(self.sandbox.kubeconfig), topology_rtt, node_selector=f"{POOL}={self.pool}",
            namespace=self.ns,
            prometheus_url=f"http://127.0.0.1:{self.sandbox.ports['prometheus']}")
        self.views.append(view)
        view.start()
        self._until(view, "the pods pending", lambda: len(view.pending) == len(pending))
        return view

    def apply(self, view: ClusterView, change: Change) -> ClusterView:
        assert isinstance(view, LiveView)
        match change:
            case Bind(pod, node, _):  # the kubelet, not the binding, picks the devices
                assert view.api is not None
                view.api.bind(self.ns, pod.task.id, node)
                self._until(view, f"{pod.task.id} bound", lambda: pod.task.id not in
                            self.pending_names(view) and pod.task.id in self._bound(view, node))
            case Release(pod):
                rest.request(self.api, "PATCH",
                             f"/api/v1/namespaces/{self.ns}/pods/{pod.task.id}/status",
                             {"status": {"phase": "Succeeded"}})
                self._until(view, f"{pod.task.id} released", lambda: not any(
                    pod.task.id in self._bound(view, n.name) for n in view.cluster.nodes))
            case SetReady(node, ready):
                rest.request(self.api, "PATCH", f"/api/v1/nodes/{node}/status",
                             {"status": {"conditions": _ready(ready)}})
                self._until(view, f"{node} ready={ready}", lambda: view.table.by_name[
                    node].ready is ready)
            case Scrape():  # the wall clock moves on its own; wait for the next scrape
                before = {n.spec.name: n.signals.sampled_s for n in view.nodes}
                self._until(view, "a newer sample of every node", lambda: all(
                    n.signals.sampled_s > before[n.spec.name] for n in view.nodes), 60)
            case Respec(spec):
                self._replace_node(spec)
                self._until(view, f"{spec.name} respecified", lambda: view.cluster.index.get(
                    spec.name) == self.seen(spec))
            case AddNode(spec):
                self._create_node(spec)
                self._until(view, f"{spec.name} added", lambda: spec.name in view.cluster.index)
            case RemoveNode(name):
                rest.request(self.api, "DELETE", f"/api/v1/nodes/{name}")
                self._until(view, f"{name} removed", lambda: name not in view.cluster.index)
        return view

    def pending_names(self, view: LiveView) -> list[str]:
        return [(view.pod_key(p) or "").partition("/")[2] for p in view.pending]

    def close(self) -> None:
        for view in self.views:
            view.close()
        self.target.unlink(missing_ok=True)
        self.exporter.stop()
        rest.request(self.api, "DELETE", f"/api/v1/namespaces/{self.ns}/pods"
                                         "?gracePeriodSeconds=0")
        for name in self.names:
            rest.request(self.api, "DELETE", f"/api/v1/nodes/{name}")
        rest.request(self.api, "DELETE", f"/api/v1/namespaces/{self.ns}")
        rest.request(self.api, "PUT", f"/api/v1/namespaces/{self.ns}/finalize", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.ns},
            "spec": {"finalizers": []}})

    def _create_node(self, spec: NodeSpec) -> None:
        rest.create(self.api, "/api/v1/nodes", self.manifest(spec))
        self.names.add(spec.name)

    def _replace_node(self, spec: NodeSpec) -> None:
        """The Node made to say `spec`: labels, taints, cordon and capacity."""
        wanted = self.manifest(spec)
        current = rest.get(self.api, f"/api/v1/nodes/{spec.name}")
        labels: dict[str, str | None] = dict.fromkeys(current["metadata"].get("labels", {}))
        labels.update(wanted["metadata"]["labels"])
        rest.request(self.api, "PATCH", f"/api/v1/nodes/{spec.name}", {
            "metadata": {"labels": labels, "annotations": wanted["metadata"]["annotations"]},
            "spec": {"taints": wanted["spec"]["taints"] or None,
                     "unschedulable": wanted["spec"]["unschedulable"]}})
        status = {key: wanted["status"][key] for key in ("allocatable", "capacity")}
        rest.request(self.api, "PATCH", f"/api/v1/nodes/{spec.name}/status",
                     {"status": status})

    def _bound(self, view: LiveView, node: str) -> set[str]:
        """Names of the pods the view counts on `node`."""
        return {name.rpartition("/")[2] for name in view.job_ids()
                if node in view.job_nodes(name)}

    @staticmethod
    def _until(view: LiveView, what: str, done: Callable[[], bool],
               deadline_s: float = 30) -> None:
        wait_for(what, lambda: view.sync() >= 0 and done(), deadline_s, poll_s=0.05)


class TestLiveViewConformance(ViewConformance):
    @pytest.fixture
    def factory(self, sandbox: SandboxState) -> Iterator[ViewFactory]:
        made = LiveFactory(sandbox)
        try:
            yield made
        finally:
            made.close()

    # --- the three checks restated for a live view (see the module docstring) -------------

    def test_a_fresh_view_has_idle_ready_nodes_in_cluster_order(self, factory: ViewFactory
                                                                ) -> None:
        assert isinstance(factory, LiveFactory)
        view, pods = self.fresh(factory)
        assert isinstance(view, LiveView)
        assert list(view.cluster.nodes) == [factory.seen(spec) for spec in CLUSTER.nodes]
        assert_consistent(view)
        assert all(amounts(n.allocated) == (0, 0, 0) and n.ready and n.pods == 0
                   for n in view.nodes)
        assert view.nodes[2].free_gpus == (0, 1, 2, 3)
        assert factory.pending_names(view) == [p.task.id for p in pods]
        clock = view.now_s
        assert clock > 0
        view.sync()
        assert view.now_s >= clock

    def test_a_bind_allocates_on_its_node_only_and_leaves_the_pending_queue(
            self, factory: ViewFactory) -> None:
        assert isinstance(factory, LiveFactory)
        view, pods = self.fresh(factory)
        assert isinstance(view, LiveView)
        view = self.applied(factory, view, Bind(pods[1], "n-b"))
        assert isinstance(view, LiveView)
        assert_consistent(view)
        node = view.nodes[B]
        assert amounts(node.allocated) == amounts(pods[1].requests) and node.pods == 1
        assert [amounts(n.allocated) for i, n in enumerate(view.nodes) if i != B] == [
            (0, 0, 0), (0, 0, 0)]
        assert factory.pending_names(view) == [pods[0].task.id, pods[2].task.id,
                                               pods[3].task.id]
        assert node.signals.placed_since_sample.cpu == pods[1].requests.cpu
        job = f"{factory.ns}/{pods[1].task.id}"  # a pod without a Workflow: its own job
        assert list(view.job_nodes(job)) == ["n-b"]

    @pytest.mark.parametrize("change", ["cordon", "taint", "label", "capacity"])
    def test_any_spec_change_makes_a_new_cluster_and_keeps_the_state(
            self, factory: ViewFactory, change: str) -> None:
        assert isinstance(factory, LiveFactory)
        view, pods = self.fresh(factory)
        view = self.applied(factory, view, Bind(pods[1], "n-b"))
        assert isinstance(view, LiveView)
        spec = CLUSTER.nodes[B]
        new = {"cordon": dataclasses.replace(spec, unschedulable=True),
               "taint": dataclasses.replace(spec, taints=(Taint("maintenance", "soon"),)),
               "label": dataclasses.replace(spec, labels=(("disk", "hdd"),)),
               "capacity": dataclasses.replace(spec, allocatable=Resources(12, 48 * GIB)),
               }[change]
        cluster = view.cluster
        view = self.applied(factory, view, Respec(new))
        assert isinstance(view, LiveView)
        assert view.cluster is not cluster and view.cluster.nodes is not cluster.nodes
        assert view.cluster.nodes[B] == factory.seen(new) == view.nodes[B].spec
        assert_consistent(view)
        assert amounts(view.nodes[B].allocated) == amounts(pods[1].requests)
        assert factory.pending_names(view) == [pods[0].task.id, pods[2].task.id,
                                               pods[3].task.id]
