"""LiveView at 1,000 kwok nodes and 5,000 pods: events applied against events produced, the
decision-ready read, the view's memory (targets: >= 10x, <= 1 ms, <= 200 MB).

    .venv/bin/python bench/live_view_speed.py [--dir DIR] [--pods 5000] [--pending 200]
                                              [--workers 8] [--reads 2000] [--keep]

Starts a sandbox of `builtin:scale-1000` with the twin off (or reuses the one running in DIR),
then a LiveView, then creates PODS pods through the API from WORKERS bounded threads, each
bound to a node directly (spec.nodeName, round-robin; kwok runs them, nothing schedules), plus
PENDING pods no scheduler serves, while the main thread syncs the view every 20 ms as a
scheduler would. The API server emits ADDED and kwok's status updates for each pod, and the
nodes' heartbeats all along.

- Produced: every event the watchers received from the first create until the pods' events
  stop (5 s without one), over that wall time.
- Applied: the same events over the CPU time the view spent on them: its watcher threads'
  (reading the stream, parsing JSON, decoding records) plus its syncs'. The ratio is how many
  times faster than the API server emits the view can take events in.
- Read: a scheduler's decision-ready read, at rest with heartbeats flowing: sync(), then
  cluster, nodes, pending, resource_arrays(), ready_mask(), signal_arrays(), changed_nodes();
  p50, p99 and max over READS.
- Memory: the process's resident memory before the view started and once it holds everything
  (after a collection), and the bytes a second view, started under tracemalloc after the load,
  keeps allocated (its caches, the kubernetes client's objects included).

The figures go to bench/out/live_view_speed.json.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import http.client
import json
import ssl
import sys
import tempfile
import threading
import time
import tracemalloc
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from dagpilot.core.config import PhysicsParameters
from dagpilot.core.types import NodeSpec
from dagpilot.live.view import LiveView
from dagpilot.sandbox import components, launcher, rest
from dagpilot.sandbox.errors import SandboxError
from dagpilot.sandbox.layout import Layout
from dagpilot.sandbox.state import SandboxState
from dagpilot.sim import physics

OUT = Path(__file__).resolve().parent / "out"
CLUSTER = "builtin:scale-1000"
NOBODY = "dagpilot-bench-nobody"
QUIET_S = 5.0  # no pod event for this long: the API server is done emitting
PARAMS = PhysicsParameters()


def topology_rtt(a: NodeSpec, b: NodeSpec) -> float:
    return physics.rtt_ms(physics.distance(a, b), PARAMS)


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


class Poster:
    """POSTs over one kept-alive TLS connection per thread (a handshake per pod would cost
    more than the pod)."""

    def __init__(self, state: SandboxState) -> None:
        self.endpoint = components.api_endpoint(Layout(Path(state.kubeconfig).parent),
                                                state.ports["apiserver"])
        self.local = threading.local()

    def post(self, path: str, body: dict[str, Any]) -> None:
        connection = getattr(self.local, "connection", None)
        if connection is None:
            context = self.endpoint.context()
            assert isinstance(context, ssl.SSLContext)
            connection = http.client.HTTPSConnection("127.0.0.1", self.endpoint.port,
                                                     timeout=60, context=context)
            self.local.connection = connection
        connection.request("POST", path, json.dumps(body).encode(),
                           {"Content-Type": "application/json", "Accept": "application/json"})
        reply = connection.getresponse()
        data = reply.read()
        if reply.status >= 300:
            raise RuntimeError(f"POST {path}: HTTP {reply.status}: {data[:200]!r}")


def pod(name: str, node: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "busybox", "resources": {
            "requests": {"cpu": "100m", "memory": "64Mi"}}}],
        "tolerations": [{"operator": "Exists"}]}
    if node is None:
        spec["schedulerName"] = NOBODY
    else:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": {"dagpilot.io/runtime": "3600s"}},
            "spec": spec}


def view_cpu_s(view: LiveView) -> float:
    return view.apply_s + sum(w.health.cpu_s for w in view.watchers)


def events(view: LiveView) -> int:
    return sum(w.health.events for w in view.watchers)


def produce(view: LiveView, state: SandboxState, ns: str, *, pods: int, pending: int,
            workers: int) -> dict[str, Any]:
    nodes = [spec.name for spec in view.cluster.nodes]
    poster = Poster(state)
    path = f"/api/v1/namespaces/{ns}/pods"
    jobs: list[tuple[str, str | None]] = [(f"p-{i:05d}", nodes[i % len(nodes)])
                                          for i in range(pods)]
    jobs += [(f"wait-{i:04d}", None) for i in range(pending)]
    events_before, cpu_before = events(view), view_cpu_s(view)
    pod_watcher = next(w for w in view.watchers if w.resource.value == "pods")
    started = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(poster.post, path, pod(*job)) for job in jobs]
        last_count, last_change = pod_watcher.health.events, time.monotonic()
        while True:
            view.sync()
            count = pod_watcher.health.events
            if count != last_count:
                last_count, last_change = count, time.monotonic()
            if futures[-1].done() and all(f.done() for f in futures) \
                    and time.monotonic() - last_change > QUIET_S:
                break
            time.sleep(0.02)
        for future in futures:
            future.result()  # a failed create is the benchmark's failure
    created_s = time.monotonic() - started
    wall_s = last_change - started
    view.sync()
    produced = events(view) - events_before
    cpu_s = view_cpu_s(view) - cpu_before
    return {"created": len(jobs), "create_wall_s": round(created_s, 1),
            "events": produced, "wall_s": round(wall_s, 2),
            "produced_per_s": round(produced / wall_s, 1), "view_cpu_s": round(cpu_s, 3),
            "applied_per_s": round(produced / cpu_s, 1),
            "ratio": round(wall_s / cpu_s, 2)}


def read_once(view: LiveView, token: int) -> int:
    """A scheduler's decision-ready read; the new change token."""
    view.sync()
    _ = view.cluster, view.nodes, view.pending
    view.resource_arrays()
    view.ready_mask()
    view.signal_arrays()
    return view.changed_nodes(token)[0]


def percentiles(wall: list[float], cpu: list[float]) -> dict[str, float]:
    wall, cpu = sorted(wall), sorted(cpu)

    def at(values: list[float], share: float) -> float:
        return round(values[min(len(values) - 1, int(share * len(values)))] * 1e6, 1)

    return {"p50_us": at(wall, 0.5), "p99_us": at(wall, 0.99), "max_us": at(wall, 1.0),
            "cpu_p50_us": at(cpu, 0.5), "cpu_p99_us": at(cpu, 0.99), "cpu_max_us": at(cpu, 1.0)}


def reads(view: LiveView, count: int) -> dict[str, Any]:
    """At rest (heartbeats arriving between reads), then right after assuming a pending pod
    (pending, allocation and signal arrays all rebuilt), wall and thread CPU time."""
    token = view.changed_nodes(-1)[0]
    rest_wall, rest_cpu = [], []
    for _ in range(count):
        began, began_cpu = time.perf_counter(), time.thread_time()
        token = read_once(view, token)
        rest_wall.append(time.perf_counter() - began)
        rest_cpu.append(time.thread_time() - began_cpu)
        time.sleep(0.002)
    bind_wall, bind_cpu, assumed = [], [], []
    names = [spec.name for spec in view.cluster.nodes]
    for index in range(min(count, len(view.pending))):
        pod = view.pending[0]
        view.assume(pod, names[index % len(names)])
        assumed.append(pod)
        began, began_cpu = time.perf_counter(), time.thread_time()
        token = read_once(view, token)
        bind_wall.append(time.perf_counter() - began)
        bind_cpu.append(time.thread_time() - began_cpu)
    for pod in assumed:
        view.forget(pod)
    return {"reads": count, "at_rest": percentiles(rest_wall, rest_cpu),
            "after_assume": {"reads": len(bind_wall), **percentiles(bind_wall, bind_cpu)}}


def check_current(view: LiveView, ns: str, pods: int, pending: int) -> dict[str, Any]:
    view.sync()
    mine = [p for p in view.pending if (view.pod_key(p) or "").startswith(f"{ns}/")]
    bound = sum(n.pods for n in view.nodes)
    assert len(mine) == pending, f"{len(mine)} of {pending} pending pods in the view"
    assert bound >= pods, f"{bound} bound pods in the view, {pods} created"
    return {"pending_in_view": len(mine), "bound_in_view": bound,
            "nodes": len(view.cluster.nodes), "skipped": dict(view.skipped)}


def traced_view(state: SandboxState) -> dict[str, Any]:
    gc.collect()
    tracemalloc.start()
    baseline = tracemalloc.get_traced_memory()[0]
    view = LiveView.connect(Path(state.kubeconfig), topology_rtt)
    view.start(120)
    view.sync()
    view.pending  # noqa: B018 (built on first read)
    view.signal_arrays()
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - baseline
    tracemalloc.stop()
    pods = sum(n.pods for n in view.nodes) + len(view.pending)
    view.close()
    return {"traced_bytes": kept, "traced_mb": round(kept / 2**20, 1), "pods_held": pods}


def measure(state: SandboxState, ns: str, args: argparse.Namespace) -> dict[str, Any]:
    gc.collect()
    rss_before = rss_bytes()
    view = LiveView.connect(Path(state.kubeconfig), topology_rtt)
    view.start(120)
    figures: dict[str, Any] = {"cluster": CLUSTER, "pods": args.pods, "pending": args.pending}
    figures["events"] = produce(view, state, ns, pods=args.pods, pending=args.pending,
                                workers=args.workers)
    figures["current"] = check_current(view, ns, args.pods, args.pending)
    figures["read"] = reads(view, args.reads)
    gc.collect()
    rss_after = rss_bytes()
    view.close()
    figures["memory"] = {"rss_before_mb": round(rss_before / 2**20, 1),
                         "rss_after_mb": round(rss_after / 2**20, 1),
                         "rss_delta_mb": round((rss_after - rss_before) / 2**20, 1),
                         **traced_view(state)}
    return figures


def delete_namespace(api: rest.Endpoint, ns: str, deadline_s: float = 900.0) -> None:
    """Deletes the benchmark's pods and namespace; a collection DELETE of thousands of pods
    outlasts the API server's request timeout and goes on, so ask until none is left."""
    end = time.monotonic() + deadline_s
    path = f"/api/v1/namespaces/{ns}/pods"
    while time.monotonic() < end:
        with contextlib.suppress(SandboxError):
            rest.request(api, "DELETE", f"{path}?gracePeriodSeconds=0", timeout_s=120)
            if not rest.get(api, f"{path}?limit=1").get("items"):
                break
        time.sleep(2)
    with contextlib.suppress(SandboxError):
        rest.request(api, "DELETE", f"/api/v1/namespaces/{ns}")
        # What the namespace controller (the sandbox runs no controller manager) would do.
        rest.request(api, "PUT", f"/api/v1/namespaces/{ns}/finalize", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns},
            "spec": {"finalizers": []}})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--pending", type=int, default=200)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--keep", action="store_true", help="leave the sandbox running")
    args = parser.parse_args()
    directory = args.dir or Path(tempfile.mkdtemp(prefix="lv-bench-"))
    started = time.monotonic()
    state = launcher.up(CLUSTER, directory, twin=False)
    up_s = time.monotonic() - started
    api = components.api_endpoint(Layout(directory.resolve()), state.ports["apiserver"])
    ns = f"lv-bench-{uuid.uuid4().hex[:6]}"
    rest.create(api, "/api/v1/namespaces",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    try:
        figures = measure(state, ns, args)
        OUT.mkdir(exist_ok=True)
        (OUT / "live_view_speed.json").write_text(json.dumps(figures, indent=2) + "\n")
    finally:
        delete_namespace(api, ns)
        if not args.keep:
            launcher.down(directory)
    json.dump({"sandbox_up_s": round(up_s, 1), **figures}, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
